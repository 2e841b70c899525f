//! The named queries of `queries/` against their expected rows (tests/sql/<query>.slt, one block
//! per fixture: the real db/level0, db/level1, db/level2 and text/level1 roots, and the generated
//! demo root).
//!
//! The expected rows were produced by DuckDB (an engine independent of profscope) over
//! `profscope export --parquet` of each fixture (tests/tools/bless_sql_expected.py). Here they are
//! checked three ways:
//! * against `profscope analyze` of the same fixture: every number of every row equals the Rust
//!   analysis it restates (top_events, composition, communication, device_time, bubbles);
//! * against DuckDB over a fresh Parquet export, when PROFSCOPE_PYTHON names a Python with
//!   `duckdb` (SKIPPED otherwise);
//! * against `profscope query` (polars) in a build with `--features sql`; a default build instead
//!   checks that `query` says how to get the engine.

/// A SKIPPED line written straight to stderr: libtest captures `eprintln!`, not this, so the
/// line shows in a plain `cargo test` run.
macro_rules! skipped {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const FIXTURES: &[(&str, &str)] = &[
    ("level0", "../shared/samples/ascend-pt/db/level0"),
    ("level1", "../shared/samples/ascend-pt/db/level1"),
    ("level2", "../shared/samples/ascend-pt/db/level2"),
    ("text-level1", "../shared/samples/ascend-pt/text/level1"),
    ("demo", "fixtures/demo"),
];

struct Block {
    query: String,
    fixture: String,
    types: Vec<char>,
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

fn blocks() -> Vec<Block> {
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir("tests/sql")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .collect();
    files.sort();
    for f in files {
        let query = f.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&f).unwrap();
        for chunk in text.split("\n\n") {
            let mut lines = chunk.lines().filter(|l| !l.is_empty());
            let Some(head) = lines.find(|l| l.starts_with("query ")) else {
                continue;
            };
            let mut h = head.split(' ').skip(1);
            let types: Vec<char> = h.next().unwrap().chars().collect();
            let fixture = h.next().unwrap().to_string();
            let columns: Vec<String> = lines
                .next()
                .unwrap()
                .trim_start_matches("# ")
                .split('\t')
                .map(String::from)
                .collect();
            assert_eq!(lines.next(), Some("----"), "{}", f.display());
            let rows: Vec<Vec<String>> = lines
                .map(|l| l.split('\t').map(String::from).collect())
                .collect();
            for r in &rows {
                assert_eq!(r.len(), types.len(), "{}: {r:?}", f.display());
            }
            out.push(Block {
                query: query.clone(),
                fixture,
                types,
                columns,
                rows,
            });
        }
    }
    out
}

fn profscope() -> Command {
    crate::common::profscope_command()
}

fn root(fixture: &str) -> &'static str {
    FIXTURES.iter().find(|f| f.0 == fixture).unwrap().1
}

/// Compares a result (JSON cells) with expected rows: I exact, R within 1e-9 relative, T exact.
fn check(b: &Block, got_columns: &[String], got: &[Vec<Value>], engine: &str) {
    let at = format!("{engine}: {} on {}", b.query, b.fixture);
    assert_eq!(got_columns, b.columns.as_slice(), "{at}: columns");
    assert_eq!(got.len(), b.rows.len(), "{at}: row count");
    for (k, (g, e)) in got.iter().zip(&b.rows).enumerate() {
        for (c, ((gv, ev), ty)) in g.iter().zip(e).zip(&b.types).enumerate() {
            let col = &b.columns[c];
            match ty {
                'I' => assert_eq!(
                    gv.as_i64().map(|v| v.to_string()).as_deref(),
                    Some(ev.as_str()),
                    "{at}: row {k} {col}"
                ),
                'R' => {
                    let (g, e) = (gv.as_f64().unwrap(), ev.parse::<f64>().unwrap());
                    assert!(
                        (g - e).abs() <= 1e-9 * e.abs().max(1.0),
                        "{at}: row {k} {col}: {g} vs {e}"
                    );
                }
                _ => assert_eq!(
                    gv.as_str()
                        .map(String::from)
                        .unwrap_or_else(|| gv.to_string()),
                    *ev,
                    "{at}: row {k} {col}"
                ),
            }
        }
    }
}

