//! `collect memory` without NPUs (issue 21). A fake `npu-smi` (a shell script) replays tables
//! derived from the real 2-card capture
//! ../shared/samples/npu-smi/vllm-ascend-5606_a2-910b4-1_2card_vllmworker-tp_npu-smi-25.2.2.txt
//! (only the HBM-used cells changed, and for the idle table the process rows replaced by the
//! "No running processes found" rows npu-smi prints): which table it prints is chosen by a state
//! file that the in-test HTTP service writes (`ready` before traffic, a cycle of four `busy`
//! tables while chat requests run, `post` after the last one). The scripted maximum is therefore
//! known before the run: device 0 peaks at 64100 MB (busy table 2), device 1 at 64200 MB (busy
//! table 1), and the busiest whole table is busy table 1 (63900 + 64200 = 128100 MB).

use crate::common;
use crate::common::procs_mentioning;

use profscope::collect::manifest::Workload;
use profscope::collect::memory::{self, Baseline, MemoryOpts};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const SMI: &str =
    "../shared/samples/npu-smi/vllm-ascend-5606_a2-910b4-1_2card_vllmworker-tp_npu-smi-25.2.2.txt";
const LOG: &str = "../shared/samples/vllm-logs/mooncake-2827_vllm-ascend_dsv4-flash_dp2-tp8_free-memory-summary-excerpt.log";
const MODULE_MEM: &str = "../shared/samples/ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/npu_module_mem.csv";

/// HBM used per device (MB) in the busy tables, in the order the fake prints them.
const BUSY: [(u64, u64); 4] = [
    (62000, 61900),
    (63900, 64200),
    (64100, 63100),
    (63000, 62500),
];

/// The real table with device 0 / 1 HBM used set to `used` (the real value is 61825 on both).
fn table(used: (u64, u64), idle: bool) -> String {
    let real = std::fs::read_to_string(SMI).unwrap();
    let mut out = String::new();
    let mut k = 0;
    let mut in_procs = false;
    for line in real.lines() {
        if line.contains("61825/ 65536") {
            let u = if k == 0 { used.0 } else { used.1 };
            k += 1;
            out += &line.replace("61825/ 65536", &format!("{u:<5}/ 65536"));
        } else if idle && line.contains("VLLMWorker_TP") {
            // npu-smi's row when an NPU has no process (tests/it/memory.rs writes the same).
            let npu = if in_procs { 1 } else { 0 };
            in_procs = true;
            out += &format!("| No running processes found in NPU {npu:<61}|");
        } else {
            out += line;
        }
        out.push('\n');
    }
    assert_eq!(k, 2, "both HBM cells replaced");
    out
}

/// The fake npu-smi: `info` prints the table of the current state; `fail` exits 1 as a broken
/// driver does.
fn fake_npu_smi(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("idle.txt"), table((3100, 3050), true)).unwrap();
    std::fs::write(dir.join("ready.txt"), table((61825, 61825), false)).unwrap();
    for (i, u) in BUSY.iter().enumerate() {
        std::fs::write(dir.join(format!("busy_{i}.txt")), table(*u, false)).unwrap();
    }
    std::fs::write(dir.join("post.txt"), table((61900, 61890), false)).unwrap();
    let script = dir.join("npu-smi");
    std::fs::write(
        &script,
        r#"#!/bin/sh
d="$(dirname "$0")"
[ "$1" = info ] || { echo "usage: npu-smi info" >&2; exit 2; }
state=$(cat "$d/state")
case "$state" in
  busy) n=$(cat "$d/count" 2>/dev/null || echo 0); echo $((n + 1)) > "$d/count"; cat "$d/busy_$((n % 4)).txt" ;;
  fail) echo "dcmi module initialize failed. ret is -8005"; exit 1 ;;
  *) cat "$d/$state.txt" ;;
