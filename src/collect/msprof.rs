//! `collect msprof` (xLLM style): attach CANN's `msprof --dynamic=on --pid=PID --output=DIR` to a
//! running service, wait for its interactive prompt, `start`, run the workload command, `stop`,
//! `quit`, wait for the collector to exit (it flushes then), `msprof --export=on --output=PROF_*`
//! for every capture folder, and record each `msprof_*.json` timeline with its rank, device,
//! size and SHA-256. Interaction follows CANN's documented session (`> start` → `Execution
//! success, Started device Id: 0`, `> stop` / `> quit` → `Execution success.`; hiascend.com
//! "Dynamic Profiling", atlasprofiling_16_0016 / 16_0046). Logs: capture.log, workload.log,
//! export.log beside the manifest. On any failure after attaching, the collector is still told
//! to stop and quit, then killed if it does not exit.

use super::analyse::kill_group;
use super::archive::compact_utc;
use super::manifest::{Call, ManifestError};
use super::progress::progress;
use super::sha256;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct MsprofOpts {
    pub pid: u32,
    pub output: PathBuf,
    pub msprof: String,
    pub capture_args: Vec<String>,
    pub export_args: Vec<String>,
    pub workload_cmd: String,
    pub ready_timeout: Duration,
    pub command_timeout: Duration,
    pub workload_timeout: Duration,
    pub exit_timeout: Duration,
    pub export_timeout: Duration,
    pub runs_dir: PathBuf,
    pub tag: String,
    /// Known-failure signatures to match against a failed gate.
    pub knowledge: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timeline {
    pub path: String,
    pub prof_dir: String,
    /// `rank_id` of the capture's `device_<n>/info.json.<n>`.
    pub rank: Option<i32>,
    /// The `device_<n>` folder of the capture.
    pub device: Option<i32>,
    pub size_bytes: u64,
    pub sha256: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct MsprofManifest {
    pub schema_version: String,
    pub kind: String,
    pub tag: String,
    pub started_at: String,
    pub completed_at: Option<String>,
    pub failed_at: Option<String>,
    pub pid: u32,
    pub output_dir: String,
    pub capture_command: Vec<String>,
    pub logs: Vec<String>,
    /// ready, start, workload, stop, quit, exit, export: each step's result.
    pub steps: Vec<(String, Call)>,
    pub prof_dirs: Vec<String>,
    pub timelines: Vec<Timeline>,
    pub status: String,
    pub error: Option<ManifestError>,
}

fn fail(m: &mut MsprofManifest, stage: &str, gate: &str, message: String) {
    progress(
        "failed",
        json!({"stage": stage, "gate": gate, "message": message}),
    );
    match &mut m.error {
        Some(e) => e.gates.push(gate.into()),
        None => {
            m.error = Some(ManifestError {
                stage: stage.into(),
                message,
                gates: vec![gate.into()],
                ..Default::default()
            })
        }
    }
    m.status = "failed".into();
    m.failed_at
        .get_or_insert_with(|| compact_utc(std::time::SystemTime::now()));
}

/// The collector's output so far (stdout and stderr, as text).
type Out = Arc<Mutex<String>>;

fn pump(mut r: impl Read + Send + 'static, out: Out, log: Arc<Mutex<std::fs::File>>) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            let _ = log.lock().unwrap().write_all(&buf[..n]);
            out.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
}

struct Collector {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Out,
}

impl Collector {
    fn successes(&self) -> usize {
        self.out
            .lock()
            .unwrap()
            .matches("Execution success")
            .count()
    }
    /// Waits until `done` holds, the collector exits, or the timeout.
    fn wait(&mut self, timeout: Duration, done: impl Fn(&Self) -> bool) -> Result<(), String> {
        let t = Instant::now();
        loop {
            if done(self) {
                return Ok(());
            }
            if let Ok(Some(st)) = self.child.try_wait() {
                return Err(format!("msprof exited ({st})"));
            }
            if t.elapsed() >= timeout {
                return Err(format!("no answer within {:.0} s", timeout.as_secs_f64()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    /// Sends a command and waits for one more `Execution success`.
    fn command(&mut self, cmd: &str, timeout: Duration) -> Call {
        let t = Instant::now();
        let before = self.successes();
        let sent = self.stdin.as_mut().map(|s| {
            s.write_all(format!("{cmd}\n").as_bytes())
                .and_then(|_| s.flush())
        });
        let r = match sent {
            Some(Ok(())) => self.wait(timeout, |c| c.successes() > before),
            Some(Err(e)) => Err(format!("stdin: {e}")),
            None => Err("stdin closed".into()),
        };
        let tail: String = {
            let o = self.out.lock().unwrap();
            o.chars()
                .rev()
                .take(200)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect()
        };
        Call {
            ok: r.is_ok(),
            http_status: None,
            wall_s: t.elapsed().as_secs_f64(),
            detail: r.err().unwrap_or(tail),
        }
    }
}

fn step(m: &mut MsprofManifest, name: &str, c: Call) -> bool {
    progress(name, json!({"ok": c.ok, "wall_s": c.wall_s}));
    let ok = c.ok;
    m.steps.push((name.into(), c));
    ok
}

pub fn run(o: &MsprofOpts) -> MsprofManifest {
    let mut m = run_steps(o);
    if let Some(e) = &mut m.error {
        e.match_knowledge(o.knowledge.as_deref());
    }
    m
}

fn run_steps(o: &MsprofOpts) -> MsprofManifest {
    let started_at = compact_utc(std::time::SystemTime::now());
    let run_dir = o.runs_dir.join(format!("{started_at}_{}", o.tag));
    let output = std::path::absolute(&o.output).unwrap_or_else(|_| o.output.clone());
    let mut capture_command = vec![
        o.msprof.clone(),
        "--dynamic=on".into(),
        format!("--pid={}", o.pid),
        format!("--output={}", output.display()),
    ];
    capture_command.extend(o.capture_args.iter().cloned());
    let mut m = MsprofManifest {
        schema_version: super::manifest::MANIFEST_SCHEMA_VERSION.into(),
        kind: "profscope_msprof_manifest".into(),
        tag: o.tag.clone(),
        started_at,
        pid: o.pid,
        output_dir: output.display().to_string(),
        capture_command: capture_command.clone(),
        logs: ["capture.log", "workload.log", "export.log"]
            .iter()
            .map(|l| run_dir.join(l).display().to_string())
            .collect(),
        status: "ok".into(),
        ..Default::default()
    };
    if std::fs::read_dir(&output).is_ok_and(|mut d| d.next().is_some()) {
        fail(
            &mut m,
            "preflight",
            "output_not_fresh",
            format!(
                "{} is not empty: use a fresh output directory",
                output.display()
            ),
        );
        return m;
    }
    if let Err(e) = std::fs::create_dir_all(&output).and_then(|_| std::fs::create_dir_all(&run_dir))
    {
        fail(&mut m, "preflight", "output_not_writable", e.to_string());
        return m;
    }
    let log = |name: &str| std::fs::File::create(run_dir.join(name));
    let (Ok(cap_log), Ok(work_log), Ok(exp_log)) =
        (log("capture.log"), log("workload.log"), log("export.log"))
    else {
        fail(
            &mut m,
            "preflight",
            "logs_not_writable",
            run_dir.display().to_string(),
        );
        return m;
    };
    let Some(mut c) = attach(o, &mut m, &capture_command, cap_log) else {
        return m;
    };
    let (ready_ok, started) = capture(o, &mut m, &mut c, work_log);
    shut_down(o, &mut m, &mut c, ready_ok, started);
    if !started || m.error.as_ref().is_some_and(|e| e.stage != "workload") {
        return m;
    }
    let Some(profs) = export(o, &mut m, &output, exp_log) else {
        return m;
    };
    hash_timelines(&mut m, &profs);
    if m.timelines.is_empty() {
        fail(
            &mut m,
            "export",
            "no_timelines",
            "the export wrote no msprof_*.json".into(),
        );
    }
    if m.status == "ok" {
        m.completed_at = Some(compact_utc(std::time::SystemTime::now()));
    }
    m
}

/// Starts the collector attached to the service (`--dynamic=on`), its output pumped into the
/// capture log; None (with the failure recorded) when it cannot start.
fn attach(
    o: &MsprofOpts,
    m: &mut MsprofManifest,
    capture_command: &[String],
    cap_log: std::fs::File,
) -> Option<Collector> {
    let spawned = Command::new(&capture_command[0])
        .args(&capture_command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            fail(
                m,
                "attach",
                "msprof_spawn_failed",
                format!("{}: {e}", o.msprof),
            );
            return None;
        }
    };
    let out: Out = Default::default();
    let cap_log = Arc::new(Mutex::new(cap_log));
    pump(child.stdout.take().unwrap(), out.clone(), cap_log.clone());
    pump(child.stderr.take().unwrap(), out.clone(), cap_log);
    let stdin = child.stdin.take();
    let c = Collector { child, stdin, out };
    progress("attached", json!({"pid": o.pid, "collector": c.child.id()}));
    Some(c)
}

/// Waits for the collector's prompt, starts it, runs the workload, stops it. Returns (ready,
/// started).
fn capture(
    o: &MsprofOpts,
    m: &mut MsprofManifest,
    c: &mut Collector,
    work_log: std::fs::File,
) -> (bool, bool) {
    let t = Instant::now();
    let ready = c.wait(o.ready_timeout, |c| c.out.lock().unwrap().contains('>'));
    let ready_ok = step(
        m,
        "ready",
        Call {
            ok: ready.is_ok(),
            http_status: None,
            wall_s: t.elapsed().as_secs_f64(),
            detail: ready.clone().err().unwrap_or_default(),
        },
    );
    let mut started = false;
    if !ready_ok {
        fail(
            m,
            "ready",
            "msprof_not_ready",
            ready.err().unwrap_or_default(),
        );
    } else {
        let s = c.command("start", o.command_timeout);
        started = step(m, "start", s.clone());
        if !started {
            fail(m, "start", "msprof_start_failed", s.detail);
        }
    }
    if started {
        let t = Instant::now();
        let w = run_logged(&o.workload_cmd, work_log, o.workload_timeout);
        let ok = step(
            m,
            "workload",
            Call {
                ok: w.is_ok(),
                http_status: None,
                wall_s: t.elapsed().as_secs_f64(),
                detail: w.clone().err().unwrap_or_default(),
            },
        );
        if !ok {
            fail(
                m,
                "workload",
                "workload_failed",
                w.err().unwrap_or_default(),
            );
        }
        let s = c.command("stop", o.command_timeout);
        if !step(m, "stop", s.clone()) {
            fail(m, "stop", "msprof_stop_failed", s.detail);
        }
    }
    (ready_ok, started)
}

/// quit, then the collector must exit by itself (that is when it flushes); killed if it does not.
fn shut_down(
    o: &MsprofOpts,
    m: &mut MsprofManifest,
    c: &mut Collector,
    ready_ok: bool,
    started: bool,
) {
    if ready_ok {
        let q = c.command("quit", o.command_timeout);
        step(m, "quit", q);
    }
    drop(c.stdin.take());
    let t = Instant::now();
    let exited = c.wait(o.exit_timeout, |_| false);
    let exit_ok = matches!(&exited, Err(e) if e.starts_with("msprof exited"));
    if !exit_ok {
        kill_group(&mut c.child);
    }
    step(
        m,
        "exit",
        Call {
            ok: exit_ok,
            http_status: None,
            wall_s: t.elapsed().as_secs_f64(),
            detail: exited.err().unwrap_or_default(),
        },
    );
    if !exit_ok && started {
        fail(
            m,
            "exit",
            "msprof_did_not_exit",
            format!(
                "the collector did not exit within {:.0} s of quit and was killed; its data may not be flushed",
                o.exit_timeout.as_secs_f64()
            ),
        );
    }
}

/// Exports every capture folder (`--export=on`); the folders, or None when there is none.
fn export(
    o: &MsprofOpts,
    m: &mut MsprofManifest,
    output: &Path,
    exp_log: std::fs::File,
) -> Option<Vec<PathBuf>> {
    let mut profs: Vec<PathBuf> = std::fs::read_dir(output)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.is_dir()
                        && p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with("PROF_"))
                })
                .collect()
        })
        .unwrap_or_default();
    profs.sort();
    m.prof_dirs = profs.iter().map(|p| p.display().to_string()).collect();
    if profs.is_empty() {
        fail(
            m,
            "export",
            "no_prof_dirs",
            format!("no PROF_* folder under {}", output.display()),
        );
        return None;
    }
    let exp_log = Arc::new(Mutex::new(exp_log));
    for p in &profs {
        let t = Instant::now();
        let mut cmd = Command::new(&o.msprof);
        cmd.arg("--export=on")
            .arg(format!("--output={}", p.display()))
            .args(&o.export_args);
        let r = run_cmd_logged(cmd, exp_log.clone(), o.export_timeout);
        let ok = step(
            m,
            "export",
            Call {
                ok: r.is_ok(),
                http_status: None,
                wall_s: t.elapsed().as_secs_f64(),
                detail: format!(
                    "{}{}",
                    p.display(),
                    r.clone()
                        .err()
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                ),
            },
        );
        if !ok {
            fail(
                m,
                "export",
                "export_failed",
                format!("{}: {}", p.display(), r.err().unwrap_or_default()),
            );
        }
    }
    Some(profs)
}

/// Every exported msprof timeline with its rank, device, size and SHA-256.
fn hash_timelines(m: &mut MsprofManifest, profs: &[PathBuf]) {
    for p in profs {
        let rank = crate::ingest::rank::prof_rank(p);
        let device = std::fs::read_dir(p).ok().and_then(|d| {
            d.flatten().find_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_prefix("device_")?
                    .parse()
                    .ok()
            })
        });
        let mut files = Vec::new();
        find_timelines(p, &mut files, 0);
        for f in files {
            let size_bytes = std::fs::metadata(&f).map(|x| x.len()).unwrap_or(0);
            let sha = sha256::file_hex(&f).unwrap_or_default();
            m.timelines.push(Timeline {
                path: f.display().to_string(),
                prof_dir: p.display().to_string(),
                rank,
                device,
                size_bytes,
                sha256: sha,
            });
        }
    }
}

