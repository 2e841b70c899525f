//! `collect case`: capture one profiling case from a vLLM-style service end to end.
//! preflight (the profiler dir holds no rank folder yet) → start the service if asked
//! (`--serve-start`) → health wait → POST `/start_profile` → a benchmark wave of concurrent chat
//! completions → one short follow-up → POST `/stop_profile` → stop the service if we started it →
//! per-rank analyse → verify (tp × dp ranks) → optional archive → manifest. After the service is
//! started, every exit path tries to stop it (the stop command, then SIGTERM, then SIGKILL of its
//! process group), so no orphan is left. Progress goes to stderr as one JSON object per line.

use super::Outcome;
use super::analyse::{self, RankRunStatus, kill_group};
use super::archive;
use super::http::{self, Response};
use super::manifest::*;
use super::progress::now;
pub use super::progress::progress;
use super::verify::{self, Export};
use serde_json::json;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct CaseOpts {
    pub url: String,
    pub serve_start: Option<String>,
    pub serve_stop: Option<String>,
    pub model: Option<String>,
    pub served_model_name: String,
    pub tp: u32,
    pub dp: u32,
    pub mode: String,
    pub workload: Workload,
    pub profiler_dir: PathBuf,
    pub health_timeout: Duration,
    pub control_timeout: Duration,
    pub request_timeout: Duration,
    pub stop_grace: Duration,
    pub analyse_cmd: Option<String>,
    pub analyse_parallelism: usize,
    pub analyse_timeout: Duration,
    pub export: Export,
    pub archive_to: Option<PathBuf>,
    pub runs_dir: PathBuf,
    pub tag: String,
    /// Known-failure signatures to match against a failed gate.
    pub knowledge: Option<PathBuf>,
}

fn call(
    method: &str,
    url: &str,
    path: &str,
    body: Option<&serde_json::Value>,
    timeout: Duration,
) -> (Call, Option<Response>) {
    let t = Instant::now();
    match http::request(method, url, path, body, timeout) {
        Ok(r) => (
            Call {
                ok: r.ok(),
                http_status: Some(r.status),
                wall_s: t.elapsed().as_secs_f64(),
                detail: r.body.chars().take(500).collect(),
            },
            Some(r),
        ),
        Err(e) => (
            Call {
                ok: false,
                http_status: None,
                wall_s: t.elapsed().as_secs_f64(),
                detail: e.to_string(),
            },
            None,
        ),
    }
}

/// A 1×1 PNG for `vl` requests.
const PIXEL: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

fn chat_body(o: &CaseOpts, max_tokens: u64) -> serde_json::Value {
    chat_request(&o.served_model_name, &o.workload, max_tokens)
}

/// One chat completion request of the workload.
fn chat_request(served_model_name: &str, w: &Workload, max_tokens: u64) -> serde_json::Value {
    let prompt = "hello ".repeat(w.prompt_tokens.max(1) as usize);
    let content = if w.request_kind == "vl" {
        json!([{"type": "text", "text": prompt}, {"type": "image_url", "image_url": {"url": PIXEL}}])
    } else {
        json!(prompt)
    };
    json!({
        "model": served_model_name,
        "messages": [{"role": "user", "content": content}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "ignore_eos": true,
    })
}

/// A chat completion counts when it is 2xx with at least one choice.
fn completion_ok(r: &Response) -> Option<u64> {
    if !r.ok() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&r.body).ok()?;
    if v["choices"].as_array().is_none_or(|c| c.is_empty()) {
        return None;
    }
    Some(v["usage"]["completion_tokens"].as_u64().unwrap_or(0))
}

fn benchmark(o: &CaseOpts) -> Benchmark {
    run_workload(&o.url, &o.served_model_name, &o.workload, o.request_timeout)
}

