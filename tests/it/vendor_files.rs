//! torch_npu / msprof-analyze summary files on every real sample of their kind
//! (../shared/samples/ascend-pt/text/level{0,1,2}/rank{0,1}_ascend_pt/ASCEND_PROFILER_OUTPUT and
//! the msprof-analyze cluster outputs in ascend-misc): memory_record.csv, operator_memory.csv,
//! op_statistic.csv, step_trace_time.csv, communication.json, communication_matrix.json,
//! cluster_step_trace_time.csv, cluster_communication.json.
//!
//! Expected values were computed with Python's csv / json modules over the same files, walking
//! the documented nesting explicitly (ascend-formats.md section 3: step → kind → op [→ link];
//! cluster: group → step → op → rank), e.g.
//! `sum(round(float(x['Total Reserved(MB)'])*1048576) for x in csv.DictReader(...) if x[...].strip())`.

use profscope::ingest::builder::TablesBuilder;
use profscope::ingest::msprof_csv::read_vendor_file;
use profscope::model::Tables;

const T: &str = "../shared/samples/ascend-pt/text";

fn read(path: &str) -> (u64, Tables) {
    let mut b = TablesBuilder::new();
    let f = b.add_file(path, Default::default());
    let n = read_vendor_file(path, f, &mut b).unwrap_or_else(|e| panic!("{path}: {e}"));
    (n, b.finish())
}

fn out(level: &str, rank: u32, name: &str) -> String {
    format!("{T}/{level}/rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT/{name}")
}

/// Sum of a numeric reference column.
fn col_sum(t: &Tables, col: &str) -> f64 {
    let r = &t.reference;
    (0..r.len())
        .filter(|&i| t.str(r.column[i]) == col)
        .map(|i| r.number[i])
        .sum()
}

fn records(t: &Tables) -> usize {
    t.reference.row.iter().max().map_or(0, |m| *m as usize + 1)
}

#[test]
fn memory_record_rows_per_file() {
    // (level, rank, rows, APP rows)
    for (level, rank, rows) in [
        ("level0", 0, 1003),
        ("level0", 1, 1003),
        ("level1", 0, 1004),
        ("level1", 1, 1004),
        ("level2", 0, 1003),
        ("level2", 1, 1004),
    ] {
        let (n, t) = read(&out(level, rank, "memory_record.csv"));
        assert_eq!(n, rows, "{level} rank {rank}");
        assert_eq!(t.memory.len(), rows as usize);
        assert!(
            t.memory.device.iter().all(|&d| d == rank as i32),
            "Device Type NPU:{rank}"
        );
        assert!(t.diagnostics.is_empty(), "{:?}", t.diagnostics);
    }
    // level1: reserved bytes summed, and APP rows have no Total Allocated (-1).
    for (rank, reserved) in [(0, 1_411_548_520_448i64), (1, 1_411_705_339_904)] {
        let (_, t) = read(&out("level1", rank, "memory_record.csv"));
        assert_eq!(
            t.memory
                .reserved_bytes
                .iter()
                .filter(|&&v| v >= 0)
                .sum::<i64>(),
            reserved
        );
        let m = &t.memory;
        let app: Vec<usize> = (0..m.len())
            .filter(|&i| t.str(m.component[i]) == "APP")
            .collect();
        assert_eq!(app.len(), 14);
        assert!(app.iter().all(|&i| m.allocated_bytes[i] == -1));
        let pta = (0..m.len())
            .filter(|&i| t.str(m.component[i]) == "PTA+GE")
            .count();
        assert_eq!(pta, 495);
    }
}

#[test]
fn operator_memory_rows_per_file() {
    for level in ["level0", "level1", "level2"] {
        for rank in [0, 1] {
            let (n, t) = read(&out(level, rank, "operator_memory.csv"));
            assert_eq!(n, 184, "{level} rank {rank}");
            let m = &t.op_memory;
            assert_eq!(
                m.size_bytes.iter().sum::<i64>(),
                1_495_289_344,
                "{level} rank {rank}"
            );
            assert_eq!(
                m.release_ns.iter().filter(|&&r| r == -1).count(),
                24,
                "never released"
            );
        }
    }
    let (_, t) = read(&out("level1", 0, "operator_memory.csv"));
    assert_eq!(t.str(t.op_memory.name[0]), "aten::empty_strided");
    // `1736408883694624.810\t` (TAB guard) → ns.
    assert_eq!(t.op_memory.allocation_ns[0], 1_736_408_883_694_624_810);
    assert_eq!(t.op_memory.device[0], 0);
}

