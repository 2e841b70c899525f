//! Hostile inputs to the newest readers and rules (issue 61): durations no capture holds,
//! impossible PMU ratios and Model Ids, unreadable run metadata, duplicated vendor and meta rows,
//! a b-tree child at the wrong depth. Inputs: copies of the real samples (../shared/samples),
//! changed in the test as each case says; expected values come from the unchanged copy, from
//! SQLite (rusqlite) or from counting the changes made, never from profscope's own answer to the
//! changed input. The one generated input (the graph-mode root) says so.

use super::{DB1, LIMIT, TRACE1, analyze_json, copy, diag, diag_text, run, snapshot, tmp};
use crate::common;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// `analyze PATH --format json`, which must exit 0; the report.
fn report(path: &Path) -> Value {
    let (code, v, err) = analyze_json(path);
    assert_eq!(code, Some(0), "{}: {err}", path.display());
    v
}

/// The advisor's `not_checked` entries of `rule` (reason and files).
fn not_checked(r: &Value, rule: &str) -> Vec<Value> {
    r["analyses"]["advisor"]["not_checked"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["rule"] == rule)
        .cloned()
        .collect()
}

fn findings(r: &Value, rule: &str) -> Vec<Value> {
    r["analyses"]["advisor"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .cloned()
        .collect()
}

/// Issue 61 item 5: a negative `dur` was read as is (negative sums, shares of -100%). A JSON event
/// whose `dur` is negative or past a week is now skipped as `skipped_event`, so the report equals
/// the report of the same file without that event (real trace_view.json, and a real Kineto
/// trace: one device event changed, then removed).
#[test]
fn negative_and_absurd_durations_in_json_are_skipped() {
    let kineto = {
        use std::io::Read;
        let gz = std::fs::read(common::samples_dir().join(
            "torch-traces/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
        ))
        .unwrap();
        let mut s = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut s)
            .unwrap();
        s
    };
    let ascend = std::fs::read_to_string(common::samples_dir().join(TRACE1)).unwrap();
    for (tag, text, device_cat) in [("ascend", ascend, None), ("kineto", kineto, Some("kernel"))] {
        let dir = tmp(&format!("r61-dur-{tag}"));
        let path = dir.join("trace_view.json");
        let v: Value = serde_json::from_str(&text).unwrap();
        let events = |v: &Value| -> Vec<Value> {
            v.get("traceEvents")
                .unwrap_or(v)
                .as_array()
                .unwrap()
                .clone()
        };
        let evs = events(&v);
        // The longest device event: the one whose sign matters most.
        let k = (0..evs.len())
            .filter(|&i| evs[i]["ph"] == "X")
            .filter(|&i| match device_cat {
                Some(c) => evs[i]["cat"] == c,
                None => evs[i]["args"]["Task Type"].is_string(),
            })
            .max_by(|&a, &b| {
                let d = |i: usize| evs[i]["dur"].as_f64().unwrap_or(0.0);
                d(a).total_cmp(&d(b))
            })
            .unwrap();
        let with = |evs: Vec<Value>| -> String {
            let mut out = v.clone();
            match out.get_mut("traceEvents") {
                Some(t) => *t = Value::Array(evs),
                None => out = Value::Array(evs),
            }
            serde_json::to_string(&out).unwrap()
        };
        let mut removed = evs.clone();
        removed.remove(k);
        std::fs::write(&path, with(removed)).unwrap();
        let want = report(&path);
        for (dur, why) in [
            (json!(-1.0), "negative dur"),
            (json!(-250000.0), "negative dur"),
            (json!(1e15), "dur longer than a week"),
        ] {
            let mut changed = evs.clone();
            changed[k]["dur"] = dur.clone();
            std::fs::write(&path, with(changed)).unwrap();
            let before = snapshot(&dir);
            let got = report(&path);
            assert_eq!(snapshot(&dir), before);
            assert_eq!(
                diag(&got, "skipped_event"),
                diag(&want, "skipped_event") + 1,
                "{tag} {dur}"
            );
            assert!(
                diag_text(&got, "skipped_event").contains(why),
                "{tag}: {}",
                diag_text(&got, "skipped_event")
            );
            assert_eq!(
                sized_out(&got["analyses"]),
                sized_out(&want["analyses"]),
                "{tag}: dur {dur}"
            );
        }
    }
}

