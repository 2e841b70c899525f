//! `collect case`, `collect analyse` and the manifest, without NPUs: a small HTTP service in the
//! test (127.0.0.1, random port) implements /health, /start_profile, /stop_profile and chat
//! completions, can be told to fail, and on /stop_profile writes rank folders like torch_npu
//! does before analyse (profiler_info_<rank>.json copied from the real sample root
//! ../shared/samples/ascend-pt/db/level1). The analyse step is one of the scripts in
//! fixtures/collect/ (success copies the real sample dbs; failure, hang, missing and empty
//! outputs). The service process we "start" is `sleep 300`, and `--serve-stop` touches a marker,
//! so each test can check that the service was stopped.

use crate::common::procs_mentioning;
use crate::common::validate_schema as validate;

use profscope::collect::case::{self, CaseOpts};
use profscope::collect::manifest::{Manifest, Workload};
use profscope::collect::verify::Export;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SAMPLE: &str = "../shared/samples/ascend-pt/db/level1";

#[derive(Clone, Default)]
struct Behaviour {
    never_ready: bool,
    start_status: u16,
    stop_status: u16,
    /// Every k-th benchmark request fails with 500 (0: none).
    fail_every: u64,
    /// Requests asking for exactly this many tokens fail (the follow-up).
    fail_max_tokens: Option<u64>,
    /// Rank folders written on stop.
    ranks: u32,
}

struct Mock {
    url: String,
    calls: Arc<Mutex<Vec<String>>>,
}

