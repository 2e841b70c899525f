//! The JSON report of every real sample root and of the demo, byte for byte, against the report
//! the binary wrote at commit 902331d (before the redesign of issue 22), with the three timing
//! fields (`ingest_ms`, `analysis_ms`, `wall_ms`) masked. Inputs: the real roots and files of
//! ../shared/samples (listed in `ROOTS`) and the generated demo (fixtures/demo).
//!
//! This is a golden-master test, not an oracle: the numbers in these reports are checked against
//! peers and independent computations by the other modules (msprof_analyze_agreement,
//! hta_agreement, vendor_agreement, real_traces, …). What it asserts is that a change meant to be
//! behaviour-neutral (moving code between layers, enums for strings, one driver) leaves every
//! report unchanged, down to field order and float formatting. Two runs of the same binary give
//! identical masked reports (checked when the files were made). A change that is meant to alter
//! a report re-blesses with `BLESS=1 cargo test --release --test it report_identity::` and says
//! why in its commit.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Roots and files, relative to the crate root. Every one is a real capture except the demo.
const ROOTS: &[&str] = &[
    "fixtures/demo",
    "../shared/samples/ascend-pt/db/level0",
    "../shared/samples/ascend-pt/db/level1",
    "../shared/samples/ascend-pt/db/level2",
    "../shared/samples/ascend-pt/text/level0",
    "../shared/samples/ascend-pt/text/level1",
    "../shared/samples/ascend-pt/text/level2",
    "../shared/samples/ascend-pt/msprof_0.db",
    "../shared/samples/ascend-msprof-legacy/PROF_000001_20230818142704322_COJGGGCANRMICFBC",
    "../shared/samples/ascend-msprof-legacy/PROF_000001_20230818142704567_GQFAMHBKGODKJMLA",
    "../shared/samples/ascend-misc/mstt",
    "../shared/samples/torch-cpu/torch_cpu_tiny_transformer_trace.json.gz",
    "../shared/samples/ascend-timeline/mstt-trace_view_prefix_host-only_first16-events.json",
    "../shared/samples/torch-traces/amd_trace",
    "../shared/samples/torch-traces/call_stack",
    "../shared/samples/torch-traces/cpu_only",
    "../shared/samples/torch-traces/critical_path",
    "../shared/samples/torch-traces/cupti_profiler",
    "../shared/samples/torch-traces/df_index_resolver",
    "../shared/samples/torch-traces/distributed_info_unavailable",
    "../shared/samples/torch-traces/execution_trace",
    "../shared/samples/torch-traces/mixed_files",
    "../shared/samples/torch-traces/mtia_inference_trace",
    "../shared/samples/torch-traces/mtia_trace_single_rank",
    "../shared/samples/torch-traces/nccl_parser_config",
    "../shared/samples/torch-traces/negative_queue_length_values_check",
    "../shared/samples/torch-traces/ns_resolution_trace",
    "../shared/samples/torch-traces/rank_non_gpu",
    "../shared/samples/torch-traces/rank_unavailable",
    "../shared/samples/torch-traces/timeline_analysis",
    "../shared/samples/torch-traces/trace_compare",
    "../shared/samples/torch-traces/trace_diff",
    "../shared/samples/torch-traces/trace_file_list",
    "../shared/samples/torch-traces/trace_filter",
    "../shared/samples/torch-traces/triton_example",
    "../shared/samples/torch-traces/with_gpu_user_annotation",
];

const TIMING_KEYS: &[&str] = &["\"ingest_ms\": ", "\"analysis_ms\": ", "\"wall_ms\": "];

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn expected_file(root: &str) -> PathBuf {
    let name: String = root
        .trim_start_matches("../shared/samples/")
        .chars()
        .map(|c| if c == '/' || c == '.' { '_' } else { c })
        .collect();
    crate_root().join(format!("tests/expected/reports/{name}.json.gz"))
}

/// The report with each timing field's value replaced by `null` (the report is pretty-printed,
/// one field per line; a trailing comma is kept).
fn masked(report: &str) -> String {
    let mut out = String::with_capacity(report.len());
    for line in report.lines() {
        let trimmed = line.trim_start();
        match TIMING_KEYS.iter().find(|k| trimmed.starts_with(**k)) {
            Some(key) => {
                let indent = &line[..line.len() - trimmed.len()];
                let comma = if trimmed.ends_with(',') { "," } else { "" };
                out.push_str(&format!("{indent}{key}null{comma}"));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

fn report_of(root: &str) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_profscope"))
        .current_dir(crate_root())
        .args(["analyze", root, "--format", "json", "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "analyze {root} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    masked(&String::from_utf8(out.stdout).unwrap())
}

fn read_gz(path: &Path) -> String {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    s
}

fn write_gz(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::best(),
    );
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap();
}

/// The first line that differs, with the two lines and the key path above it.
fn first_difference(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<_>, Vec<_>) = (expected.lines().collect(), actual.lines().collect());
    let at = e
        .iter()
        .zip(&a)
        .position(|(x, y)| x != y)
        .unwrap_or(e.len().min(a.len()));
    let context: Vec<&str> = e[at.saturating_sub(6)..at].to_vec();
    format!(
        "line {} (expected {} lines, got {}):\n  …{}\n  expected: {}\n  actual:   {}",
        at + 1,
        e.len(),
        a.len(),
        context.join("\n  …"),
        e.get(at).unwrap_or(&"<end>"),
        a.get(at).unwrap_or(&"<end>")
    )
}

#[test]
fn every_sample_report_is_unchanged() {
    let bless = std::env::var("BLESS").is_ok_and(|v| v == "1");
    let mut changed = Vec::new();
    for root in ROOTS {
        assert!(crate_root().join(root).exists(), "{root} is missing");
        let actual = report_of(root);
        let file = expected_file(root);
        if bless {
            write_gz(&file, &actual);
            continue;
        }
        let expected = read_gz(&file);
        if expected != actual {
            changed.push(format!("{root}: {}", first_difference(&expected, &actual)));
        }
    }
    assert!(
        changed.is_empty(),
        "{} of {} reports changed (re-bless with BLESS=1 only when the change is meant):\n{}",
        changed.len(),
        ROOTS.len(),
        changed.join("\n\n")
    );
}

#[test]
fn masking_touches_only_the_timing_fields() {
    let report = "{\n  \"ingest_ms\": 7.6,\n  \"x_ms\": 3,\n  \"wall_ms\": 9.1\n}\n";
    assert_eq!(
        masked(report),
        "{\n  \"ingest_ms\": null,\n  \"x_ms\": 3,\n  \"wall_ms\": null\n}\n"
    );
}