#[test]
fn every_named_query_has_expected_rows_on_every_fixture() {
    let names: Vec<&str> = profscope::query::named::NAMED
        .iter()
        .map(|n| n.name)
        .collect();
    let mut files: Vec<String> = std::fs::read_dir("queries")
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    files.sort();
    let stems: Vec<String> = files
        .iter()
        .map(|f| {
            f.strip_suffix(".sql")
                .expect("only .sql files in queries/")
                .to_string()
        })
        .collect();
    assert_eq!(stems, names, "queries/ and query::named::NAMED differ");
    for n in profscope::query::named::NAMED {
        assert!(
            n.sql.starts_with(&format!("-- {}: ", n.name)),
            "{}: header must start with `-- {}: <summary>`",
            n.name,
            n.name
        );
        assert!(n.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
    }
    let b = blocks();
    for n in &names {
        for (fx, _) in FIXTURES {
            let found: Vec<&Block> = b
                .iter()
                .filter(|x| x.query == *n && x.fixture == *fx)
                .collect();
            assert_eq!(found.len(), 1, "{n} on {fx}");
            assert!(!found[0].rows.is_empty(), "{n} on {fx}: no rows");
        }
    }
    // `--list` works in every build.
    let o = profscope().args(["query", "--list"]).output().unwrap();
    assert!(o.status.success());
    let listed = String::from_utf8(o.stdout).unwrap();
    for n in &names {
        assert!(listed.lines().any(|l| l.starts_with(n)), "{listed}");
    }
}

/// One fixture's `analyze --format json` analyses.
fn analyses(fixture: &str) -> Value {
    let o = profscope()
        .args(["analyze", root(fixture), "--format", "json", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice::<Value>(&o.stdout).unwrap()["analyses"].clone()
}

/// The entry of `list` for the device of `row` (rank and process columns).
fn device<'a>(
    list: &'a Value,
    b: &Block,
    row: &[String],
    extra: impl Fn(&Value) -> bool,
) -> &'a Value {
    let col = |n: &str| &row[b.columns.iter().position(|c| c == n).unwrap()];
    let rank: i64 = col("rank").parse().unwrap();
    let process = col("process");
    let hits: Vec<&Value> = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| {
            d["device"]["rank"].as_i64() == Some(rank)
                && d["device"]["process"].as_str() == Some(process.as_str())
                && extra(d)
        })
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "{} {}: device rank {rank} {process}",
        b.query,
        b.fixture
    );
    hits[0]
}

/// Expected cell `name` of `row` equals the analysis value `v` (numbers within 1e-9 relative).
fn same(b: &Block, row: &[String], name: &str, v: &Value) {
    let k = b
        .columns
        .iter()
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    let e = &row[k];
    let ok = match v {
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string() == *e,
        Value::Number(n) => {
            let (g, e) = (n.as_f64().unwrap(), e.parse::<f64>().unwrap());
            (g - e).abs() <= 1e-9 * e.abs().max(1.0)
        }
        Value::String(s) => s == e,
        _ => false,
    };
    assert!(
        ok,
        "{} on {}: {name} = {e} in the expected rows, {v} in analyze",
        b.query, b.fixture
    );
}

