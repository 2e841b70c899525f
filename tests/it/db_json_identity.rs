//! One generated run written both as trace_view.json and as the torch_npu db (+ analysis.db)
//! by the same generator calls (`profscope synth --export both`): every analysis gives the same
//! result from either file. Inputs are generated; the expected values are the JSON-side results,
//! which tests/it/synth_truth.rs and tests/it/analyses.rs check against the generator's ground truth.

use crate::common;

use profscope::model::events::NO_ROW;
use profscope::registry::run_all;
use profscope::synth::{Export, SynthOpts};
use serde_json::Value;

/// Drops what names the input rather than describes the run: file paths (`file`, `files`), the
/// file's format and bytes (`format`, `size_bytes`), and the device id / process label (the db
/// states the device; trace_view.json's process metadata does not).
fn strip_identity(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in [
                "file",
                "files",
                "format",
                "size_bytes",
                "device_id",
                "process",
                "source",
            ] {
                m.remove(k);
            }
            m.values_mut().for_each(strip_identity);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_identity),
        _ => {}
    }
}

#[test]
fn every_analysis_is_identical_from_db_and_json() {
    let g = common::generated_with(
        "identity",
        SynthOpts {
            ranks: 2,
            target_bytes: 600_000,
            seed: 7,
            kineto: false,
            export: Export::Both,
            slow: None,
            graph_mode: false,
            capture_apart: false,
        },
    );
    for rt in &g.truth.ranks {
        let json = common::ingest(&g.dir.join(&rt.trace_view));
        let db = common::ingest(&g.dir.join(rt.db.as_ref().expect("db written")));
        let mut a = serde_json::to_value(run_all(&json, &Default::default())).unwrap();
        let mut b = serde_json::to_value(run_all(&db, &Default::default())).unwrap();
        // Not vacuous: the run has bubbles, collectives, decode steps and vendor rows.
        assert!(a["bubbles"][0]["gaps"].as_u64().unwrap() > 10);
        assert!(!a["communication"].as_array().unwrap().is_empty());
        assert!(a["device_time"][0]["vendor"]["free_ns"].as_i64().unwrap() > 0);
        assert!(b["device_time"][0]["vendor"]["free_ns"].as_i64().unwrap() > 0);
        // analysis.db's StepTraceTime (µs) is the generator's vendor totals; read back into the
        // reference table it equals the vendor rows' own sums.
        let r = &db.reference;
        let cell = |col: &str| {
            (0..r.len())
                .find(|&i| db.str(r.table[i]) == "StepTraceTime" && db.str(r.column[i]) == col)
                .map(|i| (r.number[i] * 1000.0).round() as i64)
        };
        let vendor = &b["device_time"][0]["vendor"];
        assert_eq!(cell("computing"), vendor["computing_ns"].as_i64());
        assert_eq!(cell("free"), vendor["free_ns"].as_i64());
        // Op types need kernel details, which only the db has; the generator's op type is the
        // kernel name, so they equal its per-kernel truth.
        assert_eq!(a["op_types"], serde_json::json!([]));
        let ops = b.as_object_mut().unwrap().remove("op_types").unwrap();
        a.as_object_mut().unwrap().remove("op_types");
        for row in ops[0]["rows"].as_array().unwrap() {
            let k = &rt.kernels[row["op_type"].as_str().unwrap()];
            assert_eq!(row["stats"]["count"].as_u64(), Some(k.count));
            assert_eq!(row["stats"]["sum_ns"].as_i64(), Some(k.dur_ns));
        }
        // The self-audit reads more vendor sources from the db (analysis.db StepTraceTime
        // beside OVERLAP_ANALYSIS): both agree on every check; the db checks one source more.
        for (side, sources) in [
            (&a, vec!["Overlap Analysis"]),
            (&b, vec!["Overlap Analysis", "analysis.db StepTraceTime"]),
        ] {
            let v = &side["vendor_agreement"];
            assert_eq!(v["devices_checked"], 1);
            assert_eq!(v["devices_disagreeing"], 0);
            assert_eq!(v["sources"], serde_json::json!(sources));
        }
        // Efficiency models need the kernels' shapes, which only the db has (as op types
        // above): the JSON side models nothing, the db side's numbers are checked against the
        // oracle in tests/it/efficiency.rs. Its roofline_gap finding comes from them.
        let modeled = |v: &Value| -> u64 {
            v["efficiency"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["modeled_tasks"].as_u64().unwrap())
                .sum()
        };
        assert_eq!(modeled(&a), 0);
        for side in [&mut a, &mut b] {
            let m = side.as_object_mut().unwrap();
            m.remove("efficiency");
            m["advisor"]["findings"]
                .as_array_mut()
                .unwrap()
                .retain(|f| f["rule"] != "roofline_gap");
            m.remove("vendor_agreement");

            // Host events differ by format (the db's CANN API rows, the JSON's flows); each
            // file's evidence is checked in tests/it/evidence.rs.
            m.remove("evidence");
            // Advisor evidence lines name the file read (trace_view.json or the db); the rest
            // of each finding (rule, statement, time at stake) must agree.
            for f in m["advisor"]["findings"].as_array_mut().unwrap() {
                f.as_object_mut().unwrap().remove("evidence");
            }
        }
        strip_identity(&mut a);
        strip_identity(&mut b);
        assert_eq!(a, b, "rank {}", rt.rank);

        // Every kernel the generator wrote reaches a kernels row; tasks with the same details
        // share one row, so the table holds each distinct signature once.
        let kernels: u64 = rt.kernels.values().map(|k| k.count).sum();
        let linked = db.events.kernel.iter().filter(|&&k| k != NO_ROW).count();
        assert_eq!(linked as u64, kernels, "COMPUTE_TASK_INFO rows");
        let distinct: std::collections::HashSet<_> =
            (0..db.kernels.len()).map(|i| db.kernels.row(i)).collect();
        assert_eq!(distinct.len(), db.kernels.len(), "one row per signature");
        assert!(db.kernels.len() < kernels as usize / 10, "rows are shared");
        assert_eq!(db.steps.len(), 0, "the generator writes no STEP_TIME");
        assert_eq!(
            db.memory.len() as u64,
            rt.counters,
            "one NPU_MEM row per APP/HBM counter sample"
        );
    }
}