#[test]
fn op_statistic_and_step_trace_time_as_reference() {
    for (level, rank, total_us, count) in [
        ("level1", 0, 8873.751, 187.0),
        ("level1", 1, 8878.293, 187.0),
        ("level2", 0, 8868.233, 187.0),
        ("level2", 1, 8902.294, 187.0),
    ] {
        let (n, t) = read(&out(level, rank, "op_statistic.csv"));
        assert_eq!(n, 33);
        assert!(
            (col_sum(&t, "Total Time(us)") - total_us).abs() < 1e-6,
            "{level} {rank}"
        );
        assert_eq!(col_sum(&t, "Count"), count);
        assert_eq!(t.str(t.reference.table[0]), "op_statistic.csv");
    }
    for (level, rank, computing, free) in [
        ("level0", 0, 8827.472999999998, 25908.102000000003),
        ("level0", 1, 8813.172999999999, 27172.943000000003),
        ("level1", 0, 8873.756000000001, 25744.050000000003),
        ("level1", 1, 8878.295000000006, 26675.27399999998),
        ("level2", 0, 8868.240000000003, 25032.619),
        ("level2", 1, 8902.300999999998, 26441.689000000002),
    ] {
        let (n, t) = read(&out(level, rank, "step_trace_time.csv"));
        assert_eq!(n, 1);
        assert_eq!(col_sum(&t, "Computing"), computing, "{level} {rank}");
        assert_eq!(col_sum(&t, "Free"), free);
        assert_eq!(col_sum(&t, "Step"), 50.0);
    }
}

#[test]
fn communication_json_records() {
    for (level, rank, elapse_ms) in [
        ("level1", 0, 211.9837554375),
        ("level1", 1, 200.75057093750002),
        ("level2", 0, 199.94655487500003),
        ("level2", 1, 194.91065425),
    ] {
        let (n, t) = read(&out(level, rank, "communication.json"));
        assert_eq!(n, 5, "{level} {rank}");
        assert_eq!(records(&t), 5);
        let got = col_sum(&t, "Communication Time Info/Elapse Time(ms)");
        assert!((got - elapse_ms).abs() < 1e-9, "{got} vs {elapse_ms}");
        // The nesting above a record became text columns.
        let r = &t.reference;
        let steps: Vec<&str> = (0..r.len())
            .filter(|&i| t.str(r.column[i]) == "step")
            .map(|i| t.str(r.text[i]))
            .collect();
        assert_eq!(steps, ["step50"; 5]);
    }
    for (level, size_mb) in [("level1", 1032.662216), ("level2", 1132.835528)] {
        for rank in [0, 1] {
            let (n, t) = read(&out(level, rank, "communication_matrix.json"));
            assert_eq!(n, 48, "{level} {rank}");
            assert!((col_sum(&t, "Transit Size(MB)") - size_mb).abs() < 1e-9);
        }
    }
}

#[test]
fn msprof_analyze_cluster_outputs() {
    for dir in [
        "../shared/samples/ascend-misc/resource/advisor/cluster_analysis_output",
        "../shared/samples/ascend-misc/mstt/mstt_test_resources",
    ] {
        let (n, t) = read(&format!("{dir}/cluster_communication.json"));
        assert_eq!(n, 4, "{dir}");
        assert!(
            (col_sum(&t, "Communication Time Info/Elapse Time(ms)") - 187.011181765625).abs()
                < 1e-9
        );
        let r = &t.reference;
        let groups: Vec<&str> = (0..r.len())
            .filter(|&i| t.str(r.column[i]) == "group")
            .map(|i| t.str(r.text[i]))
            .collect();
        assert!(groups.iter().all(|g| *g == "(0, 1)"), "{groups:?}");
        let (n, t) = read(&format!("{dir}/cluster_step_trace_time.csv"));
        assert_eq!(n, 9);
        assert!((col_sum(&t, "Computing") - 728625.9811093744).abs() < 1e-6);
    }
}

#[test]
fn a_text_root_reads_its_companions() {
    let p = std::path::PathBuf::from(format!("{T}/level1/rank0_ascend_pt"));
    let t = profscope::ingest::ingest_paths(&[p], &Default::default()).unwrap();
    // memory_record.csv: 1004 rows; operator_memory.csv: 184 (as above).
    let m = &t.memory;
    let by_src = |s: &str| (0..m.len()).filter(|&i| t.str(m.source[i]) == s).count();
    assert_eq!(by_src("memory_record.csv"), 1004);
    assert_eq!(t.op_memory.len(), 184);
    let tables: std::collections::BTreeSet<&str> =
        t.reference.table.iter().map(|&s| t.str(s)).collect();
    assert_eq!(
        tables.into_iter().collect::<Vec<_>>(),
        [
            "communication.json",
            "communication_matrix.json",
            "op_statistic.csv",
            "step_trace_time.csv"
        ]
    );
}
