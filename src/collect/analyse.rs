//! `collect analyse ROOT`: runs the per-rank analyse step (torch_npu's offline `analyse()` by
//! default, any command with `{dir}` / `{export}` placeholders otherwise) for every `*_ascend_pt`
//! rank folder, at most `parallelism` at once, under one overall wall-clock timeout that kills
//! stuck ranks (their whole process group). Each rank's stdout and stderr go to
//! `<rank dir>/analyse_parallel.log`; a non-zero exit, a kill or a spawn failure fails the rank.

use super::Outcome;
use serde::Serialize;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// torch_npu's offline parse of one rank folder.
pub const DEFAULT_COMMAND: &str = "python3 -c \"from torch_npu.profiler.profiler import analyse; analyse(profiler_path='{dir}', export_type='{export}')\"";

#[derive(Debug, Clone, Serialize)]
pub struct RankRun {
    pub dir: String,
    pub status: RankRunStatus,
    pub exit_code: Option<i32>,
    pub wall_s: f64,
    pub log: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct AnalyseRun {
    pub command: String,
    /// min(ranks, requested parallelism).
    pub parallelism: usize,
    pub timeout_s: f64,
    pub wall_s: f64,
    pub ranks: Vec<RankRun>,
    /// `ok` when every rank exited 0.
    pub status: Outcome,
}

crate::model::closed_set::closed_set! {
    /// How one rank's analyse() ended.
    pub enum RankRunStatus {
        Ok = "ok",
        /// A non-zero exit.
        Failed = "failed",
        /// Killed at the timeout (or never started before it).
        Timeout = "timeout",
        SpawnFailed = "spawn_failed",
    }
}

/// Single-quote for `sh -c` (paths may hold spaces or quotes).
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The command with `{dir}` and `{export}` substituted: inside the default's Python string
/// literal they are inserted as-is (escaped for the literal); elsewhere shell-quoted.
fn expand(template: &str, dir: &Path, export: &str) -> String {
    let d = dir.display().to_string();
    if template == DEFAULT_COMMAND {
        let lit = d
            .replace('\\', "\\\\")
            .replace('\'', "\\'")
            .replace('"', "\\\"")
            .replace('$', "\\$")
            .replace('`', "\\`");
        return template.replace("{dir}", &lit).replace("{export}", export);
    }
    template
        .replace("{dir}", &shell_quote(&d))
        .replace("{export}", &shell_quote(export))
}

/// Kills a child's whole process group (the `sh -c` and what it started).
pub fn kill_group(c: &mut Child) {
    let _ = Command::new("kill")
        .args(["-s", "KILL", "--"])
        .arg(format!("-{}", c.id()))
        .stderr(Stdio::null())
        .status();
    let _ = c.kill();
    let _ = c.wait();
}

pub fn run(
    dirs: &[PathBuf],
    template: &str,
    export: &str,
    parallelism: usize,
    timeout: Duration,
) -> AnalyseRun {
    let t0 = Instant::now();
    let par = parallelism.max(1).min(dirs.len().max(1));
    let mut results: Vec<Option<RankRun>> = vec![None; dirs.len()];
    let mut running: Vec<(usize, Child, Instant)> = Vec::new();
    let mut next = 0;
    loop {
        while running.len() < par && next < dirs.len() {
            let dir = &dirs[next];
            let log_path = dir.join("analyse_parallel.log");
            let cmd = expand(template, dir, export);
            let spawned = std::fs::File::create(&log_path).and_then(|log| {
                let err = log.try_clone()?;
                Command::new("sh")
                    .arg("-c")
                    .arg(&cmd)
                    .stdin(Stdio::null())
                    .stdout(log)
                    .stderr(err)
                    .process_group(0)
                    .spawn()
            });
            match spawned {
                Ok(c) => running.push((next, c, Instant::now())),
                Err(e) => {
                    results[next] = Some(RankRun {
                        dir: dir.display().to_string(),
                        status: RankRunStatus::SpawnFailed,
                        exit_code: None,
                        wall_s: 0.0,
                        log: format!("{}: {e}", log_path.display()),
                    })
                }
            }
            next += 1;
        }
        if running.is_empty() {
            break;
        }
        let over = t0.elapsed() >= timeout;
        let mut i = 0;
        while i < running.len() {
            let (k, c, started) = &mut running[i];
            let done = match c.try_wait() {
                Ok(Some(st)) => Some((
                    if st.success() {
                        RankRunStatus::Ok
                    } else {
                        RankRunStatus::Failed
                    },
                    st.code(),
                )),
                Ok(None) if over => {
                    kill_group(c);
                    Some((RankRunStatus::Timeout, None))
                }
                Ok(None) => None,
                Err(_) => Some((RankRunStatus::Failed, None)),
            };
            if let Some((status, code)) = done {
                let dir = &dirs[*k];
                results[*k] = Some(RankRun {
                    dir: dir.display().to_string(),
                    status,
                    exit_code: code,
                    wall_s: started.elapsed().as_secs_f64(),
                    log: dir.join("analyse_parallel.log").display().to_string(),
                });
                running.swap_remove(i);
            } else {
                i += 1;
            }
        }
        if over {
            // Ranks never started count as timed out too.
            for (k, r) in results.iter_mut().enumerate().skip(next) {
                *r = Some(RankRun {
                    dir: dirs[k].display().to_string(),
                    status: RankRunStatus::Timeout,
                    exit_code: None,
                    wall_s: 0.0,
                    log: String::new(),
                });
            }
            next = dirs.len();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let ranks: Vec<RankRun> = results.into_iter().flatten().collect();
    let ok = !ranks.is_empty() && ranks.iter().all(|r| r.status == RankRunStatus::Ok);
    AnalyseRun {
        command: template.to_string(),
        parallelism: par,
        timeout_s: timeout.as_secs_f64(),
        wall_s: t0.elapsed().as_secs_f64(),
        ranks,
        status: if ok { Outcome::Ok } else { Outcome::Failed },
    }
}
