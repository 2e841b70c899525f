//! `profscope export --parquet` on the real ../shared/samples/ascend-pt/db/level1 root: Hive
//! partitions run=<tag>/rank=<n>, one row per event (4,404 and 4,021: the events of the two dbs),
//! and, when a Python with `duckdb` is at hand (PROFSCOPE_PYTHON, e.g. a venv with
//! `pip install duckdb`), DuckDB reads the partitions and its per (rank, op type, task type)
//! kernel count and sum (events with a kernel row, by the kernel's op type and task type) equal msprof-analyze 26.2.0's compute_op_sum output recorded in
//! tests/expected/msprof_analyze_26.2.0.json (see tests/it/msprof_analyze_agreement.rs). Without it
//! the DuckDB part prints SKIPPED.

/// A SKIPPED line written straight to stderr: libtest captures `eprintln!`, not this, so the
/// line shows in a plain `cargo test` run.
macro_rules! skipped {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

use serde_json::Value;
use std::process::Command;

const ROOT: &str = "../shared/samples/ascend-pt/db/level1";

#[test]
fn parquet_partitions_and_duckdb() {
    let dir = std::env::temp_dir().join(format!("profscope-parquet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = crate::common::profscope_command()
        .args(["export", ROOT, "--parquet"])
        .arg(&dir)
        .args(["--run", "level1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let files: Vec<(i64, u64, String)> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rank"].as_i64().unwrap(),
                f["rows"].as_u64().unwrap(),
                f["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        files.iter().map(|f| (f.0, f.1)).collect::<Vec<_>>(),
        [(0, 4404), (1, 4021)]
    );
    for (rank, _, path) in &files {
        assert!(
            path.ends_with(&format!("run=level1/rank={rank}/events-0.parquet")),
            "{path}"
        );
        let head = std::fs::read(path).unwrap();
        assert!(head.starts_with(b"PAR1") && head.ends_with(b"PAR1"));
    }
    let Some(py) = std::env::var("PROFSCOPE_PYTHON").ok() else {
        let _ = std::fs::remove_dir_all(&dir);
        skipped!("SKIPPED DuckDB check: set PROFSCOPE_PYTHON to a python with `duckdb` installed");
        return;
    };
    let glob = format!("{}/**/*.parquet", dir.display());
    let script = format!(
        "import duckdb, json\n\
         con = duckdb.connect()\n\
         q = \"select rank, op_type, kernel_task_type, count(*), sum(dur_ns) from read_parquet('{glob}', hive_partitioning=true) where op_type != '' group by all order by all\"\n\
         rows = con.execute(q).fetchall()\n\
         tot = con.execute(\"select rank, run, count(*) from read_parquet('{glob}', hive_partitioning=true) group by all order by all\").fetchall()\n\
         print(json.dumps({{'ops': [[int(r[0]), r[1], r[2], int(r[3]), int(r[4])] for r in rows], 'totals': [[int(t[0]), t[1], int(t[2])] for t in tot]}}))\n"
    );
    let out = Command::new(&py).arg("-c").arg(&script).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        d["totals"],
        serde_json::json!([[0, "level1", 4404], [1, "level1", 4021]])
    );
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string("tests/expected/msprof_analyze_26.2.0.json").unwrap(),
    )
    .unwrap();
    let want = expected["modes"]["compute_op_sum"]["tables"]["ComputeOpPerRankStatsByOpType"]
        .as_array()
        .unwrap();
    let got = d["ops"].as_array().unwrap();
    assert_eq!(
        got.len(),
        want.len(),
        "groups: duckdb {} vs msprof-analyze {}",
        got.len(),
        want.len()
    );
    for w in want {
        let (rank, op, task) = (
            w["Rank"].as_i64().unwrap(),
            w["OpType"].as_str().unwrap(),
            w["TaskType"].as_str().unwrap(),
        );
        let g = got
            .iter()
            .find(|g| {
                g[0].as_i64() == Some(rank)
                    && (g[1] == op || format!("{}_", g[1].as_str().unwrap()) == op)
                    && g[2] == task
            })
            .unwrap_or_else(|| panic!("({rank}, {op}, {task}) not in DuckDB's result"));
        assert_eq!(g[3].as_f64().unwrap(), w["Count"].as_f64().unwrap(), "{op}");
        assert_eq!(g[4].as_f64().unwrap(), w["SumNs"].as_f64().unwrap(), "{op}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