fn find_timelines(p: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    let Ok(d) = std::fs::read_dir(p) else { return };
    let mut v: Vec<PathBuf> = d.flatten().map(|e| e.path()).collect();
    v.sort();
    for e in v {
        let name = e
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if e.is_dir() && depth < 3 {
            find_timelines(&e, out, depth + 1);
        } else if name.starts_with("msprof_") && name.ends_with(".json") {
            out.push(e);
        }
    }
}

fn run_logged(cmd: &str, log: std::fs::File, timeout: Duration) -> Result<(), String> {
    let mut c = Command::new("sh");
    c.arg("-c").arg(cmd);
    run_cmd_logged(c, Arc::new(Mutex::new(log)), timeout)
}

/// Runs `cmd` in its own process group with output appended to `log`; kills it at `timeout`.
fn run_cmd_logged(
    mut cmd: Command,
    log: Arc<Mutex<std::fs::File>>,
    timeout: Duration,
) -> Result<(), String> {
    let (out, err) = {
        let l = log.lock().unwrap();
        (
            l.try_clone().map_err(|e| e.to_string())?,
            l.try_clone().map_err(|e| e.to_string())?,
        )
    };
    let mut c = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| e.to_string())?;
    let t = Instant::now();
    loop {
        match c.try_wait() {
            Ok(Some(st)) if st.success() => return Ok(()),
            Ok(Some(st)) => return Err(format!("exit {st}")),
            Ok(None) if t.elapsed() >= timeout => {
                kill_group(&mut c);
                return Err(format!("killed after {:.0} s", timeout.as_secs_f64()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Writes the manifest as `<runs dir>/<UTC time>_<tag>/manifest.json`.
pub fn write(m: &MsprofManifest, runs_dir: &Path) -> std::io::Result<PathBuf> {
    super::manifest::write_to(m, runs_dir, &m.started_at, &m.tag)
}
