//! Ingest never panics on damaged input: real traces with random bytes overwritten, deleted or
//! inserted (2 000 mutants, deterministic seed) either ingest (with diagnostics) or fail with an
//! error naming the file; the analyses then run on whatever was ingested. Inputs: real files.

use crate::common;

use profscope::ingest::chrome_json::{ingest_slice, ingest_slice_streamed};

const NASTY: &[u8] = b"{}[]\",:\\ \n0-.eE\x00\xff\xc3tfnu";

#[test]
fn mutated_real_traces_never_panic() {
    let files = [
        "ascend-pt/text/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        "torch-cpu/torch_cpu_tiny_transformer_trace.json",
        "ascend-timeline/mstt-trace_view_prefix_host-only_first16-events.json",
    ];
    let mut rng = common::Lcg(2026);
    for rel in files {
        let orig = std::fs::read(common::samples_dir().join(rel)).unwrap();
        // Small windows of the big files keep the test fast while reaching every code path.
        let base: Vec<u8> = orig[..orig.len().min(60_000)].to_vec();
        for k in 0..700 {
            let mut b = base.clone();
            for _ in 0..1 + rng.next(4) {
                let at = rng.next(b.len());
                match rng.next(3) {
                    0 => b[at] = NASTY[rng.next(NASTY.len())],
                    1 => {
                        b.remove(at);
                    }
                    _ => b.insert(at, NASTY[rng.next(NASTY.len())]),
                }
            }
            let chunk = 1 + rng.next(5_000);
            match ingest_slice(rel, &b, chunk) {
                Ok(t) => {
                    let _ = profscope::registry::run_all(&t, &Default::default());
                    let _ = profscope::analysis::summary::compute(&t);
                }
                Err(e) => assert!(
                    e.to_string().contains(rel),
                    "mutant {k}: error must name the file: {e}"
                ),
            }
            if k % 7 == 0 {
                let block = 1 + rng.next(3_000);
                let _ = ingest_slice_streamed(rel, &b, block, chunk);
            }
        }
    }
}

/// Regression (issue 2): a value that opens an object it never closes made the streamed path
/// re-parse the same buffer forever when the broken event ran past a block boundary.
#[test]
fn r2_streamed_unbalanced_value_terminates() {
    let src = br#"[{"ph": "X", "name": "a", "cat": {oops", "pid": 1, "tid": 1, "ts": 1, "dur": 1}, {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 1}]"#;
    let mapped = ingest_slice("r2.json", src, 16).unwrap();
    for block in [1, 7, 10, 64, 1000] {
        let t = ingest_slice_streamed("r2.json", src, block, 16).unwrap();
        assert_eq!(t.events.len(), mapped.events.len(), "block {block}");
        assert_eq!(t.diagnostics.count("truncated"), 1, "block {block}");
    }
}
