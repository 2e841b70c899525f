//! The generator's output, ingested, reproduces exactly what the generator says it injected
//! (ground_truth.json is counted by the generator as it writes, not by re-reading its files).
//! Inputs: generated (profscope synth), 2 ranks, small.

use crate::common;

use crate::common::*;
use profscope::model::{Category, ProcessRole};
use profscope::synth::{SynthOpts, generate};
use std::collections::BTreeMap;

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("profscope-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn ingest_of_generated_root_equals_ground_truth() {
    let run = common::generated("synth", 2, 300_000, 5, true);
    let (dir, truth) = (&run.dir, &run.truth);
    for rt in &truth.ranks {
        let t = ingest(&dir.join(&rt.trace_view));
        assert_eq!(t.files.rank[0], rt.rank as i32);
        assert_eq!(x_by_process(&t), rt.x_events_by_process, "rank {}", rt.rank);
        let sums = category_sums(&t);
        let want: BTreeMap<String, (u64, i64)> = rt
            .by_category
            .iter()
            .map(|(k, v)| (k.clone(), (v.count, v.dur_ns)))
            .collect();
        assert_eq!(
            sums, want,
            "rank {}: (events, dur_ns) per category",
            rt.rank
        );

        let mut streams: BTreeMap<i32, (u64, i64)> = BTreeMap::new();
        let mut kernels: BTreeMap<String, (u64, i64)> = BTreeMap::new();
        let mut comm = (0u64, 0i64);
        for i in 0..t.events.len() {
            if t.event_role(i) != ProcessRole::AscendHardware {
                continue;
            }
            let s = streams.entry(t.events.stream.at(i)).or_default();
            s.0 += 1;
            s.1 += t.events.dur_ns.at(i);
            match t.events.category[i] {
                Category::ComputeKernel => {
                    let k = kernels.entry(t.event_name(i).to_string()).or_default();
                    k.0 += 1;
                    k.1 += t.events.dur_ns.at(i);
                }
                Category::CommKernel => {
                    comm.0 += 1;
                    comm.1 += t.events.dur_ns.at(i);
                }
                _ => {}
            }
        }
        let want_streams: BTreeMap<i64, (u64, i64)> = rt
            .streams
            .iter()
            .map(|(k, v)| (*k, (v.count, v.dur_ns)))
            .collect();
        assert_eq!(
            streams
                .iter()
                .map(|(k, v)| (*k as i64, *v))
                .collect::<BTreeMap<i64, (u64, i64)>>(),
            want_streams,
            "rank {}: per-stream busy",
            rt.rank
        );
        let want_k: BTreeMap<String, (u64, i64)> = rt
            .kernels
            .iter()
            .map(|(k, v)| (k.clone(), (v.count, v.dur_ns)))
            .collect();
        assert_eq!(kernels, want_k);
        assert_eq!(comm, (rt.comm_kernels.count, rt.comm_kernels.dur_ns));
        assert_eq!(t.counters.len() as u64, rt.counters);
        assert_eq!(t.flows.len() as u64, rt.flows);
        let lo = *t.events.ts_ns.iter().min().unwrap();
        let hi = (0..t.events.len())
            .map(|i| t.events.end_ns(i))
            .max()
            .unwrap();
        assert_eq!((lo, hi), (rt.window_start_ns, rt.window_end_ns));
        assert!(
            t.diagnostics.is_empty(),
            "generated traces are clean: {:?}",
            t.diagnostics.iter().collect::<Vec<_>>()
        );

        let k = ingest(&dir.join(rt.kineto.as_ref().unwrap()));
        assert_eq!(k.files.rank[0], rt.rank as i32, "distributedInfo.rank");
        let mut by_cat: BTreeMap<String, u64> = BTreeMap::new();
        for i in 0..k.events.len() {
            *by_cat
                .entry(k.str(k.events.cat.at(i)).to_string())
                .or_default() += 1;
        }
        assert_eq!(by_cat, rt.kineto_x_by_cat);
    }
}

#[test]
fn generator_is_deterministic() {
    let (a, b) = (tmp("det-a"), tmp("det-b"));
    let o = SynthOpts {
        ranks: 1,
        target_bytes: 50_000,
        seed: 9,
        kineto: false,
        export: Default::default(),
        slow: None,
        graph_mode: false,
        capture_apart: false,
    };
    generate(&a, &o).unwrap();
    generate(&b, &o).unwrap();
    let rel = "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json";
    assert_eq!(
        std::fs::read(a.join(rel)).unwrap(),
        std::fs::read(b.join(rel)).unwrap()
    );
    std::fs::remove_dir_all(&a).unwrap();
    std::fs::remove_dir_all(&b).unwrap();
}