#[test]
fn expected_rows_restate_the_rust_analyses() {
    let all = blocks();
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    for (fx, _) in FIXTURES {
        let a = analyses(fx);
        for b in all.iter().filter(|b| b.fixture == *fx) {
            // Rows per device, in order, for the per-device ranked queries.
            let mut per_device: BTreeMap<(String, String), usize> = BTreeMap::new();
            for row in &b.rows {
                let key = (row[1].clone(), row[2].clone());
                let pos = *per_device.entry(key).and_modify(|p| *p += 1).or_insert(0);
                match b.query.as_str() {
                    "top_kernels" => {
                        let d = device(&a["top_events"], b, row, |d| d["subset"] == "compute");
                        let s = &d["by_sum"][pos];
                        same(b, row, "pos", &Value::from(pos as i64 + 1));
                        for (col, field) in [
                            ("name", "name"),
                            ("count", "count"),
                            ("sum_ns", "sum_ns"),
                            ("max_ns", "max_ns"),
                            ("min_ns", "min_ns"),
                            ("mean_ns", "mean_ns"),
                            ("pct_of_compute", "pct_of_total"),
                        ] {
                            same(b, row, col, &s[field]);
                        }
                    }
                    "stream_composition" => {
                        let d = device(&a["composition"], b, row, |_| true);
                        let s = &d["streams"][pos];
                        for f in ["stream", "kernels", "compute_ns", "pct_of_compute"] {
                            same(b, row, f, &s[f]);
                        }
                    }
                    "communication_share" => {
                        let d = device(&a["communication"], b, row, |_| true);
                        same(b, row, "comm_kernels_source", &d["comm_kernels_source"]);
                        for (prefix, field) in [
                            ("comm_kernels", "comm_kernels"),
                            ("event_and_mem_waits", "event_and_mem_waits"),
                            ("notify_wait", "notify_wait"),
                            ("data_movement", "data_movement"),
                        ] {
                            same(b, row, &format!("{prefix}_count"), &d[field]["count"]);
                            same(b, row, &format!("{prefix}_sum_ns"), &d[field]["sum_ns"]);
                            same(b, row, &format!("{prefix}_pct"), &d[field]["pct"]);
                        }
                        same(b, row, "comm_kernels_max_ns", &d["comm_kernels"]["max_ns"]);
                        same(b, row, "compute_kernel_ns", &d["compute_kernel_ns"]);
                        same(b, row, "device_task_ns", &d["device_task_ns"]);
                    }
                    "step_breakdown" => {
                        let d = device(&a["device_time"], b, row, |_| true);
                        for f in [
                            "window_start_ns",
                            "window_end_ns",
                            "window_ns",
                            "computing_ns",
                            "communication_ns",
                            "overlapped_ns",
                            "communication_not_overlapped_ns",
                            "free_ns",
                            "computing_pct_of_window",
                            "communication_not_overlapped_pct_of_window",
                            "free_pct_of_window",
                        ] {
                            same(b, row, f, &d[f]);
                        }
                    }
                    "bubbles" => {
                        let d = device(&a["bubbles"], b, row, |_| true);
                        assert_eq!(d["min_gap_ns"], 1000);
                        for f in ["window_ns", "gaps", "idle_ns", "idle_pct_of_window"] {
                            same(b, row, f, &d[f]);
                        }
                        let largest = d["largest"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|g| g["dur_ns"].as_i64().unwrap())
                            .max()
                            .unwrap_or(0);
                        same(b, row, "largest_gap_ns", &Value::from(largest));
                        let h = d["histogram"].as_array().unwrap();
                        // Bucket 0 is [0, 1 us): empty at min_gap 1 us.
                        assert_eq!(h[0]["count"], 0);
                        for (k, col) in [
                            "gaps_1us_10us",
                            "gaps_10us_100us",
                            "gaps_100us_1ms",
                            "gaps_1ms_10ms",
                            "gaps_10ms_up",
                        ]
                        .iter()
                        .enumerate()
                        {
                            same(b, row, col, &h[k + 1]["count"]);
                        }
                    }
                    "launch_latency" => {
                        let d = device(&a["dispatch"], b, row, |_| true);
                        assert_ne!(d["link"], "flow", "flow links have no SQL row");
                        same(b, row, "tasks", &d["tasks"]);
                        same(b, row, "linked_tasks", &d["linked_tasks"]);
                        same(b, row, "calls", &d["latency"]["count"]);
                        same(b, row, "mean_latency_ns", &d["latency"]["mean_ns"]);
                        same(b, row, "max_latency_ns", &d["latency"]["max_ns"]);
                        same(b, row, "negative_calls", &d["latency"]["negative"]);
                    }
                    other => panic!("no analysis mapping for query `{other}`: add one here"),
                }
                *checked.entry(b.query.clone()).or_default() += 1;
            }
            // Every device of the analysis has its rows (no device left out by the SQL).
            let devices = a["device_time"].as_array().unwrap().len();
            assert_eq!(per_device.len(), devices, "{} on {fx}: devices", b.query);
        }
    }
    assert_eq!(
        checked.len(),
        profscope::query::named::NAMED.len(),
        "{checked:?}"
    );
}