esac
"#,
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// Sets the fake's state atomically (a rename), so npu-smi never reads a half-written file.
fn set_state(dir: &Path, state: &str) {
    let tmp = dir.join(format!("state.{:?}", std::thread::current().id()));
    std::fs::write(&tmp, state).unwrap();
    std::fs::rename(&tmp, dir.join("state")).unwrap();
}

#[derive(Clone, Copy, Default)]
struct Behaviour {
    /// Requests the workload sends (the state turns `post` after the last).
    total: u64,
    /// After this many requests the service stops answering anything.
    die_after: Option<u64>,
    /// After this many requests npu-smi starts failing.
    npu_smi_fails_after: Option<u64>,
}

fn respond(s: &mut std::net::TcpStream, status: u16, body: &str) {
    let _ = write!(
        s,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// The service: /health, and chat completions that take 60 ms each and drive the fake's state.
fn serve(b: Behaviour, smi_dir: PathBuf) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let served = Arc::new(AtomicU64::new(0));
    let dead = Arc::new(AtomicBool::new(false));
    // Once npu-smi is broken it stays broken (a later request must not write `busy` over it).
    let broken = Arc::new(AtomicBool::new(false));
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let (served, dead, broken, dir) = (
                served.clone(),
                dead.clone(),
                broken.clone(),
                smi_dir.clone(),
            );
            std::thread::spawn(move || {
                if dead.load(Ordering::SeqCst) {
                    return; // the connection closes unanswered
                }
                let mut s = s;
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut line = String::new();
                let _ = r.read_line(&mut line);
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                let mut len = 0;
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                    if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                let _ = r.read_exact(&mut body);
                match path.as_str() {
                    "/health" => {
                        // The model is loaded once the service answers: an idle fake turns ready.
                        let state = dir.join("state");
                        if std::fs::read_to_string(&state).is_ok_and(|x| x.trim() == "idle") {
                            set_state(&dir, "ready");
                        }
                        respond(&mut s, 200, "{}")
                    }
                    "/v1/chat/completions" => {
                        if !broken.load(Ordering::SeqCst) {
                            set_state(&dir, "busy");
                        }
                        std::thread::sleep(Duration::from_millis(60));
                        let n = served.fetch_add(1, Ordering::SeqCst) + 1;
                        if b.die_after.is_some_and(|d| n > d) {
                            dead.store(true, Ordering::SeqCst);
                            return;
                        }
                        if b.npu_smi_fails_after.is_some_and(|d| n >= d) {
                            broken.store(true, Ordering::SeqCst);
                            set_state(&dir, "fail");
                        } else if n == b.total {
                            set_state(&dir, "post");
                        }
                        respond(
                            &mut s,
                            200,
                            r#"{"choices":[{"message":{"content":"x"}}],"usage":{"completion_tokens":8}}"#,
                        );
                    }
                    _ => respond(&mut s, 404, "{}"),
                }
            });
        }
    });
    url
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("profscope-cmem-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn opts(url: &str, smi: &Path, work: &Path, total: u64) -> MemoryOpts {
    MemoryOpts {
        url: url.into(),
        serve_start: None,
        serve_stop: None,
        served_model_name: "qwen3".into(),
        workload: Workload {
            request_kind: "text".into(),
            prompt_tokens: 8,
            output_tokens: 8,
            total_requests: total,
            concurrency: 2,
            success_threshold: 0.8,
            followup_output_tokens: 0,
        },
        health_timeout: Duration::from_secs(5),
        request_timeout: Duration::from_secs(5),
        stop_grace: Duration::from_millis(300),
        npu_smi: smi.display().to_string(),
        npu_smi_timeout: Duration::from_secs(5),
        sample_every: Duration::from_millis(20),
        baseline: Baseline::Now,
        vllm_log: Some(PathBuf::from(LOG)),
        model: None,
        tp: 2,
        dp: 1,
        expert_parallel: false,
        runs_dir: work.join("runs"),
        tag: "mem".into(),
    }
}