fn respond(s: &mut std::net::TcpStream, status: u16, body: &str) {
    let _ = write!(
        s,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

fn serve(b: Behaviour, profiler_dir: PathBuf) -> Mock {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let calls = Arc::new(Mutex::new(Vec::new()));
    let (c2, count) = (calls.clone(), Arc::new(Mutex::new(0u64)));
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let (b, calls, count, dir) =
                (b.clone(), c2.clone(), count.clone(), profiler_dir.clone());
            std::thread::spawn(move || {
                let mut s = s;
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut line = String::new();
                r.read_line(&mut line).unwrap();
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                let mut len = 0;
                loop {
                    let mut h = String::new();
                    r.read_line(&mut h).unwrap();
                    if h.trim().is_empty() {
                        break;
                    }
                    if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                r.read_exact(&mut body).unwrap();
                calls.lock().unwrap().push(path.clone());
                match path.as_str() {
                    "/health" => respond(&mut s, if b.never_ready { 503 } else { 200 }, "{}"),
                    "/start_profile" => respond(&mut s, b.start_status, "{}"),
                    "/stop_profile" => {
                        if b.stop_status == 200 {
                            for r in 0..b.ranks {
                                let d = dir.join(format!("rank{r}_ascend_pt"));
                                std::fs::create_dir_all(&d).unwrap();
                                let src = Path::new(SAMPLE).join(format!(
                                    "rank{}_ascend_pt/profiler_info_{}.json",
                                    r % 2,
                                    r % 2
                                ));
                                std::fs::copy(src, d.join(format!("profiler_info_{r}.json")))
                                    .unwrap();
                            }
                        }
                        respond(&mut s, b.stop_status, "{}")
                    }
                    "/v1/chat/completions" => {
                        let v: Value = serde_json::from_slice(&body).unwrap();
                        let max = v["max_tokens"].as_u64().unwrap();
                        let n = {
                            let mut c = count.lock().unwrap();
                            *c += 1;
                            *c
                        };
                        let fail = b.fail_max_tokens == Some(max)
                            || (b.fail_every > 0
                                && n % b.fail_every == 0
                                && Some(max) != b.fail_max_tokens.map(|_| 0));
                        if fail {
                            respond(&mut s, 500, r#"{"error":"injected"}"#)
                        } else {
                            respond(
                                &mut s,
                                200,
                                &format!(
                                    r#"{{"choices":[{{"message":{{"content":"x"}}}}],"usage":{{"completion_tokens":{max}}}}}"#
                                ),
                            )
                        }
                    }
                    _ => respond(&mut s, 404, "{}"),
                }
            });
        }
    });
    Mock { url, calls }
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("profscope-case-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn script(name: &str) -> String {
    let p = std::path::absolute(format!("fixtures/collect/{name}")).unwrap();
    let sample = std::path::absolute(SAMPLE).unwrap();
    format!(
        "sh '{}' {{dir}} {{export}} '{}'",
        p.display(),
        sample.display()
    )
}

fn opts(url: &str, work: &Path, analyse: &str) -> CaseOpts {
    CaseOpts {
        url: url.into(),
        serve_start: Some("sleep 300".into()),
        serve_stop: Some(format!("touch '{}'", work.join("stopped").display())),
        model: Some("/models/Qwen3-8B".into()),
        served_model_name: "qwen3".into(),
        tp: 2,
        dp: 1,
        mode: "enforce_eager".into(),
        workload: Workload {
            request_kind: "text".into(),
            prompt_tokens: 16,
            output_tokens: 32,
            total_requests: 10,
            concurrency: 3,
            success_threshold: 0.8,
            followup_output_tokens: 4,
        },
        profiler_dir: work.join("prof"),
        health_timeout: Duration::from_secs(2),
        control_timeout: Duration::from_secs(5),
        request_timeout: Duration::from_secs(5),
        stop_grace: Duration::from_millis(300),
        analyse_cmd: Some(script(analyse)),
        analyse_parallelism: 8,
        analyse_timeout: Duration::from_secs(30),
        export: Export::Db,
        archive_to: None,
        runs_dir: work.join("runs"),
        tag: "t".into(),
        knowledge: None,
    }
}

fn ok_service() -> Behaviour {
    Behaviour {
        start_status: 200,
        stop_status: 200,
        ranks: 2,
        ..Default::default()
    }
}

/// Runs a case against a mock with `b`; returns the manifest, the calls and whether the stop
/// command ran.
fn run_case(
    name: &str,
    b: Behaviour,
    analyse: &str,
    tweak: impl FnOnce(&mut CaseOpts),
) -> (Manifest, Vec<String>, bool, PathBuf) {
    let work = tmp(name);
    std::fs::create_dir_all(work.join("prof")).unwrap();
    let mock = serve(b, work.join("prof"));
    let mut o = opts(&mock.url, &work, analyse);
    tweak(&mut o);
    let m = case::run(&o);
    let calls = mock.calls.lock().unwrap().clone();
    let stopped = work.join("stopped").exists();
    (m, calls, stopped, work)
}

fn gates(m: &Manifest) -> Vec<String> {
    m.error
        .as_ref()
        .map(|e| e.gates.clone())
        .unwrap_or_default()
}

#[test]
fn happy_path_then_analyze_the_manifest() {
    let (m, calls, stopped, work) = run_case("ok", ok_service(), "analyse_ok.sh", |o| {
        o.archive_to = Some(o.profiler_dir.parent().unwrap().join("archive"));
    });
    assert_eq!(m.status, "ok", "{:?}", m.error);
    assert!(stopped, "the service we started was stopped");
    assert!(
        m.serve
            .stop_result
            .as_deref()
            .unwrap()
            .contains("terminated"),
        "{:?}",
        m.serve.stop_result
    );
    // 10 benchmark requests + 1 follow-up, bracketed by start/stop.
    let chats = calls
        .iter()
        .filter(|c| *c == "/v1/chat/completions")
        .count();
    assert_eq!(chats, 11);
    let i_start = calls.iter().position(|c| c == "/start_profile").unwrap();
    let i_stop = calls.iter().position(|c| c == "/stop_profile").unwrap();
    let chat_positions: Vec<usize> = calls
        .iter()
        .enumerate()
        .filter(|(_, c)| *c == "/v1/chat/completions")
        .map(|(i, _)| i)
        .collect();
    assert!(chat_positions.iter().all(|&i| i_start < i && i < i_stop));
    let b = m.benchmark_results.as_ref().unwrap();
    assert_eq!(
        (b.total, b.ok, b.failed, b.completion_tokens),
        (10, 10, 0, 320)
    );
    let ws = m.workload_status.as_ref().unwrap();
    assert_eq!((ws.bench_success_rate, ws.followup_ok), (1.0, true));
    assert_eq!((m.rank_count, m.expected_ranks), (2, 2));
    assert_eq!(m.analysis_status.as_deref(), Some("ok"));
    assert_eq!(m.analyse_parallelism, Some(2), "min(ranks, 8)");
    assert!(
        m.remote_profile_dirs
            .iter()
            .all(|d| d.analysis_status == "ok" && d.verify_status.as_deref() == Some("ok"))
    );
    assert!(m.archived && m.archive_error.is_none());
    // Each rank's analyse log was written.
    for d in &m.remote_profile_dirs {
        let log = std::fs::read_to_string(Path::new(&d.path).join("analyse_parallel.log")).unwrap();
        assert!(log.starts_with("analysed "), "{log}");
    }
    // The manifest validates against the schema in docs/, and analyze reads it.
    let path = case::write(&m, &work.join("runs")).unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string("docs/collect-manifest.schema.json").unwrap(),
    )
    .unwrap();
    if let Err(e) = validate(&v, &schema, "$") {
        panic!("manifest does not validate: {e}");
    }
    let out = crate::common::profscope_command()
        .args(["analyze", "--quiet", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The archived copy of the real level1 db root: ranks 0 and 1 (tests/it/collect.rs checks the
    // events per rank of the same archive against the source).
    let ranks: Vec<i64> = r["analyses"]["ranks"]["present"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    assert_eq!(ranks, [0, 1]);
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn service_never_ready_is_stopped() {
    let b = Behaviour {
        never_ready: true,
        ..ok_service()
    };
    let (m, calls, stopped, w) = run_case("never", b, "analyse_ok.sh", |o| {
        o.health_timeout = Duration::from_millis(800)
    });
    assert_eq!(m.status, "failed");
    assert_eq!(gates(&m), ["service_never_ready"]);
    assert!(!calls.contains(&"/start_profile".to_string()));
    assert!(stopped);
    let _ = std::fs::remove_dir_all(&w);
}

#[test]
fn start_and_stop_profile_errors() {
    let b = Behaviour {
        start_status: 500,
        ..ok_service()
    };
    let (m, calls, stopped, w) = run_case("start500", b, "analyse_ok.sh", |_| {});
    assert_eq!(gates(&m), ["start_profile_failed"]);
    assert_eq!(m.start_profile.as_ref().unwrap().http_status, Some(500));
    assert!(
        !calls.contains(&"/v1/chat/completions".to_string()),
        "no workload without a capture"
    );
    assert!(stopped);
    let _ = std::fs::remove_dir_all(&w);
    let b = Behaviour {
        stop_status: 503,
        ..ok_service()
    };
    let (m, _, stopped, w) = run_case("stop503", b, "analyse_ok.sh", |_| {});
    assert_eq!(gates(&m), ["stop_profile_failed"]);
    assert_eq!(
        m.analysis_status, None,
        "nothing analysed after a failed stop"
    );
    assert!(stopped);
    let _ = std::fs::remove_dir_all(&w);
}

#[test]
fn workload_gates() {
    // 10 requests, every 4th fails: 8/10 ok (80%) meets 0.8 ...
    let b = Behaviour {
        fail_every: 4,
        ..ok_service()
    };
    let (m, _, _, w) = run_case("80pct", b, "analyse_ok.sh", |_| {});
    let ws = m.workload_status.as_ref().unwrap();
    assert_eq!(
        (ws.bench_ok, ws.bench_total),
        (8, 10),
        "{:?}",
        m.benchmark_results
    );
    assert_eq!(m.status, "ok", "{:?}", m.error);
    let _ = std::fs::remove_dir_all(&w);
    // ... every 3rd fails: 7/10 (70%) does not; /stop_profile is still sent, the service stopped.
    let b = Behaviour {
        fail_every: 3,
        ..ok_service()
    };
    let (m, calls, stopped, w) = run_case("70pct", b, "analyse_ok.sh", |_| {});
    assert_eq!(m.workload_status.as_ref().unwrap().bench_ok, 7);
    assert_eq!(gates(&m), ["workload_below_threshold"]);
    assert!(calls.contains(&"/stop_profile".to_string()));
    assert_eq!(m.analysis_status, None);
    assert!(stopped);
    let _ = std::fs::remove_dir_all(&w);
    // The follow-up (4 tokens) fails alone.
    let b = Behaviour {
        fail_max_tokens: Some(4),
        ..ok_service()
    };
    let (m, _, stopped, w) = run_case("followup", b, "analyse_ok.sh", |_| {});
    assert_eq!(gates(&m), ["followup_failed"]);
    assert_eq!(m.workload_status.as_ref().unwrap().bench_ok, 10);
    assert!(stopped);
    let _ = std::fs::remove_dir_all(&w);
}

#[test]
fn known_failures_are_attached_to_a_failed_gate() {
    let kdir = tmp("knowledge");
    std::fs::write(
        kdir.join("serving.json"),
        r#"[{"id": "profiler-not-enabled", "symptom": "POST /start_profile returned HTTP 500 Internal Server Error", "resolution": "start vLLM with --profiler-config / VLLM_TORCH_PROFILER_DIR", "gates": ["start_profile_failed"]},
            {"id": "hccl-timeout", "symptom": "HCCL timeout on rank", "resolution": "raise HCCL_EXEC_TIMEOUT", "gates": ["analyse_failed"]}]"#,
    )
    .unwrap();
    std::fs::write(kdir.join("broken.json"), "{not json").unwrap();
    let b = Behaviour {
        start_status: 500,
        ..ok_service()
    };
    let (m, _, _, w) = run_case("kn", b, "analyse_ok.sh", |o| {
        o.knowledge = Some(kdir.clone())
    });
    let e = m.error.as_ref().unwrap();
    // Symptom words: post, start_profile, returned, http, 500, internal, server, error; the
    // message `POST /start_profile: {}` holds 2 of 8 (0.25), plus 0.5 for the gate.
    let got: Vec<(&str, f64)> = e
        .knowledge_matches
        .iter()
        .map(|k| (k.id.as_str(), k.score))
        .collect();
    assert_eq!(got, [("profiler-not-enabled", 0.75)]);
    assert!(e.knowledge_matches[0].file.ends_with("serving.json"));
    let _ = std::fs::remove_dir_all(&w);
    let _ = std::fs::remove_dir_all(&kdir);
}

#[test]
fn rank_and_output_gates() {
    // One rank folder for tp 2.
    let b = Behaviour {
        ranks: 1,
        ..ok_service()
    };
    let (m, _, stopped, w) = run_case("onerank", b, "analyse_ok.sh", |_| {});
    assert_eq!(gates(&m), ["rank_count_mismatch"]);
    assert_eq!(m.rank_count, 1);
    assert!(stopped);
    let _ = std::fs::remove_dir_all(&w);
    // analyse exits 0 but writes nothing / an empty db: verify fails the ranks.
    for (script, name) in [
        ("analyse_missing.sh", "missing"),
        ("analyse_empty.sh", "empty"),
    ] {
        let (m, _, stopped, w) = run_case(name, ok_service(), script, |_| {});
        assert_eq!(gates(&m), ["rank_not_ok"], "{script}");
        assert!(
            m.remote_profile_dirs
                .iter()
                .all(|d| d.verify_status.as_deref() == Some("partial"))
        );
        assert!(stopped);
        let _ = std::fs::remove_dir_all(&w);
    }
    // analyse non-zero.
    let (m, _, _, w) = run_case("afail", ok_service(), "analyse_fail.sh", |_| {});
    assert_eq!(gates(&m)[0], "analyse_failed");
    assert_eq!(m.analysis_status.as_deref(), Some("failed"));
    let log = std::fs::read_to_string(
        Path::new(&m.remote_profile_dirs[0].path).join("analyse_parallel.log"),
    )
    .unwrap();
    assert!(log.contains("analyse failed for"), "stderr captured: {log}");
    let _ = std::fs::remove_dir_all(&w);
    // analyse hangs: killed by the overall timeout.
    let t = std::time::Instant::now();
    let (m, _, _, w) = run_case("hang", ok_service(), "analyse_hang.sh", |o| {
        o.analyse_timeout = Duration::from_secs(1)
    });
    assert!(t.elapsed() < Duration::from_secs(20), "the hang was killed");
    assert_eq!(gates(&m)[0], "analyse_timeout");
    assert!(
        m.remote_profile_dirs
            .iter()
            .all(|d| d.analysis_status == "timeout")
    );
    // The whole process group died: no `sh analyse_hang.sh` is left behind.
    let left = procs_mentioning(&w.join("prof").display().to_string());
    assert!(left.is_empty(), "orphans: {left:?}");
    let _ = std::fs::remove_dir_all(&w);
}

#[test]
fn preflight_and_archive_failure() {
    // A profiler dir that already holds a rank folder is refused before anything starts.
    let work = tmp("preflight");
    std::fs::create_dir_all(work.join("prof/old_ascend_pt")).unwrap();
    let mock = serve(ok_service(), work.join("prof"));
    let m = case::run(&opts(&mock.url, &work, "analyse_ok.sh"));
    assert_eq!(gates(&m), ["profiler_dir_not_empty"]);
    assert!(mock.calls.lock().unwrap().is_empty());
    assert!(!work.join("stopped").exists(), "nothing was started");
    let _ = std::fs::remove_dir_all(&work);
    // Archiving into a regular file fails the copy: recorded, status stays ok.
    let (m, _, _, w) = run_case("archfail", ok_service(), "analyse_ok.sh", |o| {
        let f = o.profiler_dir.parent().unwrap().join("file");
        std::fs::write(&f, "x").unwrap();
        o.archive_to = Some(f);
    });
    assert_eq!(m.status, "ok");
    assert!(!m.archived);
    assert!(m.archive_error.is_some());
    let _ = std::fs::remove_dir_all(&w);
}

#[test]
fn collect_analyse_cli_runs_ranks_in_parallel() {
    let work = tmp("cli-analyse");
    for r in 0..2 {
        let d = work.join(format!("rank{r}_ascend_pt"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy(
            Path::new(SAMPLE).join(format!("rank{r}_ascend_pt/profiler_info_{r}.json")),
            d.join(format!("profiler_info_{r}.json")),
        )
        .unwrap();
    }
    let out = crate::common::profscope_command()
        .args(["collect", "analyse"])
        .arg(&work)
        .args([
            "--analyse-cmd",
            &script("analyse_ok.sh"),
            "--parallelism",
            "8",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["parallelism"], 2);
    assert_eq!(v["ranks"].as_array().unwrap().len(), 2);
    // Then verify passes on what it wrote.
    let st = crate::common::profscope_command()
        .args(["collect", "verify"])
        .arg(&work)
        .args(["--expected-ranks", "2"])
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stdout)
    );
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn the_schema_checker_rejects_a_bad_manifest() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string("docs/collect-manifest.schema.json").unwrap(),
    )
    .unwrap();
    let mut m = serde_json::to_value(Manifest {
        schema_version: "1.0.0".into(),
        kind: "profscope_collect_manifest".into(),
        status: "ok".into(),
        expected_output_kind: "db".into(),
        workload: Workload {
            request_kind: "text".into(),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    validate(&m, &schema, "$").unwrap();
    m["status"] = "maybe".into();
    assert!(validate(&m, &schema, "$").unwrap_err().contains("status"));
    m["status"] = "ok".into();
    m.as_object_mut().unwrap().remove("rank_count");
    assert!(
        validate(&m, &schema, "$")
            .unwrap_err()
            .contains("rank_count")
    );
}