/// The benchmark wave: `total_requests` chat completions, `concurrency` at a time.
pub(crate) fn run_workload(
    url: &str,
    served_model_name: &str,
    w: &Workload,
    request_timeout: Duration,
) -> Benchmark {
    let total = w.total_requests;
    let next = Arc::new(AtomicU64::new(0));
    let out = Arc::new(Mutex::new((
        Vec::<f64>::new(),
        0u64,
        0u64,
        Vec::<String>::new(),
    )));
    let body = Arc::new(chat_request(served_model_name, w, w.output_tokens));
    let t0 = Instant::now();
    let threads: Vec<_> = (0..w.concurrency.clamp(1, total.max(1)))
        .map(|_| {
            let (next, out, body, url, timeout) = (
                next.clone(),
                out.clone(),
                body.clone(),
                url.to_string(),
                request_timeout,
            );
            std::thread::spawn(move || {
                while next.fetch_add(1, Ordering::Relaxed) < total {
                    let t = Instant::now();
                    let r =
                        http::request("POST", &url, "/v1/chat/completions", Some(&body), timeout);
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    let mut g = out.lock().unwrap();
                    match r.as_ref().ok().and_then(completion_ok) {
                        Some(tokens) => {
                            g.0.push(ms);
                            g.1 += 1;
                            g.2 += tokens;
                        }
                        None => {
                            if g.3.len() < 5 {
                                g.3.push(match r {
                                    Ok(r) => format!(
                                        "HTTP {}: {}",
                                        r.status,
                                        r.body.chars().take(200).collect::<String>()
                                    ),
                                    Err(e) => e.to_string(),
                                });
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
    let (mut lat, ok, tokens, errors) = std::mem::take(&mut *out.lock().unwrap());
    lat.sort_by(f64::total_cmp);
    let q = |p: f64| (!lat.is_empty()).then(|| lat[((lat.len() - 1) as f64 * p).round() as usize]);
    Benchmark {
        total,
        ok,
        failed: total - ok,
        wall_s: t0.elapsed().as_secs_f64(),
        latency_ms_p50: q(0.5),
        latency_ms_p90: q(0.9),
        latency_ms_max: lat.last().copied(),
        completion_tokens: tokens,
        errors,
    }
}

/// A service we may have started (`--serve-start`); stopped on every exit path.
pub(crate) struct Service {
    pub(crate) child: Option<Child>,
}

impl Service {
    /// Starts `cmd` in its own process group.
    pub(crate) fn start(cmd: &str) -> std::io::Result<Service> {
        let c = Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()?;
        progress("service_started", json!({"pid": c.id(), "cmd": cmd}));
        Ok(Service { child: Some(c) })
    }

    fn stop(&mut self, o: &CaseOpts) -> Option<String> {
        self.stop_with(o.serve_stop.as_deref(), o.stop_grace)
    }

    /// Stops what we started: the stop command, then SIGTERM to the group, then SIGKILL.
    pub(crate) fn stop_with(&mut self, stop_cmd: Option<&str>, grace: Duration) -> Option<String> {
        let mut c = self.child.take()?;
        let mut how = "already_exited".to_string();
        if let Some(cmd) = stop_cmd {
            let st = Command::new("sh")
                .arg("-c")
                .arg(cmd)
                .stdin(Stdio::null())
                .status();
            how = format!(
                "stop_cmd exit {}",
                st.map_or(-1, |s| s.code().unwrap_or(-1))
            );
        }
        let wait_exit = |c: &mut Child, d: Duration| {
            let t = Instant::now();
            while t.elapsed() < d {
                if let Ok(Some(_)) = c.try_wait() {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            false
        };
        if !wait_exit(
            &mut c,
            if stop_cmd.is_some() {
                grace
            } else {
                Duration::ZERO
            },
        ) {
            let _ = Command::new("kill")
                .args(["-s", "TERM", "--"])
                .arg(format!("-{}", c.id()))
                .stderr(Stdio::null())
                .status();
            if wait_exit(&mut c, grace) {
                how = "terminated".into();
            } else {
                kill_group(&mut c);
                how = "killed".into();
            }
        }
        progress("service_stopped", json!({"how": how}));
        Some(how)
    }
}

fn fail(m: &mut Manifest, stage: &str, gates: &[&str], message: String) {
    progress(
        "failed",
        json!({"stage": stage, "gates": gates, "message": message}),
    );
    if m.error.is_none() {
        m.error = Some(ManifestError {
            stage: stage.into(),
            message,
            gates: gates.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        });
    } else if let Some(e) = &mut m.error {
        e.gates.extend(gates.iter().map(|g| g.to_string()));
    }
    m.status = "failed".into();
    m.failed_at.get_or_insert_with(now);
}

pub fn run(o: &CaseOpts) -> Manifest {
    let mut m = Manifest {
        schema_version: MANIFEST_SCHEMA_VERSION.into(),
        kind: "profscope_collect_manifest".into(),
        tag: o.tag.clone(),
        started_at: now(),
        model: o.model.clone(),
        served_model_name: o.served_model_name.clone(),
        tp: o.tp,
        dp: o.dp,
        mode: o.mode.clone(),
        workload: o.workload.clone(),
        expected_ranks: o.tp * o.dp.max(1),
        serve: Serve {
            url: o.url.clone(),
            start_cmd: o.serve_start.clone(),
            stop_cmd: o.serve_stop.clone(),
            ..Default::default()
        },
        remote_profile_root: std::path::absolute(&o.profiler_dir)
            .unwrap_or_else(|_| o.profiler_dir.clone())
            .display()
            .to_string(),
        expected_output_kind: if o.export == Export::Db { "db" } else { "csv" }.into(),
        status: "ok".into(),
        ..Default::default()
    };
    let mut service = Service { child: None };
    let captured = capture(o, &mut m, &mut service);
    m.serve.stop_result = service.stop(o).or(if o.serve_start.is_none() {
        Some("not_started_by_us".into())
    } else {
        None
    });
    if captured {
        post_process(o, &mut m);
    }
    if m.status == "ok" {
        m.completed_at = Some(now());
    }
    if let Some(e) = &mut m.error {
        e.match_knowledge(o.knowledge.as_deref());
    }
    m
}

/// Waits until `url/health` answers 2xx: the seconds it took, or why it never did (the service
/// we started exited, or the timeout passed).
pub(crate) fn wait_healthy(
    url: &str,
    timeout: Duration,
    service: &mut Service,
) -> Result<f64, String> {
    let t = Instant::now();
    loop {
        if let Ok(r) = http::request("GET", url, "/health", None, Duration::from_secs(5))
            && r.ok()
        {
            let after = t.elapsed().as_secs_f64();
            progress("service_ready", json!({"after_s": after}));
            return Ok(after);
        }
        if let Some(c) = &mut service.child
            && let Ok(Some(st)) = c.try_wait()
        {
            service.child = None;
            return Err(format!(
                "the service exited ({st}) before {url}/health answered"
            ));
        }
        if t.elapsed() >= timeout {
            return Err(format!(
                "{url}/health did not answer 2xx within {:.0} s",
                timeout.as_secs_f64()
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Service up to `/stop_profile`. Returns whether a capture was stopped cleanly.
fn capture(o: &CaseOpts, m: &mut Manifest, service: &mut Service) -> bool {
    if !service_ready(o, m, service) {
        return false;
    }
    let (start, _) = call("POST", &o.url, "/start_profile", None, o.control_timeout);
    progress(
        "start_profile",
        json!({"ok": start.ok, "status": start.http_status}),
    );
    let started = start.ok;
    let detail = start.detail.clone();
    m.start_profile = Some(start);
    if !started {
        fail(
            m,
            "start_profile",
            &["start_profile_failed"],
            format!("POST /start_profile: {detail}"),
        );
        return false;
    }
    let ws = workload(o, m);
    // Stop profiling even when the workload failed, so the service is not left profiling.
    let (stop, _) = call("POST", &o.url, "/stop_profile", None, o.control_timeout);
    progress(
        "stop_profile",
        json!({"ok": stop.ok, "status": stop.http_status}),
    );
    let stopped = stop.ok;
    let stop_detail = stop.detail.clone();
    m.stop_profile = Some(stop);
    if ws.status != "ok" {
        let mut gates = Vec::new();
        if ws.bench_success_rate < o.workload.success_threshold {
            gates.push("workload_below_threshold");
        }
        if !ws.followup_ok {
            gates.push("followup_failed");
        }
        let msg = format!(
            "{} of {} requests succeeded ({:.1}%, threshold {:.1}%), follow-up {}",
            ws.bench_ok,
            ws.bench_total,
            100.0 * ws.bench_success_rate,
            100.0 * o.workload.success_threshold,
            if ws.followup_ok { "ok" } else { "failed" }
        );
        m.workload_status = Some(ws);
        fail(m, "workload", &gates, msg);
    } else {
        m.workload_status = Some(ws);
    }
    if !stopped {
        fail(
            m,
            "stop_profile",
            &["stop_profile_failed"],
            format!("POST /stop_profile: {stop_detail}"),
        );
        return false;
    }
    m.status == "ok"
}

/// A fresh profiler folder, the service started (when we start it) and healthy.
fn service_ready(o: &CaseOpts, m: &mut Manifest, service: &mut Service) -> bool {
    if let Ok(dirs) = verify::rank_dirs(&o.profiler_dir)
        && !dirs.is_empty()
    {
        fail(
            m,
            "preflight",
            &["profiler_dir_not_empty"],
            format!(
                "{} already holds {} rank folder(s) (e.g. {}): use a fresh profiler directory so captures never mix",
                o.profiler_dir.display(),
                dirs.len(),
                dirs[0].display()
            ),
        );
        return false;
    }
    if let Some(cmd) = &o.serve_start {
        match Service::start(cmd) {
            Ok(started) => {
                m.serve.started_by_us = true;
                *service = started;
            }
            Err(e) => {
                fail(
                    m,
                    "serve_start",
                    &["service_start_failed"],
                    format!("{cmd}: {e}"),
                );
                return false;
            }
        }
    }
    match wait_healthy(&o.url, o.health_timeout, service) {
        Ok(after) => m.serve.ready_after_s = Some(after),
        Err(why) => {
            fail(m, "health", &["service_never_ready"], why);
            return false;
        }
    }
    true
}

/// The benchmark and the follow-up request under the profiler, with the workload's verdict.
fn workload(o: &CaseOpts, m: &mut Manifest) -> WorkloadStatus {
    let b = benchmark(o);
    progress(
        "benchmark",
        json!({"ok": b.ok, "total": b.total, "wall_s": b.wall_s}),
    );
    let (mut follow, resp) = call(
        "POST",
        &o.url,
        "/v1/chat/completions",
        Some(&chat_body(o, o.workload.followup_output_tokens)),
        o.request_timeout,
    );
    follow.ok = resp.as_ref().and_then(completion_ok).is_some();
    progress("followup", json!({"ok": follow.ok}));
    let rate = if b.total > 0 {
        b.ok as f64 / b.total as f64
    } else {
        0.0
    };
    let ws = WorkloadStatus {
        status: if rate >= o.workload.success_threshold && follow.ok {
            "ok"
        } else {
            "failed"
        }
        .into(),
        bench_total: b.total,
        bench_ok: b.ok,
        bench_success_rate: rate,
        bench_threshold: o.workload.success_threshold,
        followup_ok: follow.ok,
    };
    m.benchmark_results = Some(b);
    m.followup_result = Some(follow);
    ws
}

/// Analyse, verify and archive the captured ranks.
fn post_process(o: &CaseOpts, m: &mut Manifest) {
    let dirs = verify::rank_dirs(&o.profiler_dir).unwrap_or_default();
    let export = match o.export {
        Export::Db => "db",
        Export::Text => "text",
        Export::Both => "all",
    };
    let mut analysis: Vec<String> = vec!["skipped".into(); dirs.len()];
    if let Some(cmd) = &o.analyse_cmd {
        let r = analyse::run(&dirs, cmd, export, o.analyse_parallelism, o.analyse_timeout);
        progress("analyse", json!({"status": r.status, "wall_s": r.wall_s}));
        m.analyse_wall_s = Some(r.wall_s);
        m.analyse_parallelism = Some(r.parallelism);
        m.analysis_status = Some(r.status.to_string());
        for (i, rr) in r.ranks.iter().enumerate() {
            analysis[i] = rr.status.to_string();
        }
        if r.status != Outcome::Ok {
            let bad: Vec<String> = r
                .ranks
                .iter()
                .filter(|x| x.status != RankRunStatus::Ok)
                .map(|x| format!("{} {} (log {})", x.dir, x.status, x.log))
                .collect();
            let gate = if r.ranks.iter().any(|x| x.status == RankRunStatus::Timeout) {
                "analyse_timeout"
            } else {
                "analyse_failed"
            };
            fail(m, "analyse", &[gate], bad.join("; "));
        }
    } else {
        m.analysis_status = Some("skipped".into());
    }
    let v = match verify::verify(&o.profiler_dir, Some(m.expected_ranks), o.export) {
        Ok(v) => v,
        Err(e) => {
            fail(m, "verify", &["no_rank_dirs"], e.to_string());
            return;
        }
    };
    m.rank_count = v.rank_count;
    m.remote_profile_dirs = v
        .ranks
        .iter()
        .map(|r| {
            let i = dirs
                .iter()
                .position(|d| d.display().to_string() == r.dir)
                .unwrap_or(0);
            ProfileDir {
                path: r.dir.clone(),
                outputs: r.outputs.clone(),
                analysis_status: analysis.get(i).cloned().unwrap_or_else(|| "skipped".into()),
                verify_status: Some(r.status.to_string()),
            }
        })
        .collect();
    progress(
        "verify",
        json!({"status": v.status, "gates_failed": v.gates_failed}),
    );
    if v.status != Outcome::Ok {
        let problems: Vec<String> = v
            .ranks
            .iter()
            .flat_map(|r| r.problems.iter().map(move |p| format!("{}: {p}", r.dir)))
            .collect();
        fail(
            m,
            "verify",
            &v.gates_failed,
            format!(
                "rank folders {} (expected {}); {}",
                v.rank_count,
                m.expected_ranks,
                problems.join("; ")
            ),
        );
        return;
    }
    if m.status != "ok" {
        return;
    }
    if let Some(to) = &o.archive_to {
        let to = std::path::absolute(to).unwrap_or_else(|_| to.clone());
        match archive::archive(
            &o.profiler_dir,
            &to,
            &o.tag,
            Some(m.expected_ranks),
            o.export,
        ) {
            Ok(a) => {
                m.archive_dir = a.archive_dir;
                m.archived = a.archived;
                m.archive_error = a.archive_error;
            }
            Err(e) => m.archive_error = Some(e.to_string()),
        }
        progress(
            "archive",
            json!({"archived": m.archived, "error": m.archive_error}),
        );
    }
}

/// Writes the manifest to `<runs dir>/<UTC time>_<tag>/manifest.json`; returns the path.
pub fn write(m: &Manifest, runs_dir: &Path) -> std::io::Result<PathBuf> {
    super::manifest::write_to(m, runs_dir, &m.started_at, &m.tag)
}
