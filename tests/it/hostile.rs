//! Hostile and broken inputs (issue 16): every class of damage found by hand becomes a clear
//! diagnostic or error naming the file, never a panic, abort, signal, hang or memory blow-up, and
//! every readable rank is still analysed. Inputs: copies of the real samples in ../shared/samples,
//! damaged at test time in a temporary folder (the samples themselves are never written); the
//! expected counts come from SQLite (rusqlite) on the same copies, not from profscope.

// Issue 61: the newest features (saved reports for diff; durations, PMU ratios, Model Ids,
// metadata, vendor and meta rows, b-tree depth), one file per side.
mod inputs;
mod reports;

use crate::common;

use profscope::ingest::TablesBuilder;
use profscope::ingest::ascend_db::{DbOpts, ingest_file_with};
use profscope::model::Tables;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const DB1: &str =
    "ascend-pt/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db";
const TRACE1: &str = "ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json";

/// A fresh, empty temporary folder for one test, under this run's
/// `$TMPDIR/profscope-hostile-<pid>/`. The first call removes the folders of earlier runs whose
/// process is gone, so a failed test's files stay for a look until the next run and nothing
/// piles up.
fn tmp(tag: &str) -> PathBuf {
    static SWEEP: std::sync::Once = std::sync::Once::new();
    SWEEP.call_once(sweep_finished_runs);
    let d = std::env::temp_dir()
        .join(format!("profscope-hostile-{}", std::process::id()))
        .join(tag);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Removes `profscope-hostile-<pid>` folders (and the older `profscope-hostile-<tag>-<pid>`
/// ones) of processes that no longer run.
fn sweep_finished_runs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("profscope-hostile-") else {
            continue;
        };
        let pid = rest.rsplit('-').next().and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A writable copy of a sample under `dir` (as `name`).
fn copy(rel: &str, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(common::samples_dir().join(rel), &to).unwrap();
    let mut p = std::fs::metadata(&to).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    p.set_readonly(false);
    std::fs::set_permissions(&to, p).unwrap();
    to
}

/// A copy of the real level1 rank 0 db in the fresh temp folder `tag`, changed by `sql`, with
/// its connection still open for checks.
fn db1_changed(tag: &str, sql: &str) -> (PathBuf, rusqlite::Connection) {
    let db = copy(DB1, &tmp(tag), "ascend_pytorch_profiler_0.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(sql).unwrap();
    (db, c)
}

/// What a run of the binary did.
struct Run {
    /// Exit code; None when killed by a signal.
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// Peak resident memory, KiB.
    max_rss_kb: i64,
}

/// Runs the release binary with `args`, killing it after `limit` (a hang fails the test), and
/// reads its peak RSS from wait4 (which reaps the child, so std's `wait` is not used).
#[allow(clippy::zombie_processes)]
fn run(args: &[&str], limit: Duration) -> Run {
    let out_dir = tmp(&format!("out-{}", rand_tag()));
    let (o, e) = (out_dir.join("stdout"), out_dir.join("stderr"));
    let child = crate::common::profscope_command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&o).unwrap())
        .stderr(std::fs::File::create(&e).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let t0 = Instant::now();
    let (status, usage) = loop {
        let mut status = 0;
        // SAFETY: a zeroed rusage is valid; wait4 on our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break (status, usage);
        }
        if t0.elapsed() > limit {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            panic!("profscope {args:?} hung: killed after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let r = Run {
        code,
        stdout: String::from_utf8_lossy(&std::fs::read(&o).unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&std::fs::read(&e).unwrap()).into_owned(),
        max_rss_kb: usage.ru_maxrss,
    };
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(
        r.code.is_some(),
        "profscope {args:?} died on signal {}: {}",
        libc::WTERMSIG(status),
        r.stderr
    );
    assert!(
        matches!(r.code, Some(0..=2)),
        "profscope {args:?} exited {:?} (panic or abort): {}",
        r.code,
        r.stderr
    );
    r
}

fn rand_tag() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

const LIMIT: Duration = Duration::from_secs(60);

/// `analyze PATH --format json`: exit code and the report.
fn analyze_json(path: &Path) -> (Option<i32>, serde_json::Value, String) {
    let r = run(
        &[
            "analyze",
            path.to_str().unwrap(),
            "--format",
            "json",
            "--quiet",
        ],
        LIMIT,
    );
    let v = serde_json::from_str(&r.stdout).unwrap_or(serde_json::Value::Null);
    (r.code, v, r.stderr)
}

/// Count of a diagnostic code in a JSON report (0 when absent).
fn diag(v: &serde_json::Value, code: &str) -> u64 {
    v["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["code"] == code)
        .and_then(|d| d["count"].as_u64())
        .unwrap_or(0)
}

fn diag_text(v: &serde_json::Value, code: &str) -> String {
    v["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["code"] == code)
        .map(|d| d["examples"].to_string())
        .collect()
}

/// One db read by the library, direct b-tree reader or SQLite only.
fn ingest_db(path: &Path, direct: bool) -> Tables {
    let mut b = TablesBuilder::new();
    let opts = DbOpts {
        direct,
        overlap_events: true,
    };
    ingest_file_with(path.to_str().unwrap(), &mut b, opts).unwrap();
    b.finish()
}

/// (thread name, ts, dur, name) of every event, in order: what two readers must agree on.
fn events(t: &Tables) -> Vec<(String, i64, i64, String)> {
    (0..t.events.len())
        .map(|i| {
            let th = t.events.thread[i].idx();
            (
                t.str(t.threads.name[th]).to_string(),
                t.events.ts_ns[i],
                t.events.dur_ns.at(i),
                t.str(t.events.name[i]).to_string(),
            )
        })
        .collect()
}

fn count_thread_prefix(t: &Tables, process: &str) -> usize {
    (0..t.events.len())
        .filter(|&i| {
            let th = t.events.thread[i].idx();
            let p = t.threads.process[th].idx();
            t.str(t.processes.name[p]) == process
        })
        .count()
}

/// Page size and root page of `table` (from SQLite).
fn layout(db: &Path, table: &str) -> (usize, u32) {
    let c = rusqlite::Connection::open(db).unwrap();
    let ps: i64 = c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    let root: i64 = c
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = ?1",
            [table],
            |r| r.get(0),
        )
        .unwrap();
    (ps as usize, root as u32)
}

fn sql_count(db: &Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Byte offset of page `n` and of its b-tree header.
fn page_at(ps: usize, n: u32) -> (usize, usize) {
    let start = (n as usize - 1) * ps;
    (start, start + if n == 1 { 100 } else { 0 })
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The child pages of interior table page `n` (cells then the right child).
fn children(b: &[u8], ps: usize, n: u32) -> Vec<u32> {
    let (start, h) = page_at(ps, n);
    assert_eq!(b[h], 0x05, "page {n} is an interior table page");
    let cells = u16::from_be_bytes([b[h + 3], b[h + 4]]) as usize;
    let mut out: Vec<u32> = (0..cells)
        .map(|k| {
            let off = u16::from_be_bytes([b[h + 12 + 2 * k], b[h + 13 + 2 * k]]) as usize;
            be_u32(b, start + off)
        })
        .collect();
    out.push(be_u32(b, h + 8));
    out
}

fn patch(db: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut b = std::fs::read(db).unwrap();
    f(&mut b);
    std::fs::write(db, b).unwrap();
}

/// A copy of the level1 rank0 db with `damage` applied; returns (path, page size, TASK root).
fn damaged_db(tag: &str, damage: impl FnOnce(&mut Vec<u8>, usize, u32)) -> PathBuf {
    let dir = tmp(tag);
    let db = copy(DB1, &dir, "ascend_pytorch_profiler_0.db");
    let (ps, root) = layout(&db, "TASK");
    patch(&db, |b| damage(b, ps, root));
    db
}

/// Checks a damaged db: `analyze` finishes with exit 0 and the direct reader, having declined,
/// reads exactly what SQLite alone reads. Returns the JSON report.
fn check_declined(db: &Path, why: &str) -> serde_json::Value {
    let (code, v, err) = analyze_json(db);
    assert_eq!(code, Some(0), "{err}");
    let fb = diag_text(&v, "db_direct_read_fallback");
    assert!(fb.contains(why), "fallback reason `{why}` in {fb}");
    assert_eq!(events(&ingest_db(db, true)), events(&ingest_db(db, false)));
    v
}

/// Makes interior page `page` empty, with `root` as its only (right) child.
fn point_back(b: &mut [u8], ps: usize, page: u32, root: u32) {
    let (_, h) = page_at(ps, page);
    b[h] = 0x05;
    b[h + 3] = 0;
    b[h + 4] = 0;
    b[h + 8..h + 12].copy_from_slice(&root.to_be_bytes());
}

#[test]
fn btree_page_cycles_are_not_a_hang() {
    // TASK's root (an interior page) loses its cells; its right child becomes the root itself.
    let db = damaged_db("self-cycle", |b, ps, root| point_back(b, ps, root, root));
    check_declined(&db, "reached twice");
    // TASK's first leaf becomes an empty interior page whose right child is the root.
    let db = damaged_db("two-cycle", |b, ps, root| {
        let leaf = children(b, ps, root)[0];
        point_back(b, ps, leaf, root);
    });
    check_declined(&db, "reached twice");
}

#[test]
fn btree_child_pointer_into_the_schema_page_is_refused() {
    // A child pointer to page 1 used to read sqlite_schema rows as TASK events.
    let db = damaged_db("page1", |b, ps, root| {
        let (start, h) = page_at(ps, root);
        let off = u16::from_be_bytes([b[h + 12], b[h + 13]]) as usize;
        b[start + off..start + off + 4].copy_from_slice(&1u32.to_be_bytes());
    });
    check_declined(&db, "child pointer to page 1");
}

#[test]
fn btree_child_pointers_past_the_file_or_to_page_0_are_refused() {
    for (tag, target) in [("past-eof", 1_000_000u32), ("page0", 0)] {
        let db = damaged_db(tag, |b, ps, root| {
            let h = page_at(ps, root).1;
            b[h + 8..h + 12].copy_from_slice(&target.to_be_bytes());
        });
        let (code, v, err) = analyze_json(&db);
        assert_eq!(code, Some(0), "{tag}: {err}");
        assert!(diag(&v, "db_direct_read_fallback") > 0, "{tag}");
    }
}

#[test]
fn btree_wrapped_record_lengths_do_not_panic() {
    // The first cell of TASK's first leaf gets a record header of two 9-byte serial types of
    // 2^64 - 1: their lengths sum past 2^64 (the reader used to wrap and panic).
    let db = damaged_db("wrap", |b, ps, root| {
        let leaf = children(b, ps, root)[0];
        let (start, h) = page_at(ps, leaf);
        assert_eq!(b[h], 0x0D);
        let off = start + u16::from_be_bytes([b[h + 8], b[h + 9]]) as usize;
        // Skip the payload-length and rowid varints.
        let mut at = off;
        for _ in 0..2 {
            while b[at] & 0x80 != 0 {
                at += 1;
            }
            at += 1;
        }
        b[at] = 19;
        for k in 0..18 {
            b[at + 1 + k] = 0xff;
        }
    });
    let (code, _, err) = analyze_json(&db);
    assert_eq!(code, Some(0), "{err}");
    // No panic in the library either; what the direct reader declines SQLite reads.
    let _ = ingest_db(&db, true);
}

#[test]
fn btree_reads_tables_with_more_than_64_leading_columns_as_sqlite_does() {
    let dir = tmp("wide");
    let db = copy(DB1, &dir, "ascend_pytorch_profiler_0.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    let cols: Vec<(String, String)> = c
        .prepare("PRAGMA table_info(TASK)")
        .unwrap()
        .query_map([], |r| Ok((r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let pad: Vec<String> = (0..70).map(|i| format!("pad{i} INTEGER")).collect();
    let decl: Vec<String> = cols.iter().map(|(n, t)| format!("{n} {t}")).collect();
    let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
    c.execute_batch(&format!(
        "CREATE TABLE WIDE ({}, {});
         INSERT INTO WIDE (rowid, {}) SELECT rowid, {} FROM TASK;
         DROP TABLE TASK; ALTER TABLE WIDE RENAME TO TASK;",
        pad.join(", "),
        decl.join(", "),
        names.join(", "),
        names.join(", ")
    ))
    .unwrap();
    drop(c);
    let rows = sql_count(&db, "SELECT count(*) FROM TASK");
    let direct = ingest_db(&db, true);
    assert_eq!(events(&direct), events(&ingest_db(&db, false)));
    // Every TASK row is an Ascend Hardware event with a real start (not -1).
    assert_eq!(count_thread_prefix(&direct, "Ascend Hardware") as i64, rows);
    let min_ts = sql_count(&db, "SELECT min(startNs) FROM TASK");
    let hw_min = (0..direct.events.len())
        .filter(|&i| {
            let p = direct.threads.process[direct.events.thread[i].idx()].idx();
            direct.str(direct.processes.name[p]) == "Ascend Hardware"
        })
        .map(|i| direct.events.ts_ns[i])
        .min()
        .unwrap();
    assert_eq!(hw_min, min_ts);
}

#[test]
fn sparse_rowids_do_not_reserve_by_rowid_range() {
    let (db, c) = db1_changed(
        "sparse",
        "INSERT INTO TASK SELECT * FROM TASK WHERE rowid = (SELECT min(rowid) FROM TASK);
         UPDATE TASK SET rowid = 1099511627776 WHERE rowid = (SELECT max(rowid) FROM TASK);",
    );
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    drop(c);
    let rows = sql_count(&db, "SELECT count(*) FROM TASK");
    let r = run(
        &[
            "analyze",
            db.to_str().unwrap(),
            "--format",
            "json",
            "--quiet",
        ],
        LIMIT,
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.max_rss_kb < 1 << 20, "peak RSS {} KiB", r.max_rss_kb);
    for direct in [true, false] {
        let t = ingest_db(&db, direct);
        assert_eq!(count_thread_prefix(&t, "Ascend Hardware") as i64, rows);
    }
}

#[test]
fn truncated_db_keeps_the_rows_it_can_read() {
    let dir = tmp("trunc-db");
    let db = copy(DB1, &dir, "ascend_pytorch_profiler_0.db");
    let len = std::fs::metadata(&db).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    f.set_len(len * 6 / 10).unwrap();
    drop(f);
    let (code, v, err) = analyze_json(&db);
    assert_eq!(code, Some(0), "{err}");
    let lost = diag(&v, "truncated") + diag(&v, "table_unreadable");
    assert!(lost > 0, "a truncated db says so: {}", v["diagnostics"]);
    assert!(v["summary"]["events"].as_u64().unwrap_or(0) > 0);
    assert!(
        v["analyses"]["ranks"]["truncated"]
            .to_string()
            .contains("ascend_pytorch_profiler_0.db")
            || diag_text(&v, "truncated").contains("ascend_pytorch_profiler_0.db")
            || diag_text(&v, "table_unreadable").contains("ascend_pytorch_profiler_0.db")
    );
}

#[test]
fn unreadable_db_falls_back_to_the_same_captures_trace_view() {
    let root = tmp("fallback");
    let out = root.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT");
    let db = copy(DB1, &out, "ascend_pytorch_profiler_0.db");
    copy(TRACE1, &out, "trace_view.json");
    // The db loses everything after its header: not a database any more.
    let f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    f.set_len(60).unwrap();
    drop(f);
    let (code, v, err) = analyze_json(&root);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(diag(&v, "input_fallback"), 1, "{}", v["diagnostics"]);
    assert!(diag_text(&v, "input_fallback").contains("trace_view.json"));
    // The same events as reading trace_view.json alone.
    let (_, alone, _) = analyze_json(&common::samples_dir().join(TRACE1));
    assert_eq!(v["summary"]["events"], alone["summary"]["events"]);
    assert!(v["summary"]["events"].as_u64().unwrap() > 0);
}

#[test]
fn broken_optional_companions_are_warnings() {
    let dir = tmp("companions");
    let db = copy(DB1, &dir, "ascend_pytorch_profiler_0.db");
    let (_, clean, _) = analyze_json(&db);
    // A corrupt analysis.db beside the db.
    std::fs::write(dir.join("analysis.db"), b"SQLite format 3\0garbage garbage").unwrap();
    let (code, v, err) = analyze_json(&db);
    assert_eq!(code, Some(0), "{err}");
    assert!(diag_text(&v, "table_unreadable").contains("analysis.db"));
    assert_eq!(v["summary"]["events"], clean["summary"]["events"]);
    std::fs::remove_file(dir.join("analysis.db")).unwrap();
    // Renamed STEP_TIME.id and META_DATA.value columns.
    let c = rusqlite::Connection::open(&db).unwrap();
    let has_step = c
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'STEP_TIME'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap();
    if has_step == 0 {
        c.execute_batch("CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER)")
            .unwrap();
    }
    c.execute_batch(
        "ALTER TABLE STEP_TIME RENAME COLUMN id TO idx;
         ALTER TABLE META_DATA RENAME COLUMN value TO val;",
    )
    .unwrap();
    drop(c);
    let (code, v, err) = analyze_json(&db);
    assert_eq!(code, Some(0), "{err}");
    let t = diag_text(&v, "table_unreadable");
    assert!(t.contains("STEP_TIME") && t.contains("META_DATA"), "{t}");
    assert_eq!(v["summary"]["events"], clean["summary"]["events"]);
}

#[test]
fn garbage_task_times_are_counted_and_skipped() {
    let (db, c) = db1_changed(
        "garbage",
        "UPDATE TASK SET startNs = NULL WHERE rowid = (SELECT min(rowid) FROM TASK);
         UPDATE TASK SET startNs = 'abc' WHERE rowid = (SELECT min(rowid) + 1 FROM TASK);
         UPDATE TASK SET endNs = 9000000000000000000 WHERE rowid = (SELECT min(rowid) + 2 FROM TASK);",
    );
    drop(c);
    let rows = sql_count(&db, "SELECT count(*) FROM TASK");
    for direct in [true, false] {
        let t = ingest_db(&db, direct);
        assert_eq!(count_thread_prefix(&t, "Ascend Hardware") as i64, rows - 3);
        assert!(t.diagnostics.count("skipped_event") >= 3);
        assert!(t.events.ts_ns.iter().all(|&ts| ts >= 0));
        assert!(
            t.events
                .dur_ns
                .iter()
                .all(|d| d < 7 * 24 * 3600 * 1_000_000_000)
        );
    }
}

/// (device, kind, rows, Σ dur) per device and kind, as SQLite sums the rows of
/// OVERLAP_ANALYSIS that `filter` (an SQL condition) keeps.
fn sqlite_overlap_sums(c: &rusqlite::Connection, filter: &str) -> Vec<(i32, u8, u64, i64)> {
    c.prepare(&format!(
        "SELECT deviceId, type, count(*), sum(endNs - startNs) FROM OVERLAP_ANALYSIS
         WHERE {filter} GROUP BY 1, 2 ORDER BY 1, 2"
    ))
    .unwrap()
    .query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as u64, r.get(3)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// The db read as `analyze` reads it (OVERLAP_ANALYSIS as sums), and its vendor_overlap rows.
fn overlap_sums_read(db: &Path, direct: bool) -> (Tables, Vec<(i32, u8, u64, i64)>) {
    let mut b = TablesBuilder::new();
    let opts = DbOpts {
        direct,
        overlap_events: false,
    };
    ingest_file_with(db.to_str().unwrap(), &mut b, opts).unwrap();
    let t = b.finish();
    let v = &t.vendor_overlap;
    let rows = (0..v.len())
        .map(|r| (v.device_id[r], v.kind[r], v.rows[r], v.dur_ns[r]))
        .collect();
    (t, rows)
}

/// OVERLAP_ANALYSIS read as sums (what `analyze` does) skips rows whose span is not a time and
/// rows of an unknown type, says so, and sums the rest: input a copy of the real level1 rank 0
/// db with three rows damaged (a NULL start, an end before the start, type 7); the expected sums
/// are SQLite's own GROUP BY over the rows left, both readers (direct b-tree, SQLite) checked.
#[test]
fn overlap_sums_skip_damaged_rows_and_say_so() {
    let (db, c) = db1_changed(
        "overlap",
        "UPDATE OVERLAP_ANALYSIS SET startNs = NULL WHERE rowid = (SELECT min(rowid) FROM OVERLAP_ANALYSIS);
         UPDATE OVERLAP_ANALYSIS SET endNs = startNs - 5 WHERE rowid = (SELECT min(rowid) + 1 FROM OVERLAP_ANALYSIS);
         UPDATE OVERLAP_ANALYSIS SET type = 7 WHERE rowid = (SELECT min(rowid) + 2 FROM OVERLAP_ANALYSIS);",
    );
    let mut want = sqlite_overlap_sums(
        &c,
        "startNs IS NOT NULL AND endNs >= startNs AND type BETWEEN 0 AND 3",
    );
    drop(c);
    want.retain(|w| w.2 > 0);
    assert_eq!(want.iter().map(|w| w.2).sum::<u64>(), 382 - 3);
    for direct in [true, false] {
        let (t, got) = overlap_sums_read(&db, direct);
        assert_eq!(got, want, "direct: {direct}");
        assert_eq!(t.diagnostics.count("vendor_overlap_unknown_type"), 1);
        let skipped = t
            .diagnostics
            .get("skipped_event")
            .map(|d| d.examples.clone())
            .unwrap_or_default();
        assert_eq!(
            skipped
                .iter()
                .filter(|e| e.contains("OVERLAP_ANALYSIS"))
                .count(),
            2,
            "{skipped:?}"
        );
    }
}

/// OVERLAP_ANALYSIS rows whose device changes from row to row (deviceId = rowid % 50 in a copy
/// of the real level1 rank 0 db: 50 devices interleaved) are summed per device as SQLite's own
/// GROUP BY sums them, through both readers.
#[test]
fn overlap_sums_of_interleaved_devices_match_sqlite() {
    let (db, c) = db1_changed(
        "overlap-devices",
        "UPDATE OVERLAP_ANALYSIS SET deviceId = rowid % 50;",
    );
    let want = sqlite_overlap_sums(&c, "1");
    drop(c);
    assert_eq!(want.iter().map(|w| w.2).sum::<u64>(), 382);
    for direct in [true, false] {
        assert_eq!(overlap_sums_read(&db, direct).1, want, "direct: {direct}");
    }
}

#[cfg(unix)]
fn fifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a plain mkfifo call on a path in our temp folder.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[cfg(unix)]
#[test]
fn fifos_and_devices_never_hang_a_run() {
    let root = tmp("fifo");
    // A FIFO given directly.
    let f = root.join("trace.json");
    fifo(&f);
    let r = run(&["analyze", f.to_str().unwrap(), "--quiet"], LIMIT);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
    // FIFOs and /dev/zero named like companions beside a real trace_view.json.
    let out = root.join("r0_ascend_pt/ASCEND_PROFILER_OUTPUT");
    copy(TRACE1, &out, "trace_view.json");
    for n in ["npu_module_mem.csv", "step_trace_time.csv"] {
        fifo(&out.join(n));
    }
    std::os::unix::fs::symlink("/dev/zero", out.join("communication.json")).unwrap();
    let (code, v, err) = analyze_json(&root.join("r0_ascend_pt"));
    assert_eq!(code, Some(0), "{err}");
    let t = diag_text(&v, "companion_unreadable");
    assert!(t.contains("not a regular file"), "{t}");
    assert!(v["summary"]["events"].as_u64().unwrap() > 0);
    // A FIFO named like a db in a walked folder, and evidence FIFOs under `memory DIR`.
    let ev = root.join("evidence");
    std::fs::create_dir_all(&ev).unwrap();
    fifo(&ev.join("npu-smi.txt"));
    fifo(&ev.join("model.safetensors"));
    fifo(&ev.join("ascend_pytorch_profiler_1.db"));
    let r = run(&["memory", ev.to_str().unwrap()], LIMIT);
    assert!(r.code.is_some());
    let r = run(&["analyze", ev.to_str().unwrap(), "--quiet"], LIMIT);
    assert!(r.code.is_some());
}

#[cfg(unix)]
#[test]
fn walks_survive_link_loops_dangling_links_and_odd_names() {
    let root = tmp("walks");
    // memory DIR with six links back to itself.
    let ev = root.join("ev");
    std::fs::create_dir_all(&ev).unwrap();
    for k in 0..6 {
        std::os::unix::fs::symlink(".", ev.join(format!("loop{k}"))).unwrap();
    }
    std::fs::copy(
        common::samples_dir()
            .join("npu-smi")
            .read_dir()
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path(),
        ev.join("npu-smi-idle.txt"),
    )
    .unwrap();
    let r = run(&["memory", ev.to_str().unwrap()], Duration::from_secs(30));
    assert!(r.max_rss_kb < 1 << 20, "peak RSS {} KiB", r.max_rss_kb);
    // A dangling link and a folder whose name is not UTF-8, beside a readable trace.
    let an = root.join("an");
    copy(
        TRACE1,
        &an.join("r0_ascend_pt/ASCEND_PROFILER_OUTPUT"),
        "trace_view.json",
    );
    std::os::unix::fs::symlink("/nonexistent/x.json", an.join("gone.json")).unwrap();
    use std::os::unix::ffi::OsStrExt;
    let odd = an.join(std::ffi::OsStr::from_bytes(b"r1_\xff_ascend_pt"));
    copy(
        TRACE1,
        &odd.join("ASCEND_PROFILER_OUTPUT"),
        "trace_view.json",
    );
    let (code, v, err) = analyze_json(&an);
    assert_eq!(code, Some(0), "{err}");
    let t = diag_text(&v, "input_unreadable");
    assert!(t.contains("gone.json") && t.contains("dangling"), "{t}");
    assert!(t.contains("not valid UTF-8"), "{t}");
}

#[test]
fn amplification_is_bounded() {
    use std::io::Write;
    let root = tmp("amp");
    // A small .json.gz inflating to one 300 MiB string.
    let gz = root.join("bomb_0.json.gz");
    let mut w = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::best(),
    );
    w.write_all(br#"[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}, {"ph": "X", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "name": ""#).unwrap();
    let block = vec![b'a'; 1 << 20];
    for _ in 0..300 {
        w.write_all(&block).unwrap();
    }
    w.write_all(br#""}]"#).unwrap();
    w.finish().unwrap();
    assert!(std::fs::metadata(&gz).unwrap().len() < 2 << 20);
    let r = run(
        &[
            "analyze",
            gz.to_str().unwrap(),
            "--format",
            "json",
            "--quiet",
        ],
        LIMIT,
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.max_rss_kb < 1536 << 10, "peak RSS {} KiB", r.max_rss_kb);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(diag(&v, "input_too_large"), 1, "{}", v["diagnostics"]);
    assert_eq!(v["summary"]["events"], 1);
    // A 20 MB event name and a 10 MB CSV header are not echoed whole.
    let big = root.join("big_0.json");
    let name = "n".repeat(20 << 20);
    std::fs::write(
        &big,
        format!(r#"[{{"ph": "X", "name": "{name}", "pid": 1, "tid": 1, "ts": 1, "dur": 1}}]"#),
    )
    .unwrap();
    let r = run(
        &[
            "analyze",
            big.to_str().unwrap(),
            "--format",
            "json",
            "--quiet",
        ],
        LIMIT,
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.len() < 1 << 20,
        "report of {} bytes",
        r.stdout.len()
    );
    let csv = root.join("kernel_details.csv");
    std::fs::write(&csv, format!("{}\n1,2\n", "h".repeat(10 << 20))).unwrap();
    let r = run(
        &[
            "analyze",
            csv.to_str().unwrap(),
            "--format",
            "json",
            "--quiet",
        ],
        LIMIT,
    );
    assert!(r.stdout.len() + r.stderr.len() < 1 << 20);
}

#[cfg(unix)]
#[test]
fn a_file_shrinking_under_its_mapping_reads_as_zeros_not_sigbus() {
    let dir = tmp("shrink");
    let p = dir.join("f.bin");
    std::fs::write(&p, vec![7u8; 1 << 20]).unwrap();
    let f = std::fs::File::open(&p).unwrap();
    let map = profscope::ingest::mapping::map(&f).unwrap();
    assert_eq!(map[(1 << 20) - 1], 7);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let before = profscope::ingest::mapping::zero_filled_pages();
    // Past the new end: a zero page, not SIGBUS.
    assert_eq!(map[(1 << 20) - 1], 0);
    assert_eq!(map[100], 7);
    assert!(profscope::ingest::mapping::zero_filled_pages() > before);
    assert!(profscope::ingest::mapping::shrank(
        p.to_str().unwrap(),
        1 << 20
    ));
}

#[test]
fn outputs_never_overwrite_inputs() {
    let dir = tmp("writes");
    let t = copy(TRACE1, &dir, "trace_view_0.json");
    let before = std::fs::read(&t).unwrap();
    let r = run(
        &[
            "analyze",
            t.to_str().unwrap(),
            "--save",
            t.to_str().unwrap(),
            "--quiet",
        ],
        LIMIT,
    );
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("never overwritten"), "{}", r.stderr);
    assert_eq!(std::fs::read(&t).unwrap(), before);
    // --parquet onto a regular file.
    let file = dir.join("not_a_dir");
    std::fs::write(&file, b"x").unwrap();
    let r = run(
        &[
            "export",
            t.to_str().unwrap(),
            "--parquet",
            file.to_str().unwrap(),
        ],
        LIMIT,
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
    // collect archive --tag with a path in it.
    let src = common::samples_dir().join("ascend-pt/db/level0");
    let to = dir.join("archive");
    let r = run(
        &[
            "collect",
            "archive",
            src.to_str().unwrap(),
            "--to",
            to.to_str().unwrap(),
            "--tag",
            "../../x",
        ],
        LIMIT,
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(!to.exists() || std::fs::read_dir(&to).unwrap().next().is_none());
    assert!(!dir.join("x").exists() && !std::env::temp_dir().join("x_").exists());
}

#[test]
fn diff_gates_refuse_garbage() {
    let dir = tmp("diff");
    let base = dir.join("base.json");
    let r = run(
        &[
            "analyze",
            common::samples_dir().join(TRACE1).to_str().unwrap(),
            "--save",
            base.to_str().unwrap(),
            "--quiet",
        ],
        LIMIT,
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let b = base.to_str().unwrap();
    let not_report = dir.join("other.json");
    std::fs::write(&not_report, br#"{"traceEvents": []}"#).unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["diff", b, not_report.to_str().unwrap()],
        vec!["diff", b, b, "--fail-on", "step_tme>+3%"],
        vec!["diff", b, b, "--fail-on", "step_time>+NaN%"],
        vec!["diff", b, b, "--fail-on", "step_time>+inf%"],
    ];
    for args in &cases {
        let r = run(args, LIMIT);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
    }
    let toml = dir.join("gate.toml");
    std::fs::write(&toml, "step_time = \"+3%\"\nthis is not toml\n").unwrap();
    let r = run(
        &["diff", b, b, "--thresholds", toml.to_str().unwrap()],
        LIMIT,
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    // The gate that is meant still works.
    let r = run(&["diff", b, b, "--fail-on", "step_time>+3%"], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn collect_verify_is_bounded_and_counts_ranks_once() {
    let r = run(
        &[
            "collect",
            "verify",
            common::samples_dir()
                .join("ascend-pt/db/level0")
                .to_str()
                .unwrap(),
            "--expected-ranks",
            "999999999",
        ],
        LIMIT,
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
}

#[test]
fn evidence_arithmetic_overflow_and_non_finite_values_are_errors() {
    use profscope::ingest::evidence::vllm_log;
    let line = "INFO 05-12 10:00:00 [gpu_model_runner.py:1] Loading model weights took inf GB";
    let e = vllm_log::parse_checked(line, "log.txt")
        .unwrap_err()
        .to_string();
    assert!(e.contains("log.txt:1") && e.contains("inf"), "{e}");
    let dir = tmp("st");
    let p = dir.join("model.safetensors");
    let header = br#"{"w": {"dtype": "F32", "shape": [4294967296, 4294967296, 4294967296], "data_offsets": [0, 0]}}"#;
    let mut b = (header.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(header);
    std::fs::write(&p, b).unwrap();
    let r = run(&["weights", p.to_str().unwrap()], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.stdout);
    assert!(r.stderr.contains("overflows"), "{}", r.stderr);
}

#[test]
fn messages_say_what_is_wrong_once() {
    let dir = tmp("msg");
    let f = dir.join("file");
    std::fs::write(&f, b"x").unwrap();
    let inside = f.join("trace.json");
    let r = run(&["analyze", inside.to_str().unwrap(), "--quiet"], LIMIT);
    assert_eq!(r.code, Some(2));
    assert_eq!(r.stderr.matches("os error 20").count(), 1, "{}", r.stderr);
    let u16 = dir.join("trace_utf16.json");
    let mut b = vec![0xFF, 0xFE];
    for c in "[{\"ph\": \"X\"}]".encode_utf16() {
        b.extend_from_slice(&c.to_le_bytes());
    }
    std::fs::write(&u16, b).unwrap();
    let r = run(&["analyze", u16.to_str().unwrap(), "--quiet"], LIMIT);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("UTF-16 is not supported"), "{}", r.stderr);
    let r = run(&["analyze", "--top", "-1"], LIMIT);
    assert_eq!(r.code, Some(2));
    assert!(!r.stderr.contains("unexpected argument"), "{}", r.stderr);
    assert!(r.stderr.contains("-1"), "{}", r.stderr);
}

/// What a mutant did to a db, for the failure message.
fn mutate(b: &mut Vec<u8>, ps: usize, rng: &mut common::Lcg) -> String {
    let pages = b.len() / ps;
    // A b-tree page (interior or leaf, table or index), chosen at random.
    let btree: Vec<u32> = (2..=pages as u32)
        .filter(|&n| matches!(b[page_at(ps, n).1], 0x02 | 0x05 | 0x0A | 0x0D))
        .collect();
    let n = btree[rng.next(btree.len())];
    let (start, h) = page_at(ps, n);
    let interior = b[h] == 0x05 || b[h] == 0x02;
    let targets = [
        n,
        0,
        1,
        pages as u32 + 5,
        u32::MAX,
        1 + rng.next(pages) as u32,
    ];
    match rng.next(7) {
        0 if interior => {
            let t = targets[rng.next(targets.len())];
            b[h + 8..h + 12].copy_from_slice(&t.to_be_bytes());
            format!("page {n}: right child -> {t}")
        }
        1 => {
            let cells = u16::from_be_bytes([b[h + 3], b[h + 4]]) as usize;
            let k = rng.next(cells.max(1));
            let at = h + if interior { 12 } else { 8 } + 2 * k;
            let off = rng.next(ps + 64) as u16;
            b[at..at + 2].copy_from_slice(&off.to_be_bytes());
            format!("page {n}: cell pointer {k} -> {off}")
        }
        2 => {
            let c = rng.next(70_000).min(65_535) as u16;
            b[h + 3..h + 5].copy_from_slice(&c.to_be_bytes());
            format!("page {n}: cell count -> {c}")
        }
        3 => {
            let t = [0x00, 0x02, 0x05, 0x0A, 0x0D, 0xFF][rng.next(6)];
            b[h] = t;
            format!("page {n}: type -> {t:#x}")
        }
        4 => {
            let at = start + rng.next(ps - 9);
            for x in &mut b[at..at + 9] {
                *x = 0xff;
            }
            format!("page {n}: 9-byte 0xff run at {}", at - start)
        }
        5 => {
            let k = 1 + rng.next(8);
            for _ in 0..k {
                let at = start + rng.next(ps);
                b[at] = rng.next(256) as u8;
            }
            format!("page {n}: {k} random bytes")
        }
        _ => {
            let cut = if rng.next(2) == 0 {
                (1 + rng.next(pages - 1)) * ps
            } else {
                100 + rng.next(b.len() - 100)
            };
            b.truncate(cut);
            format!("truncated at byte {cut}")
        }
    }
}

/// Thousands of crafted page mutations of the real dbs (cycles, wrapped lengths, wrong page
/// types, child pointers to page 0/1/past EOF, cut files): each ingest (direct b-tree reader, and
/// SQLite alone) ends within a time bound without a panic, events stay bounded by the file's
/// size, and where neither reader lost rows the two read the same events. A sample of the mutants
/// also goes through the binary (exit 0/1/2, no signal, no hang).
#[test]
fn mutated_real_dbs_never_panic_or_hang() {
    let dir = tmp("mutants");
    let mut rng = common::Lcg(16);
    let sources = [
        "ascend-pt/db/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
        "ascend-pt/db/level2/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1.db",
        "ascend-pt/msprof_0.db",
    ];
    let (mut agreed, mut differed, mut through_binary) = (0, 0, 0);
    for (s, rel) in sources.iter().enumerate() {
        let orig = std::fs::read(common::samples_dir().join(rel)).unwrap();
        let ps = u16::from_be_bytes([orig[16], orig[17]]) as usize;
        for k in 0..400 {
            let mut b = orig.clone();
            let what = mutate(&mut b, ps, &mut rng);
            let p = dir.join(format!("m{s}_{k}/ascend_pytorch_profiler_0.db"));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, &b).unwrap();
            let (tx, rx) = std::sync::mpsc::channel();
            let path = p.clone();
            std::thread::spawn(move || {
                let one = |direct| {
                    std::panic::catch_unwind(|| {
                        let mut bld = TablesBuilder::new();
                        let opts = DbOpts {
                            direct,
                            overlap_events: true,
                        };
                        ingest_file_with(path.to_str().unwrap(), &mut bld, opts)
                            .ok()
                            .map(|_| bld.finish())
                    })
                };
                let _ = tx.send((one(true), one(false)));
            });
            let (d, q) = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("{rel}: {what}: ingest hung"));
            let (d, q) = (
                d.unwrap_or_else(|_| panic!("{rel}: {what}: direct reader panicked")),
                q.unwrap_or_else(|_| panic!("{rel}: {what}: SQLite reader panicked")),
            );
            for t in [&d, &q].into_iter().flatten() {
                assert!(t.events.len() <= b.len(), "{rel}: {what}: unbounded events");
            }
            if let (Some(d), Some(q)) = (&d, &q) {
                let lost = |t: &Tables| {
                    t.diagnostics.count("truncated") + t.diagnostics.count("table_unreadable")
                };
                if lost(d) == 0 && lost(q) == 0 {
                    assert_eq!(events(d), events(q), "{rel}: {what}: readers disagree");
                    agreed += 1;
                } else {
                    differed += 1;
                }
            }
            if k % 20 == 0 {
                run(&["analyze", p.to_str().unwrap(), "--quiet"], LIMIT);
                through_binary += 1;
            }
            std::fs::remove_dir_all(p.parent().unwrap()).unwrap();
        }
    }
    eprintln!(
        "mutants: {agreed} read identically by both readers, {differed} with rows lost, {through_binary} through the binary"
    );
    assert!(agreed > 100);
}

/// Every file under `dir` (path, bytes), sorted: what "unchanged" is checked against.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Every command that reads a root leaves it byte-identical and creates nothing beside its files
/// (no SQLite journal, -wal or -shm): a db root and a text root, copied from the samples.
#[test]
fn inputs_stay_byte_identical_through_every_command() {
    let dir = tmp("identical");
    let root = dir.join("root");
    for (rel, name) in [
        (
            DB1,
            "db_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
        ),
        (
            "ascend-pt/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db",
            "db_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db",
        ),
        (
            TRACE1,
            "text_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        ),
    ] {
        copy(rel, &root, name);
    }
    let before = snapshot(&root);
    let r = root.to_str().unwrap();
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let o = |n: &str| out.join(n).to_str().unwrap().to_string();
    let (perfetto, parquet, html, save) = (o("t.json"), o("pq"), o("r.html"), o("s.json"));
    let cmds: Vec<Vec<&str>> = vec![
        vec!["analyze", r, "--quiet", "--save", &save],
        vec!["export", r, "--perfetto", &perfetto],
        vec!["export", r, "--parquet", &parquet],
        vec!["report", r, "--html", &html],
        vec!["diff", r, r],
        vec!["collect", "verify", r],
        vec!["memory", r],
    ];
    for c in &cmds {
        run(c, LIMIT);
    }
    assert_eq!(
        snapshot(&root),
        before,
        "a command changed or added a file under the root"
    );
}

/// Inputs the fuzzers crashed on (tests/fuzz_regressions/<target>-<hash>.*), replayed through the
/// same entry points. Release tests do not check integer overflow, so each also asserts the
/// values that made the crash (kernel_csv-ac55466b.csv: four rows of a real kernel_details.csv
/// mutated to last 1.7e15 µs, whose sum overflowed op_types' i64 total in the fuzz build).
#[test]
fn fuzz_regressions_replay() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut replayed = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let bytes = std::fs::read(e.path()).unwrap();
        if name.starts_with("kernel_csv-") {
            let mut b = TablesBuilder::new();
            profscope::ingest::msprof_csv::ingest_bytes("kernel_details.csv", &bytes, &mut b)
                .unwrap();
            let t = b.finish();
            let week = 7 * 24 * 3600 * 1_000_000_000i64;
            assert!(
                t.events.dur_ns.iter().all(|d| (0..=week).contains(&d)),
                "{name}"
            );
            if name == "kernel_csv-ac55466b.csv" {
                assert!(t.diagnostics.count("skipped_event") >= 4, "{name}");
            }
            let _ = profscope::registry::run_all(&t, &Default::default());
            replayed += 1;
        }
    }
    assert!(replayed >= 1);
}