fn profscope(args: &[&str]) -> std::process::Output {
    crate::common::profscope_command()
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn every_phase_captured_and_the_report_reads_the_run_folder() {
    let work = tmp("phases");
    let smi = fake_npu_smi(&work);
    set_state(&work, "idle");
    let url = serve(
        Behaviour {
            total: 24,
            ..Default::default()
        },
        work.clone(),
    );
    // The fake is idle until the service first answers /health (the mock turns it `ready`).
    let mut o = opts(&url, &smi, &work, 24);
    o.serve_start = Some("exec sleep 302".into());
    let (m, dir) = memory::run(&o).unwrap();
    assert_eq!(m.failed_phase, None, "{:?}", m.error);
    // The manifest on disk validates against docs/collect-memory-manifest.schema.json.
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string("docs/collect-memory-manifest.schema.json").unwrap(),
    )
    .unwrap();
    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    if let Err(e) = common::validate_schema(&on_disk, &schema, "$") {
        panic!("manifest does not validate: {e}");
    }
    let roles: Vec<&str> = m.snapshots.iter().map(|s| s.role.as_str()).collect();
    assert_eq!(roles, ["idle", "ready", "peak", "post_inference"]);
    let used = |role: &str| {
        m.snapshots
            .iter()
            .find(|s| s.role == role)
            .unwrap()
            .hbm_used_mb
            .clone()
    };
    assert_eq!(
        used("idle").values().copied().collect::<Vec<_>>(),
        [3100, 3050]
    );
    assert_eq!(
        used("ready").values().copied().collect::<Vec<_>>(),
        [61825, 61825]
    );
    assert_eq!(
        used("post_inference").values().copied().collect::<Vec<_>>(),
        [61900, 61890]
    );
    // The peak: the busiest whole table is busy table 1; per device the scripted maxima.
    assert_eq!(
        used("peak").values().copied().collect::<Vec<_>>(),
        [63900, 64200]
    );
    let max: Vec<(u32, u64)> = m
        .sampling
        .per_device_max
        .iter()
        .map(|d| (d.device, d.hbm_used_mb))
        .collect();
    assert!(m.sampling.samples >= 8, "{} samples", m.sampling.samples);
    assert_eq!(max, [(0, 64100), (1, 64200)]);
    assert_eq!(
        std::fs::read_to_string(dir.join("npu-smi-peak.txt")).unwrap(),
        table(BUSY[1], false)
    );
    let lines = std::fs::read_to_string(dir.join("samples.jsonl")).unwrap();
    assert_eq!(lines.lines().count() as u64, m.sampling.samples);
    // Hashes are of the files written.
    for s in &m.snapshots {
        let bytes = std::fs::read(dir.join(&s.file)).unwrap();
        assert_eq!(s.sha256, profscope::collect::sha256::hex_of(&bytes));
    }
    // Incomplete until msprof module memory is merged, and it says so.
    assert_eq!(m.status, "incomplete");
    assert_eq!(m.missing.len(), 2, "{:?}", m.missing);
    assert!(
        m.missing
            .iter()
            .any(|x| x.starts_with("msprof module memory"))
    );
    assert!(m.missing.iter().any(|x| x.starts_with("checkpoint")));
    assert_eq!(m.serve.stop_result.as_deref(), Some("terminated"));
    assert!(procs_mentioning(&work.display().to_string()).is_empty());
    assert!(procs_mentioning("sleep 302").is_empty());

    // `profscope memory RUN_DIR` == the same files passed by hand with their roles.
    let by_dir = profscope(&["memory", "--format", "json", dir.to_str().unwrap()]);
    assert!(
        by_dir.status.success(),
        "{}",
        String::from_utf8_lossy(&by_dir.stderr)
    );
    let f = |n: &str| dir.join(n).display().to_string();
    let by_hand = profscope(&[
        "memory",
        "--format",
        "json",
        "--tp",
        "2",
        "--npu-smi",
        &format!("idle={}", f("npu-smi-idle.txt")),
        "--npu-smi",
        &format!("ready={}", f("npu-smi-ready.txt")),
        "--npu-smi",
        &format!("peak={}", f("npu-smi-peak.txt")),
        "--npu-smi",
        &format!("post_inference={}", f("npu-smi-post-inference.txt")),
        &f("vllm.log"),
    ]);
    assert!(
        by_hand.status.success(),
        "{}",
        String::from_utf8_lossy(&by_hand.stderr)
    );
    let a: Value = serde_json::from_slice(&by_dir.stdout).unwrap();
    let b: Value = serde_json::from_slice(&by_hand.stdout).unwrap();
    assert_eq!(a["run"]["attribution"], b["run"]["attribution"]);
    // Written beside the evidence.
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(saved["run"]["attribution"], a["run"]["attribution"]);
    assert!(dir.join("report.txt").exists());
    // Fixed overhead from the idle table (3100 MB on device 0); activations = peak − ready.
    let dev0 = &a["run"]["attribution"]["devices"][0];
    let comp = |n: &str| {
        dev0["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == n)
            .unwrap()["bytes"]
            .clone()
    };
    assert_eq!(comp("fixed_overhead"), 3100u64 << 20);
    assert_eq!(comp("activations"), (63900u64 - 61825) << 20);

    // msprof module memory merged after the service stopped: complete but for the checkpoint.
    let prof = work.join("prof/PROF_1/mindstudio_profiler_output");
    std::fs::create_dir_all(&prof).unwrap();
    std::fs::copy(MODULE_MEM, prof.join("npu_module_mem.csv")).unwrap();
    let out = profscope(&[
        "collect",
        "memory",
        "--resume-run",
        dir.to_str().unwrap(),
        "--msprof",
        work.join("prof").to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m2 = memory::read_manifest(&dir).unwrap();
    assert_eq!(m2.missing.len(), 1, "{:?}", m2.missing);
    assert!(m2.evidence.iter().any(|e| e.kind == "msprof_module_mem"));
    let after = profscope(&["memory", "--format", "json", dir.to_str().unwrap()]);
    let a2: Value = serde_json::from_slice(&after.stdout).unwrap();
    // npu_module_mem.csv of rank 0 (NPU:0): HCCL max 404.0625 MB (tests/it/memory.rs).
    let hccl = a2["run"]["attribution"]["devices"][0]["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "hccl")
        .unwrap()["bytes"]
        .as_i64()
        .unwrap();
    assert_eq!(hccl, (404.0625 * (1u64 << 20) as f64) as i64);

    // A second run with the same tag gets its own folder.
    set_state(&work, "ready");
    std::fs::remove_file(work.join("count")).ok();
    let url2 = serve(
        Behaviour {
            total: 4,
            ..Default::default()
        },
        work.clone(),
    );
    let mut o2 = opts(&url2, &smi, &work, 4);
    o2.baseline = Baseline::From(dir.clone());
    let (m3, dir2) = memory::run(&o2).unwrap();
    assert_ne!(dir, dir2);
    assert!(dir.join("report.json").exists(), "the first run is intact");
    assert_eq!(m3.snapshots[0].role, "idle");
    assert!(m3.snapshots[0].source.contains("npu-smi-idle.txt"));
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn a_busy_baseline_is_refused_and_the_run_says_what_is_missing() {
    let work = tmp("refused");
    let smi = fake_npu_smi(&work);
    set_state(&work, "ready");
    let url = serve(
        Behaviour {
            total: 6,
            ..Default::default()
        },
        work.clone(),
    );
    let (m, dir) = memory::run(&opts(&url, &smi, &work, 6)).unwrap();
    assert_eq!(m.status, "incomplete");
    let refused = m
        .missing
        .iter()
        .find(|x| x.starts_with("idle baseline"))
        .unwrap();
    // The real table's processes: pid 19334 on NPU 0 and 19341 on NPU 1, both VLLMWorker_TP.
    assert!(
        refused.contains("pid 19334 (VLLMWorker_TP) on NPU 0")
            && refused.contains("pid 19341 (VLLMWorker_TP) on NPU 1"),
        "{refused}"
    );
    assert!(m.snapshots.iter().all(|s| s.role != "idle"));
    let out = profscope(&["memory", "--format", "json", dir.to_str().unwrap()]);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["run"]["attribution"]["status"], "incomplete");
    let fixed = r["run"]["attribution"]["devices"][0]["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "fixed_overhead")
        .unwrap()
        .clone();
    assert!(fixed["bytes"].is_null(), "{fixed}");
    let _ = std::fs::remove_dir_all(&work);
}

/// The service dies mid-workload: the snapshots taken are kept, the run is `failed` in phase
/// `workload` and says the service stopped answering; the service we started (a `sleep`) and
/// every npu-smi are gone.
#[test]
fn service_death_and_npu_smi_failure_leave_nothing_running() {
    let work = tmp("death");
    let smi = fake_npu_smi(&work);
    set_state(&work, "ready");
    let url = serve(
        Behaviour {
            total: 20,
            die_after: Some(4),
            ..Default::default()
        },
        work.clone(),
    );
    let mut o = opts(&url, &smi, &work, 20);
    o.baseline = Baseline::Missing;
    o.serve_start = Some("exec sleep 301".into());
    let (m, dir) = memory::run(&o).unwrap();
    assert_eq!(m.status, "failed");
    assert_eq!(m.failed_phase.as_deref(), Some("workload"));
    let e = m.error.clone().unwrap();
    assert!(
        e.contains("4 of 20 requests succeeded") && e.contains("stopped answering"),
        "{e}"
    );
    assert!(dir.join("npu-smi-ready.txt").exists() && dir.join("npu-smi-peak.txt").exists());
    assert!(dir.join("manifest.json").exists());
    assert!(procs_mentioning(&work.display().to_string()).is_empty());
    assert!(procs_mentioning("sleep 301").is_empty());

    // npu-smi fails from the 3rd request on: the samples before are kept, sampling says when it
    // stopped, and the post snapshot names the command and its first line.
    let work2 = tmp("smifail");
    let smi2 = fake_npu_smi(&work2);
    set_state(&work2, "ready");
    let url2 = serve(
        Behaviour {
            total: 10,
            npu_smi_fails_after: Some(3),
            ..Default::default()
        },
        work2.clone(),
    );
    let mut o2 = opts(&url2, &smi2, &work2, 10);
    o2.baseline = Baseline::Missing;
    let (m2, _) = memory::run(&o2).unwrap();
    assert_eq!(m2.failed_phase.as_deref(), Some("post"));
    let e2 = m2.error.unwrap();
    assert!(
        e2.contains(&format!("`{} info` failed", smi2.display()))
            && e2.contains("dcmi module initialize failed"),
        "{e2}"
    );
    assert!(m2.sampling.samples >= 1);
    assert!(
        m2.sampling
            .stopped_early
            .as_deref()
            .unwrap()
            .contains("dcmi module")
    );
    assert!(m2.snapshots.iter().any(|s| s.role == "peak"));
    assert!(procs_mentioning(&work2.display().to_string()).is_empty());

    // npu-smi that is not there: the error names the command, the run is failed at `ready`.
    let url3 = serve(
        Behaviour {
            total: 2,
            ..Default::default()
        },
        work2.clone(),
    );
    let mut o3 = opts(&url3, Path::new("/nonexistent/npu-smi"), &work2, 2);
    o3.baseline = Baseline::Missing;
    let (m3, _) = memory::run(&o3).unwrap();
    assert_eq!(m3.failed_phase.as_deref(), Some("ready"));
    assert!(
        m3.error
            .unwrap()
            .contains("cannot run `/nonexistent/npu-smi info`"),
    );
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_dir_all(&work2);
}