/// `analyses` without the file sizes `ranks.rows` carries (the file with the event changed is
/// a few bytes longer than the one without it).
fn sized_out(a: &Value) -> Value {
    let mut a = a.clone();
    for row in a["ranks"]["rows"].as_array_mut().into_iter().flatten() {
        row.as_object_mut().unwrap().remove("size_bytes");
    }
    a
}

/// Issue 61 item 6: durations near the 64-bit limit overflowed sums (a wrapped negative sum, a
/// mean below the minimum). A span past a week is now skipped; what remains cannot wrap: 20,000
/// generated kernels of 6 days each on one stream (sum 1.04e19 ns, past 2^63) give a mean of
/// exactly 6 days, min = mean = max, a saturated sum and a share of at most 100%.
#[test]
fn long_event_sums_saturate_instead_of_wrapping() {
    let dir = tmp("r61-sums");
    let path = dir.join("trace.json");
    let six_days_us = 6 * 24 * 3600 * 1_000_000i64;
    let mut evs = vec![
        json!({"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "GPU 0"}}),
        json!({"ph": "M", "name": "process_labels", "pid": 1, "tid": 0, "args": {"labels": "GPU 0"}}),
    ];
    for i in 0..20_000i64 {
        evs.push(json!({"ph": "X", "cat": "kernel", "name": "K", "pid": 1, "tid": 7,
            "ts": 1_000_000 + i, "dur": six_days_us, "args": {"stream": 7, "device": 0, "correlation": i}}));
    }
    std::fs::write(
        &path,
        serde_json::to_vec(&json!({"traceEvents": evs})).unwrap(),
    )
    .unwrap();
    let r = report(&path);
    let six_days_ns = six_days_us as f64 * 1000.0;
    let mut seen = 0;
    for per_device in r["analyses"]["top_events"].as_array().unwrap() {
        for row in per_device["by_sum"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["name"] == "K")
        {
            seen += 1;
            assert_eq!(row["count"], 20_000);
            assert_eq!(row["mean_ns"].as_f64(), Some(six_days_ns), "{row}");
            assert_eq!(row["min_ns"].as_f64(), Some(six_days_ns), "{row}");
            assert_eq!(row["sum_ns"].as_i64(), Some(i64::MAX), "{row}");
            let pct = row["pct_of_total"].as_f64().unwrap();
            assert!((0.0..=100.0 + 1e-9).contains(&pct), "{row}");
        }
    }
    assert!(seen >= 1, "{}", r["analyses"]["top_events"]);
    for d in r["analyses"]["device_time"].as_array().unwrap() {
        for k in ["computing_ns", "free_ns", "window_ns"] {
            assert!(d[k].as_i64().unwrap() >= 0, "{d}");
        }
    }
}

/// Issue 61 item 7: an invalid ACLGraph `Model Id` (-1, 2^63, a string, a fraction, a list) was
/// read as "no graph" without a word. Generated input (`profscope synth --graph-mode`: no public
/// capture has ACLGraph replays): every other graph task's Model Id is replaced by one of those;
/// `graph_id_invalid` counts exactly the replaced events.
#[test]
fn invalid_model_ids_are_counted() {
    let g = common::generated_with(
        "r61-model-id",
        profscope::synth::SynthOpts {
            ranks: 1,
            target_bytes: 600_000,
            seed: 7,
            kineto: false,
            export: Default::default(),
            slow: None,
            graph_mode: true,
            capture_apart: false,
        },
    );
    let trace = g
        .dir
        .join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    // The generator writes the array form; torch_npu writes either.
    let evs = if v.is_array() {
        v.as_array_mut().unwrap()
    } else {
        v["traceEvents"].as_array_mut().unwrap()
    };
    let bad = [
        json!(-1),
        json!(9223372036854775808u64),
        json!("5"),
        json!(1.5),
        json!([1]),
    ];
    let mut changed = 0;
    let mut graph_tasks = 0;
    for e in evs.iter_mut() {
        let Some(m) = e["args"].get("Model Id").and_then(Value::as_u64) else {
            continue;
        };
        if m == u32::MAX as u64 {
            continue;
        }
        graph_tasks += 1;
        if graph_tasks % 2 == 0 {
            e["args"]["Model Id"] = bad[changed % bad.len()].clone();
            changed += 1;
        }
    }
    assert!(changed > 100, "{changed} of {graph_tasks}");
    let before = report(&trace);
    assert_eq!(diag(&before, "graph_id_invalid"), 0);
    std::fs::write(&trace, serde_json::to_vec(&v).unwrap()).unwrap();
    let r = report(&trace);
    assert_eq!(diag(&r, "graph_id_invalid"), changed as u64);
    assert!(diag_text(&r, "graph_id_invalid").contains("Model Id"));
}

/// A copy of the real text/level1 rank 0 folder (trace_view.json and its companions, with its
/// profiler_metadata.json), under `dir`.
fn text_rank(dir: &Path) -> PathBuf {
    let to = dir.join("rank0_ascend_pt");
    common::copy_dir(
        &common::samples_dir().join("ascend-pt/text/level1/rank0_ascend_pt"),
        &to,
    );
    to
}

/// Issue 61 item 8: an unreadable profiler_metadata.json left the environment rule silent. A
/// UTF-8 byte-order mark is now skipped (the findings equal the original's); a cut file, 10,000
/// levels of nesting, a 17 MB file and a folder in its place are `metadata_unreadable` and the
/// advisor lists `environment_variables` as not checked; an ENV_VARIABLES that is a list is
/// `not_checked` with its reason. The same for a db's META_DATA ENV_VARIABLES (BOM: read; cut:
/// not checked).
#[test]
fn unreadable_run_metadata_is_named() {
    let dir = tmp("r61-meta");
    let rank = text_rank(&dir);
    let meta = rank.join("profiler_metadata.json");
    let original = std::fs::read(&meta).unwrap();
    let want = report(&rank);
    let env = findings(&want, "environment_variables");
    assert_eq!(
        env.len(),
        3,
        "ACLNN_CACHE_LIMIT, HOST_CACHE_CAPACITY, PYTORCH_NPU_ALLOC_CONF"
    );
    assert!(not_checked(&want, "environment_variables").is_empty());

    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend_from_slice(&original);
    std::fs::write(&meta, &bom).unwrap();
    let r = report(&rank);
    assert_eq!(findings(&r, "environment_variables"), env);
    assert_eq!(diag(&r, "metadata_unreadable"), 0);

    let nested = format!(
        "{{\"ENV_VARIABLES\": {}{}}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let big = format!(
        "{{\"ENV_VARIABLES\": {{}}, \"pad\": \"{}\"}}",
        "x".repeat(17 << 20)
    );
    let cases: Vec<(&str, Option<Vec<u8>>, &str)> = vec![
        (
            "cut",
            Some(original[..original.len() / 2].to_vec()),
            "not JSON (EOF while parsing",
        ),
        (
            "nested",
            Some(nested.into_bytes()),
            "recursion limit exceeded",
        ),
        (
            "big",
            Some(big.into_bytes()),
            "more than the 16777216 bytes",
        ),
        ("folder", None, "not a regular file (a folder)"),
    ];
    for (tag, bytes, says) in cases {
        let _ = std::fs::remove_file(&meta);
        match bytes {
            Some(b) => std::fs::write(&meta, b).unwrap(),
            None => std::fs::create_dir(&meta).unwrap(),
        }
        let before = snapshot(&dir);
        let r = report(&rank);
        assert_eq!(snapshot(&dir), before, "{tag}");
        assert_eq!(diag(&r, "metadata_unreadable"), 1, "{tag}");
        assert!(
            diag_text(&r, "metadata_unreadable").contains(says),
            "{tag}: {}",
            diag_text(&r, "metadata_unreadable")
        );
        let nc = not_checked(&r, "environment_variables");
        assert_eq!(nc.len(), 1, "{tag}: {nc:?}");
        assert!(
            nc[0]["reason"]
                .as_str()
                .unwrap()
                .contains("profiler_metadata.json cannot be read")
        );
        assert!(findings(&r, "environment_variables").is_empty(), "{tag}");
        if tag == "folder" {
            std::fs::remove_dir(&meta).unwrap();
        }
    }
    std::fs::write(&meta, br#"{"ENV_VARIABLES": [1, 2]}"#).unwrap();
    let r = report(&rank);
    let file = env_not_checked_file(&r);
    assert!(
        file.ends_with("ENV_VARIABLES is a list, not an object of variables"),
        "{file}"
    );

    // The db's META_DATA.
    let db_dir = tmp("r61-meta-db");
    let db = copy(DB1, &db_dir, "ascend_pytorch_profiler_0.db");
    let want = report(&db);
    let env = findings(&want, "environment_variables");
    assert_eq!(env.len(), 3);
    let set = |sql: &str| {
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(sql)
            .unwrap()
    };
    set("UPDATE META_DATA SET value = char(65279) || value WHERE name = 'ENV_VARIABLES'");
    let r = report(&db);
    assert_eq!(findings(&r, "environment_variables"), env);
    set("UPDATE META_DATA SET value = substr(value, 1, 40) WHERE name = 'ENV_VARIABLES'");
    let r = report(&db);
    assert!(findings(&r, "environment_variables").is_empty());
    let file = env_not_checked_file(&r);
    assert!(
        file.contains("ENV_VARIABLES is not JSON (EOF while parsing"),
        "{file}"
    );
}

/// The one file the environment rule lists as not checked (with its reason after it).
fn env_not_checked_file(r: &Value) -> String {
    let nc = not_checked(r, "environment_variables");
    assert_eq!(nc.len(), 1, "{nc:?}");
    nc[0]["files"][0].as_str().unwrap().to_string()
}

/// Issue 61 item 12: 100,000 ENV_VARIABLES rows in META_DATA gave 10,007 advisor findings. Rows
/// repeating a name are now `meta_duplicate` (counted, not read): the findings are the first
/// row's, as in the unchanged db.
#[test]
fn duplicate_meta_rows_are_folded() {
    let dir = tmp("r61-env-rows");
    let db = copy(DB1, &dir, "ascend_pytorch_profiler_0.db");
    let want = report(&db);
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
         INSERT INTO META_DATA SELECT 'ENV_VARIABLES',
           '{\"ASCEND_GLOBAL_LOG_LEVEL\": \"' || (i % 5) || '\", \"HCCL_ALGO\": \"ring' || i || '\", \"ASCEND_LAUNCH_BLOCKING\": \"1\"}' FROM n",
    )
    .unwrap();
    let rows: i64 = c
        .query_row(
            "SELECT count(*) FROM META_DATA WHERE name = 'ENV_VARIABLES'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 100_001);
    drop(c);
    let before = snapshot(&dir);
    let r = report(&db);
    assert_eq!(snapshot(&dir), before);
    assert_eq!(diag(&r, "meta_duplicate"), 100_000);
    assert!(diag_text(&r, "meta_duplicate").contains("100001 rows named `ENV_VARIABLES`"));
    assert_eq!(
        findings(&r, "environment_variables"),
        findings(&want, "environment_variables")
    );
}

/// Issue 61 item 3: 300,000 duplicate rows in step_trace_time.csv (36 MB) made a 904 MB report
/// (one self-audit check per row, every row listed in the evidence). Rows repeating a step are
/// now folded (`vendor_step_duplicate`, `vendor_steps_folded`): the checks and the report's size
/// are the unchanged copy's.
#[test]
fn duplicate_vendor_steps_are_folded() {
    let dir = tmp("r61-steps");
    let rank = text_rank(&dir);
    let csv = rank.join("ASCEND_PROFILER_OUTPUT/step_trace_time.csv");
    let want = report(&rank);
    let want_len = serde_json::to_vec(&want).unwrap().len();
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let row = lines.next().unwrap();
    assert!(row.starts_with("50,"), "{row}");
    let mut big = format!("{header}\n{row}\n");
    for _ in 0..300_000 {
        big.push_str(row);
        big.push('\n');
    }
    std::fs::write(&csv, &big).unwrap();
    assert!(big.len() > 30_000_000);
    let before = snapshot(&dir);
    let r = run(
        &[
            "analyze",
            rank.to_str().unwrap(),
            "--format",
            "json",
            "--quiet",
        ],
        LIMIT,
    );
    assert_eq!(snapshot(&dir), before);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let got: Value = serde_json::from_str(&r.stdout).unwrap();
    let got_len = serde_json::to_vec(&got).unwrap().len();
    assert!(got_len < want_len + 4096, "{got_len} vs {want_len}");
    assert_eq!(diag(&got, "vendor_step_duplicate"), 300_000);
    let va = &got["analyses"]["vendor_agreement"];
    assert_eq!(va["vendor_steps_folded"], 300_000);
    assert_eq!(va["checks"], want["analyses"]["vendor_agreement"]["checks"]);
    let ev = got["analyses"]["evidence"].as_array().unwrap();
    assert_eq!(
        ev.iter()
            .map(|e| e["vendor_steps_folded"].as_u64().unwrap())
            .sum::<u64>(),
        300_000
    );
    assert_eq!(
        ev.iter()
            .map(|e| e["vendor_steps"].as_array().unwrap().len())
            .sum::<usize>(),
        1
    );
}

/// Issue 61 item 10: impossible PMU pipe ratios (-1, ±inf, 1e308) were read and priced
/// (`vector_operators` grew from 0.44 ms to 3.38 ms). A task with one is now `pmu_ratio_invalid`
/// and keeps no ratio: the advisor's numbers equal those of the same db with those tasks' PMU
/// rows deleted (SQLite on the copy), and the same for kernel_details.csv with their ratio cells
/// emptied.
#[test]
fn impossible_pmu_ratios_are_not_priced() {
    let dir = tmp("r61-pmu");
    let db = copy(DB1, &dir, "ascend_pytorch_profiler_0.db");
    let pristine = std::fs::read(&db).unwrap();
    // The 12 vector tasks with the most time (where a wrong ratio is priced the most).
    let pick = "SELECT p.globalTaskId FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name
                JOIN TASK t ON t.globalTaskId = p.globalTaskId
                WHERE s.value = 'aiv_vec_ratio' ORDER BY t.endNs - t.startNs DESC LIMIT 12";
    let sql = |q: &str| {
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(q)
            .unwrap()
    };
    sql(&format!(
        "DELETE FROM TASK_PMU_INFO WHERE globalTaskId IN ({pick})"
    ));
    let want = report(&db);
    let stake = |r: &Value, rule: &str| {
        findings(r, rule)
            .first()
            .map(|f| f["time_at_stake_ns"].clone())
    };
    for value in ["-1", "9e999", "-9e999", "1e308"] {
        std::fs::write(&db, &pristine).unwrap();
        sql(&format!(
            "UPDATE TASK_PMU_INFO SET value = {value} WHERE globalTaskId IN ({pick})
             AND name = (SELECT id FROM STRING_IDS WHERE value = 'aiv_vec_ratio')"
        ));
        let before = snapshot(&dir);
        let r = report(&db);
        assert_eq!(snapshot(&dir), before);
        assert_eq!(diag(&r, "pmu_ratio_invalid"), 12, "{value}");
        assert!(
            diag_text(&r, "pmu_ratio_invalid").contains("aiv_vec_ratio on 12 tasks"),
            "{}",
            diag_text(&r, "pmu_ratio_invalid")
        );
        for rule in ["vector_operators", "operator_no_bound"] {
            assert_eq!(stake(&r, rule), stake(&want, rule), "{rule} with {value}");
        }
    }
    // kernel_details.csv of the text export.
    let tdir = tmp("r61-pmu-csv");
    let rank = text_rank(&tdir);
    let csv = rank.join("ASCEND_PROFILER_OUTPUT/kernel_details.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rd = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let (vec_col, core) = (col("aiv_vec_ratio"), col("Accelerator Core"));
    let ratio_cols: Vec<usize> = (0..header.len())
        .filter(|&i| header[i].ends_with("_ratio"))
        .collect();
    let rows: Vec<Vec<String>> = rd
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    let vector: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i][core] == "AI_VECTOR_CORE")
        .take(12)
        .collect();
    assert_eq!(vector.len(), 12);
    let write = |rows: &[Vec<String>]| {
        let mut w = csv::Writer::from_path(&csv).unwrap();
        w.write_record(&header).unwrap();
        for r in rows {
            w.write_record(r).unwrap();
        }
    };
    let mut emptied = rows.clone();
    for &i in &vector {
        for &c in &ratio_cols {
            emptied[i][c] = "N/A".into();
        }
    }
    write(&emptied);
    let want = report(&rank);
    for value in ["-1", "inf", "1e308"] {
        let mut bad = rows.clone();
        for &i in &vector {
            bad[i][vec_col] = value.into();
        }
        write(&bad);
        let r = report(&rank);
        assert_eq!(diag(&r, "pmu_ratio_invalid"), 12, "{value}");
        for rule in ["vector_operators", "operator_no_bound"] {
            assert_eq!(
                stake(&r, rule),
                stake(&want, rule),
                "csv {rule} with {value}"
            );
        }
    }
}

/// Issue 61 item 13: one child-pointer flip in TASK that SQLite's integrity check calls "Child
/// page depth differs" lost rows with no `db_damaged`. The copy of the real level1 db gets TASK
/// grown to a three-level b-tree (its rows inserted again until it is); then the root's second
/// child pointer is set to that child's last leaf, whose rowids fit the bounds the root gives
/// it, so only the depth shows the damage. The direct reader now declines ("a leaf at depth"),
/// SQLite's quick_check agrees, and `db_damaged` names TASK.
#[test]
fn a_child_at_the_wrong_depth_is_db_damaged() {
    use super::{be_u32, children, layout, page_at, patch};
    let dir = tmp("r61-depth");
    let db = copy(DB1, &dir, "ascend_pytorch_profiler_0.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    for _ in 0..8 {
        c.execute_batch("INSERT INTO TASK SELECT * FROM TASK")
            .unwrap();
    }
    drop(c);
    let (ps, root) = layout(&db, "TASK");
    let b = std::fs::read(&db).unwrap();
    let level1 = children(&b, ps, root);
    let mid = level1[1];
    let (_, h) = page_at(ps, mid);
    assert_eq!(b[h], 0x05, "TASK has three levels: page {mid} is interior");
    let last_leaf = *children(&b, ps, mid).last().unwrap();
    let (_, lh) = page_at(ps, last_leaf);
    assert_eq!(b[lh], 0x0D);
    // NOT INDEXED: TASK has an index (TaskIndex) that count(*) would read instead of the table.
    let all: i64 = super::sql_count(&db, "SELECT count(*) FROM TASK NOT INDEXED");
    patch(&db, |b| {
        let (start, h) = page_at(ps, root);
        let off = u16::from_be_bytes([b[h + 14], b[h + 15]]) as usize;
        assert_eq!(be_u32(b, start + off), mid);
        b[start + off..start + off + 4].copy_from_slice(&last_leaf.to_be_bytes());
    });
    let check: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert!(check.contains("Child page depth differs"), "{check}");
    let read_by_sqlite = super::sql_count(&db, "SELECT count(*) FROM TASK NOT INDEXED");
    assert!(read_by_sqlite < all, "{read_by_sqlite} of {all}");
    let before = snapshot(&dir);
    let r = report(&db);
    assert_eq!(snapshot(&dir), before);
    assert!(diag(&r, "db_damaged") >= 1, "{}", r["diagnostics"]);
    let t = diag_text(&r, "db_damaged");
    assert!(t.contains("TASK") && t.contains("a leaf at depth"), "{t}");
}