/// A root written with both exports (torch_npu `export_type=both`) is one capture per rank: each
/// rank is read once, from its db, and the trace_view.json is listed as skipped, not added.
#[test]
fn root_with_both_exports_reads_each_rank_once() {
    let g = common::generated_with(
        "both-exports",
        SynthOpts {
            ranks: 2,
            target_bytes: 300_000,
            seed: 11,
            kineto: false,
            export: Export::Both,
            slow: None,
            graph_mode: false,
            capture_apart: false,
        },
    );
    let root = common::ingest(&g.dir);
    assert_eq!(root.files.len(), 2, "one file per rank");
    assert!(root.files.path.iter().all(|p| p.ends_with(".db")));
    assert_eq!(root.diagnostics.count("input_skipped"), 2);
    // Same device numbers as reading each rank's db alone: nothing counted twice.
    for (k, rt) in g.truth.ranks.iter().enumerate() {
        let alone = common::ingest(&g.dir.join(rt.db.as_ref().unwrap()));
        let a = run_all(&alone, &Default::default());
        let r = run_all(&root, &Default::default());
        let d = r
            .device_time
            .iter()
            .find(|d| d.device.rank == rt.rank as i32)
            .unwrap();
        assert_eq!(d.computing_ns, a.device_time[0].computing_ns, "rank {k}");
        assert_eq!(d.free_ns, a.device_time[0].free_ns, "rank {k}");
        assert_eq!(
            d.computing_ns,
            rt.kernels.values().map(|c| c.dur_ns).sum::<i64>()
        );
    }
}