/// `profscope export --parquet` of a fixture into a fresh directory of its own (tests run in
/// parallel), run tag = fixture name.
fn export(fixture: &str, engine: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "profscope-sql-{}-{engine}-{fixture}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let o = profscope()
        .args([
            "export",
            root(fixture),
            "--quiet",
            "--run",
            fixture,
            "--parquet",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir
}

#[test]
fn duckdb_over_parquet_returns_the_expected_rows() {
    match std::env::var("PROFSCOPE_PYTHON") {
        Ok(py) => engine_over_parquet(&py, "tests/tools/duckdb_query.py", "duckdb"),
        Err(_) => skipped!(
            "SKIPPED DuckDB check: set PROFSCOPE_PYTHON to a python with `duckdb` installed"
        ),
    }
}

/// Spark SQL in local mode (docs/scale.md): slow to start (about 30 s of JVM), so it has its own
/// variable.
#[test]
fn spark_over_parquet_returns_the_expected_rows() {
    match std::env::var("PROFSCOPE_SPARK_PYTHON") {
        Ok(py) => engine_over_parquet(&py, "tests/tools/spark_query.py", "spark"),
        Err(_) => skipped!(
            "SKIPPED Spark check: set PROFSCOPE_SPARK_PYTHON to a python with `pyspark` (and a JDK 17+)"
        ),
    }
}

/// Runs every named query with `script` (duckdb_query.py or spark_query.py) over a fresh Parquet
/// export of each fixture and compares with the expected rows.
fn engine_over_parquet(py: &str, script: &str, engine: &str) {
    let all = blocks();
    for (fx, _) in FIXTURES {
        let dir = export(fx, engine);
        let queries: Vec<String> = profscope::query::named::NAMED
            .iter()
            .map(|n| format!("queries/{}.sql", n.name))
            .collect();
        let o = Command::new(py)
            .arg(script)
            .arg(&dir)
            .args(&queries)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let got: Value = serde_json::from_slice(&o.stdout).unwrap();
        for b in all.iter().filter(|b| b.fixture == *fx) {
            let r = &got[format!("queries/{}.sql", b.query)];
            let cols: Vec<String> = r["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect();
            let rows: Vec<Vec<Value>> = r["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_array().unwrap().clone())
                .collect();
            check(b, &cols, &rows, engine);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `profscope query ... --format json`, parsed; panics with stderr on failure.
#[cfg(feature = "sql")]
fn query_json(args: &[&str]) -> Value {
    let o = profscope()
        .arg("query")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[cfg(feature = "sql")]
fn columns_rows(v: &Value) -> (Vec<String>, Vec<Vec<Value>>) {
    (
        v["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect(),
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_array().unwrap().clone())
            .collect(),
    )
}

#[cfg(feature = "sql")]
#[test]
fn profscope_query_returns_the_expected_rows() {
    for b in blocks() {
        let v = query_json(&[
            root(&b.fixture),
            "--query",
            &b.query,
            "--run",
            &b.fixture,
            "--limit",
            "0",
        ]);
        assert_eq!(v["query"], b.query.as_str());
        assert_eq!(v["truncated"], false);
        assert_eq!(v["total_rows"].as_u64(), Some(b.rows.len() as u64));
        let (cols, rows) = columns_rows(&v);
        check(&b, &cols, &rows, "profscope query");
    }
}

#[cfg(feature = "sql")]
#[test]
fn query_tables_limits_files_and_errors() {
    let level1 = root("level1");
    // events: 4,404 + 4,021 rows (the two dbs' events, as tests/it/export_parquet.rs counts them);
    // steps: STEP_TIME has one row per db, id 50
    // (`sqlite3 'file:<db>?immutable=1' 'select id from STEP_TIME'`).
    let v = query_json(&[
        level1,
        "--sql",
        "SELECT name, ts_ns FROM events ORDER BY ts_ns",
        "--limit",
        "5",
    ]);
    assert_eq!(v["total_rows"], 8425);
    assert_eq!(v["rows"].as_array().unwrap().len(), 5);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["tables"][0]["rows"], 8425);
    // Only the columns a query names are built; COUNT(*) still counts every row.
    let v = query_json(&[level1, "--sql", "SELECT COUNT(*) AS n FROM events"]);
    assert_eq!(v["rows"], serde_json::json!([[8425]]));
    let v = query_json(&[
        level1,
        "--sql",
        "SELECT rank, step, source FROM steps ORDER BY rank",
    ]);
    assert_eq!(
        v["rows"],
        serde_json::json!([[0, 50, "STEP_TIME"], [1, 50, "STEP_TIME"]])
    );
    // SELECT * has the column names DuckDB gives the Parquet export (partition columns last).
    let v = query_json(&[level1, "--sql", "SELECT * FROM events LIMIT 1"]);
    let (cols, _) = columns_rows(&v);
    let mut want: Vec<String> = profscope::export::event_view::COLUMNS
        .iter()
        .map(|c| c.0.to_string())
        .collect();
    want.extend(["rank".to_string(), "run".to_string()]);
    assert_eq!(cols, want);
    assert_eq!(
        v["run"], "level1",
        "default run tag: the input folder's name"
    );
    // A .sql file as a positional argument.
    let v = query_json(&[level1, "queries/stream_composition.sql", "--run", "level1"]);
    assert_eq!(v["total_rows"], 4);
    // Table and CSV output.
    let o = profscope()
        .args(["query", level1, "--query", "bubbles", "--format", "csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8(o.stdout).unwrap();
    assert!(
        csv.starts_with("run,rank,process,window_ns,gaps,idle_ns"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 3);
    let o = profscope()
        .args(["query", level1, "--query", "top_kernels", "--limit", "3"])
        .output()
        .unwrap();
    let table = String::from_utf8(o.stdout).unwrap();
    assert!(table.contains("3 of 20 rows (top_kernels"), "{table}");
    assert!(table.contains("aclnnForeachAddListV2_ForeachAddListV2_ForeachAddList"));
    // Bad SQL: exit 2, the engine's message.
    let o = profscope()
        .args(["query", level1, "--sql", "SELECT nope FROM events"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("SQL:") && err.contains("nope"), "{err}");
}

#[cfg(not(feature = "sql"))]
#[test]
fn query_without_the_engine_says_how_to_get_it() {
    let o = profscope()
        .args(["query", "fixtures/demo", "--query", "top_kernels"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--features sql") && err.contains("--parquet"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn unknown_query_names_are_refused() {
    let o = profscope()
        .args(["query", "fixtures/demo", "--query", "no_such_query"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no_such_query") && err.contains("top_kernels"),
        "{err}"
    );
    assert!(Path::new("queries/top_kernels.sql").is_file());
}
