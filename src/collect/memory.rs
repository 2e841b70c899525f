//! `collect memory` (issue 21): the HBM evidence around a live vLLM-style service, so that
//! `profscope memory RUN_DIR` has every phase. Idle baseline (reused with `--baseline-from`, or
//! taken with `--baseline-now` only when no process holds a device) → start the service if asked
//! → health → ready snapshot → the workload while a sampler runs `npu-smi info` every
//! `--sample-ms` (every sample kept in `samples.jsonl`; the sample with the most HBM in use is
//! the peak snapshot; the per-device maxima are in the manifest) → post-inference snapshot →
//! evidence beside the snapshots (the vLLM log copied, the checkpoint path recorded; its headers
//! are read at analysis time, never tensor data) → stop the service if we started it → manifest.
//! msprof module memory comes later (`--resume-run RUN_DIR --msprof PATH`, after the service
//! stopped); until then the run is `incomplete` and says why. Each run gets a new folder.

use super::case::{Service, progress, run_workload, wait_healthy};
use super::manifest::{Benchmark, Serve, Workload};
use super::sha256;
use crate::model::serving::NpuSmiSnapshot;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub const MEMORY_MANIFEST_KIND: &str = "profscope_memory_manifest";
pub const MEMORY_MANIFEST_SCHEMA_VERSION: &str = "1.0.0";

/// A vLLM log is copied into the run folder up to this size (larger: only its path and hash).
const MAX_LOG_COPY: u64 = 1 << 30;
/// npu-smi output larger than this is not a table (a runaway command).
const MAX_NPU_SMI_OUTPUT: usize = 16 << 20;

/// Where the idle baseline comes from.
#[derive(Debug, Clone)]
pub enum Baseline {
    /// A raw `npu-smi info` capture, or an earlier run folder holding one.
    From(PathBuf),
    /// Captured now, refused when a process holds a device.
    Now,
    /// Not given: the fixed overhead stays unknown.
    Missing,
}

#[derive(Debug, Clone)]
pub struct MemoryOpts {
    pub url: String,
    pub serve_start: Option<String>,
    pub serve_stop: Option<String>,
    pub served_model_name: String,
    pub workload: Workload,
    pub health_timeout: Duration,
    pub request_timeout: Duration,
    pub stop_grace: Duration,
    /// The npu-smi program (`npu-smi`, or a path); run as `<it> info`.
    pub npu_smi: String,
    pub npu_smi_timeout: Duration,
    pub sample_every: Duration,
    pub baseline: Baseline,
    pub vllm_log: Option<PathBuf>,
    pub model: Option<PathBuf>,
    pub tp: u64,
    pub dp: u64,
    pub expert_parallel: bool,
    pub runs_dir: PathBuf,
    pub tag: String,
}

/// One npu-smi table of the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Snapshot {
    /// `idle`, `ready`, `peak` or `post_inference` (the roles `profscope memory` takes).
    pub role: String,
    /// The file, relative to the run folder.
    pub file: String,
    /// UTC, `YYYYmmddTHHMMSSZ`.
    pub taken_at: String,
    pub sha256: String,
    /// HBM in use per device (npu-smi's MB, which are MiB).
    pub hbm_used_mb: BTreeMap<u32, u64>,
    /// `captured`, or `copied from <path>` for a reused baseline.
    pub source: String,
}

/// The per-device maximum over the samples.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceMax {
    pub device: u32,
    pub hbm_used_mb: u64,
    /// Index of the sample (0-based line of samples.jsonl).
    pub sample: u64,
    /// Milliseconds after sampling began.
    pub at_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct Sampling {
    pub sample_ms: u64,
    pub samples: u64,
    /// Every sample: one JSON object per line (`i`, `at_ms`, `hbm_used_mb`).
    pub file: String,
    /// The sample saved as the peak snapshot: the most HBM in use summed over devices.
    pub peak_sample: Option<u64>,
    pub per_device_max: Vec<DeviceMax>,
    /// Why sampling stopped before the workload ended, and when (ms after it began).
    pub stopped_early: Option<String>,
}

/// Evidence beside the snapshots.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Evidence {
    /// `vllm_log`, `model` or `msprof_module_mem`.
    pub kind: String,
    /// Where it came from.
    pub source: String,
    /// The copy in the run folder (relative), when copied.
    pub file: Option<String>,
    pub sha256: Option<String>,
}

/// `manifest.json` of a memory run (docs/collect-memory-manifest.schema.json).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct MemoryManifest {
    pub schema_version: String,
    pub kind: String,
    pub tag: String,
    pub started_at: String,
    pub completed_at: Option<String>,
    /// `complete`, `incomplete` (evidence missing: see `missing`) or `failed` (see `failed_phase`).
    pub status: String,
    /// `baseline`, `health`, `ready`, `workload`, `post` or `resume`.
    pub failed_phase: Option<String>,
    pub error: Option<String>,
    pub serve: Serve,
    pub served_model_name: String,
    pub tp: u64,
    pub dp: u64,
    pub expert_parallel: bool,
    pub npu_smi: String,
    pub snapshots: Vec<Snapshot>,
    pub sampling: Sampling,
    pub workload: Workload,
    pub workload_result: Option<Benchmark>,
    pub evidence: Vec<Evidence>,
    /// What the attribution will lack, each with why.
    pub missing: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum MemoryCollectError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Bad(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> MemoryCollectError + '_ {
    move |source| MemoryCollectError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn now() -> String {
    super::archive::compact_utc(std::time::SystemTime::now())
}

/// A new folder `<runs_dir>/<time>_<tag>` (`_2`, `_3`, … when taken): never an earlier run's.
fn new_run_dir(runs_dir: &Path, started: &str, tag: &str) -> Result<PathBuf, MemoryCollectError> {
    std::fs::create_dir_all(runs_dir).map_err(io_err(runs_dir))?;
    for k in 1..1000 {
        let name = if k == 1 {
            format!("{started}_{tag}")
        } else {
            format!("{started}_{tag}_{k}")
        };
        let d = runs_dir.join(name);
        match std::fs::create_dir(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_err(&d)(e)),
        }
    }
    Err(MemoryCollectError::Bad(format!(
        "{}: 999 runs named {started}_{tag} already",
        runs_dir.display()
    )))
}

/// Runs `<npu_smi> info` (killed after `timeout`) and parses the table. The error names the
/// command and the first line it printed.
pub fn npu_smi_info(npu_smi: &str, timeout: Duration) -> Result<(String, NpuSmiSnapshot), String> {
    let shown = format!("`{npu_smi} info`");
    let mut child = Command::new(npu_smi)
        .arg("info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = (&mut out)
            .take(MAX_NPU_SMI_OUTPUT as u64 + 1)
            .read_to_end(&mut b);
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = (&mut err).take(64 << 10).read_to_end(&mut b);
        b
    });
    let t = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if t.elapsed() < timeout => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let stdout = reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let text = String::from_utf8_lossy(&stdout).into_owned();
    let first = |t: &str| {
        t.lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("(nothing)")
            .chars()
            .take(200)
            .collect::<String>()
    };
    let Some(status) = status else {
        return Err(format!(
            "{shown} did not finish within {:.0} s",
            timeout.as_secs_f64()
        ));
    };
    if !status.success() {
        let e = String::from_utf8_lossy(&stderr);
        let said = if text.trim().is_empty() {
            e.as_ref()
        } else {
            &text
        };
        return Err(format!(
            "{shown} failed ({status}); first line: {}",
            first(said)
        ));
    }
    if stdout.len() > MAX_NPU_SMI_OUTPUT {
        return Err(format!(
            "{shown} printed over {} MB",
            MAX_NPU_SMI_OUTPUT >> 20
        ));
    }
    let snap = crate::ingest::evidence::npu_smi::parse(&text, "npu-smi info").map_err(|e| {
        format!(
            "{shown} printed a layout profscope does not know ({e}); first line: {}",
            first(&text)
        )
    })?;
    if snap.chips.is_empty() {
        return Err(format!(
            "{shown} printed no device row; first line: {}",
            first(&text)
        ));
    }
    Ok((text, snap))
}

fn used_by_device(s: &NpuSmiSnapshot) -> BTreeMap<u32, u64> {
    s.chips
        .iter()
        .map(|c| (c.device(), c.hbm_used_mb))
        .collect()
}

/// Writes a snapshot's text into the run folder and describes it.
fn save(
    run: &Path,
    role: &str,
    text: &str,
    snap: &NpuSmiSnapshot,
    source: String,
) -> Result<Snapshot, MemoryCollectError> {
    let file = format!("npu-smi-{}.txt", role.replace('_', "-"));
    let p = run.join(&file);
    std::fs::write(&p, text).map_err(io_err(&p))?;
    progress("snapshot", json!({"role": role, "file": file}));
    Ok(Snapshot {
        role: role.into(),
        file,
        taken_at: now(),
        sha256: sha256::hex_of(text.as_bytes()),
        hbm_used_mb: used_by_device(snap),
        source,
    })
}

/// The processes holding devices, as `pid 19334 (VLLMWorker_TP) on NPU 0`.
fn holders(s: &NpuSmiSnapshot) -> String {
    s.processes
        .iter()
        .take(8)
        .map(|p| {
            let name = if p.name.is_empty() {
                "unnamed"
            } else {
                &p.name
            };
            format!("pid {} ({name}) on NPU {}", p.pid, p.npu)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The idle table of `--baseline-from`: a raw capture, or the idle snapshot of an earlier run.
fn baseline_text(from: &Path) -> Result<(String, String), String> {
    let file = if from.is_dir() {
        let m = read_manifest(from).map_err(|e| format!("{}: {e}", from.display()))?;
        let s = m
            .snapshots
            .iter()
            .find(|s| s.role == "idle")
            .ok_or_else(|| format!("{}: the run has no idle snapshot", from.display()))?;
        from.join(&s.file)
    } else {
        from.to_path_buf()
    };
    let bytes = crate::ingest::source::read_regular(&file, MAX_NPU_SMI_OUTPUT as u64)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    Ok((
        String::from_utf8_lossy(&bytes).into_owned(),
        file.display().to_string(),
    ))
}

/// What the sampler thread hands back.
#[derive(Default)]
struct Sampled {
    sampling: Sampling,
    peak: Option<(String, NpuSmiSnapshot)>,
}

/// Samples npu-smi until `stop`, writing every sample to `file`.
fn sample(
    npu_smi: String,
    timeout: Duration,
    every: Duration,
    file: PathBuf,
    stop: Arc<AtomicBool>,
) -> Sampled {
    let mut out = Sampled::default();
    out.sampling.sample_ms = every.as_millis() as u64;
    out.sampling.file = file
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut w = match std::fs::File::create(&file) {
        Ok(f) => std::io::BufWriter::new(f),
        Err(e) => {
            out.sampling.stopped_early = Some(format!("{}: {e}", file.display()));
            return out;
        }
    };
    let t0 = Instant::now();
    let mut best_total = 0u64;
    let mut max: BTreeMap<u32, DeviceMax> = BTreeMap::new();
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let tick = Instant::now();
        let at_ms = t0.elapsed().as_millis() as u64;
        match npu_smi_info(&npu_smi, timeout) {
            Ok((text, snap)) => {
                let used = used_by_device(&snap);
                let _ = writeln!(
                    w,
                    "{}",
                    json!({"i": i, "at_ms": at_ms, "hbm_used_mb": used})
                );
                for (&device, &mb) in &used {
                    if max.get(&device).is_none_or(|e| mb > e.hbm_used_mb) {
                        let at = DeviceMax {
                            device,
                            hbm_used_mb: mb,
                            sample: i,
                            at_ms,
                        };
                        max.insert(device, at);
                    }
                }
                let total: u64 = used.values().sum();
                if out.peak.is_none() || total > best_total {
                    best_total = total;
                    out.sampling.peak_sample = Some(i);
                    out.peak = Some((text, snap));
                }
                i += 1;
            }
            Err(e) => {
                out.sampling.stopped_early = Some(format!(
                    "sample {i} at {at_ms} ms after sampling began: {e}"
                ));
                break;
            }
        }
        let spent = tick.elapsed();
        let mut left = every.saturating_sub(spent);
        while !left.is_zero() && !stop.load(Ordering::Relaxed) {
            let step = left.min(Duration::from_millis(20));
            std::thread::sleep(step);
            left = left.saturating_sub(step);
        }
    }
    let _ = w.flush();
    out.sampling.samples = i;
    out.sampling.per_device_max = max.into_values().collect();
    out
}

/// Collects one memory run; the manifest is written into the run folder on every path that got
/// a folder. Returns the manifest and the folder.
pub fn run(o: &MemoryOpts) -> Result<(MemoryManifest, PathBuf), MemoryCollectError> {
    if !super::valid_tag(&o.tag) {
        return Err(MemoryCollectError::Bad(
            super::CollectError::BadTag(o.tag.clone()).to_string(),
        ));
    }
    let started = now();
    let dir = new_run_dir(&o.runs_dir, &started, &o.tag)?;
    progress("run_dir", json!({"path": dir.display().to_string()}));
    let mut m = MemoryManifest {
        schema_version: MEMORY_MANIFEST_SCHEMA_VERSION.into(),
        kind: MEMORY_MANIFEST_KIND.into(),
        tag: o.tag.clone(),
        started_at: started,
        status: "incomplete".into(),
        serve: Serve {
            url: o.url.clone(),
            start_cmd: o.serve_start.clone(),
            stop_cmd: o.serve_stop.clone(),
            ..Default::default()
        },
        served_model_name: o.served_model_name.clone(),
        tp: o.tp,
        dp: o.dp,
        expert_parallel: o.expert_parallel,
        npu_smi: o.npu_smi.clone(),
        workload: o.workload.clone(),
        ..Default::default()
    };
    let mut service = Service { child: None };
    let result = phases(o, &dir, &mut m, &mut service);
    m.serve.stop_result =
        service
            .stop_with(o.serve_stop.as_deref(), o.stop_grace)
            .or(if o.serve_start.is_none() {
                Some("not_started_by_us".into())
            } else {
                None
            });
    if let Err((phase, why)) = result {
        progress("failed", json!({"phase": phase, "message": why}));
        m.status = "failed".into();
        m.failed_phase = Some(phase.into());
        m.error = Some(why);
    }
    finish(&mut m);
    write_manifest(&m, &dir)?;
    Ok((m, dir))
}

/// `complete` when nothing is missing, else `incomplete`; a failed run stays failed.
fn finish(m: &mut MemoryManifest) {
    if m.status != "failed" {
        m.status = if m.missing.is_empty() {
            "complete"
        } else {
            "incomplete"
        }
        .into();
        m.completed_at = Some(now());
    }
}

fn write_manifest(m: &MemoryManifest, dir: &Path) -> Result<(), MemoryCollectError> {
    let p = dir.join("manifest.json");
    let text = serde_json::to_string_pretty(m).expect("the manifest serializes") + "\n";
    std::fs::write(&p, text).map_err(io_err(&p))
}

type PhaseResult = Result<(), (&'static str, String)>;

fn phases(
    o: &MemoryOpts,
    dir: &Path,
    m: &mut MemoryManifest,
    service: &mut Service,
) -> PhaseResult {
    baseline(o, dir, m)?;
    ready(o, dir, m, service)?;
    workload(o, dir, m)?;
    post(o, dir, m)?;
    evidence(o, dir, m)
}

fn write(e: MemoryCollectError) -> String {
    e.to_string()
}

/// 1. The idle baseline, before a service we start holds the devices.
fn baseline(o: &MemoryOpts, dir: &Path, m: &mut MemoryManifest) -> PhaseResult {
    match &o.baseline {
        Baseline::From(p) => {
            let (text, from) = baseline_text(p).map_err(|e| ("baseline", e))?;
            let snap = crate::ingest::evidence::npu_smi::parse(&text, &from)
                .map_err(|e| ("baseline", format!("--baseline-from {from}: {e}")))?;
            if snap.has_processes() {
                return Err((
                    "baseline",
                    format!(
                        "--baseline-from {from} is not idle: {} hold devices",
                        holders(&snap)
                    ),
                ));
            }
            let s = save(dir, "idle", &text, &snap, format!("copied from {from}"))
                .map_err(|e| ("baseline", write(e)))?;
            m.snapshots.push(s);
        }
        Baseline::Now => {
            let (text, snap) =
                npu_smi_info(&o.npu_smi, o.npu_smi_timeout).map_err(|e| ("baseline", e))?;
            if snap.has_processes() {
                let why = format!(
                    "idle baseline: refused by --baseline-now, devices are held by {}; stop them, or reuse an idle capture with --baseline-from: the fixed overhead stays unknown",
                    holders(&snap)
                );
                progress("baseline_refused", json!({"why": why}));
                m.missing.push(why);
            } else {
                let s = save(dir, "idle", &text, &snap, "captured".into())
                    .map_err(|e| ("baseline", write(e)))?;
                m.snapshots.push(s);
            }
        }
        Baseline::Missing => m.missing.push(
            "idle baseline: not captured (give --baseline-from FILE|RUN_DIR or --baseline-now): the fixed overhead stays unknown".into(),
        ),
    }
    Ok(())
}

/// 2. The service, ready: started when we start it, healthy, its npu-smi snapshot.
fn ready(o: &MemoryOpts, dir: &Path, m: &mut MemoryManifest, service: &mut Service) -> PhaseResult {
    if let Some(cmd) = &o.serve_start {
        *service = Service::start(cmd).map_err(|e| ("health", format!("{cmd}: {e}")))?;
        m.serve.started_by_us = true;
    }
    let after = wait_healthy(&o.url, o.health_timeout, service).map_err(|e| ("health", e))?;
    m.serve.ready_after_s = Some(after);
    let (text, snap) = npu_smi_info(&o.npu_smi, o.npu_smi_timeout).map_err(|e| ("ready", e))?;
    m.snapshots.push(
        save(dir, "ready", &text, &snap, "captured".into()).map_err(|e| ("ready", write(e)))?,
    );
    Ok(())
}

/// 3. The workload under the npu-smi sampler; the busiest sample is the peak snapshot.
fn workload(o: &MemoryOpts, dir: &Path, m: &mut MemoryManifest) -> PhaseResult {
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (cmd, timeout, every, file, stop) = (
            o.npu_smi.clone(),
            o.npu_smi_timeout,
            o.sample_every,
            dir.join("samples.jsonl"),
            stop.clone(),
        );
        std::thread::spawn(move || sample(cmd, timeout, every, file, stop))
    };
    let b = run_workload(&o.url, &o.served_model_name, &o.workload, o.request_timeout);
    stop.store(true, Ordering::Relaxed);
    let sampled = sampler.join().unwrap_or_default();
    progress(
        "workload",
        json!({"ok": b.ok, "total": b.total, "wall_s": b.wall_s, "samples": sampled.sampling.samples}),
    );
    let rate = if b.total > 0 {
        b.ok as f64 / b.total as f64
    } else {
        0.0
    };
    m.workload_result = Some(b.clone());
    m.sampling = sampled.sampling;
    if let Some((text, snap)) = &sampled.peak {
        let s =
            save(dir, "peak", text, snap, "captured".into()).map_err(|e| ("workload", write(e)))?;
        m.snapshots.push(s);
    } else {
        m.missing.push(format!(
            "peak: no npu-smi sample during the workload ({})",
            m.sampling
                .stopped_early
                .clone()
                .unwrap_or_else(|| "the workload ended before the first sample".into())
        ));
    }
    if let Some(why) = &m.sampling.stopped_early {
        m.missing.push(format!(
            "peak: sampling stopped early, the peak is the largest of {} samples ({why})",
            m.sampling.samples
        ));
    }
    if rate < o.workload.success_threshold {
        let alive =
            crate::collect::http::request("GET", &o.url, "/health", None, Duration::from_secs(5))
                .is_ok_and(|r| r.ok());
        return Err((
            "workload",
            format!(
                "{} of {} requests succeeded ({:.1}%, threshold {:.1}%){}; snapshots taken so far are kept",
                b.ok,
                b.total,
                100.0 * rate,
                100.0 * o.workload.success_threshold,
                if alive {
                    String::new()
                } else {
                    format!("; the service stopped answering {}/health", o.url)
                }
            ),
        ));
    }
    Ok(())
}

/// 4. After the workload drained.
fn post(o: &MemoryOpts, dir: &Path, m: &mut MemoryManifest) -> PhaseResult {
    let (text, snap) = npu_smi_info(&o.npu_smi, o.npu_smi_timeout).map_err(|e| ("post", e))?;
    m.snapshots.push(
        save(dir, "post_inference", &text, &snap, "captured".into())
            .map_err(|e| ("post", write(e)))?,
    );
    Ok(())
}

/// 5. Evidence beside the snapshots: the vLLM log, the checkpoint, what msprof will add.
fn evidence(o: &MemoryOpts, dir: &Path, m: &mut MemoryManifest) -> PhaseResult {
    match &o.vllm_log {
        Some(log) => m.evidence.push(copy_log(log, dir).map_err(|e| ("post", e))?),
        None => m.missing.push(
            "vLLM log: not given (--vllm-log FILE): weights, KV cache and graph capture come from the log".into(),
        ),
    }
    match &o.model {
        Some(p) => {
            let abs = std::path::absolute(p).unwrap_or_else(|_| p.clone());
            // Read as `profscope memory` will: the same walk picks the index or a shard.
            let g = crate::ingest::evidence::gather::gather(std::slice::from_ref(&abs), &[]);
            if g.checkpoint.is_none() {
                m.missing.push(format!(
                    "checkpoint headers: {}",
                    g.errors.first().map_or_else(
                        || format!("no safetensors file under {}", abs.display()),
                        String::clone
                    )
                ));
            }
            m.evidence.push(Evidence {
                kind: "model".into(),
                source: abs.display().to_string(),
                file: None,
                sha256: None,
            });
        }
        None => m.missing.push(
            "checkpoint: not given (--model PATH): weights are estimated from the log only".into(),
        ),
    }
    m.missing.push(
        "msprof module memory: not merged yet (after the service stopped: `profscope collect memory --resume-run RUN_DIR --msprof PATH`): HCCL and runtime stay unknown".into(),
    );
    Ok(())
}

fn copy_log(log: &Path, dir: &Path) -> Result<Evidence, String> {
    let meta = std::fs::metadata(log).map_err(|e| format!("--vllm-log {}: {e}", log.display()))?;
    let sha = sha256::file_hex(log).map_err(|e| format!("--vllm-log {}: {e}", log.display()))?;
    let file = if meta.len() <= MAX_LOG_COPY {
        let to = dir.join("vllm.log");
        std::fs::copy(log, &to).map_err(|e| format!("{}: {e}", to.display()))?;
        Some("vllm.log".to_string())
    } else {
        None
    };
    Ok(Evidence {
        kind: "vllm_log".into(),
        source: std::path::absolute(log)
            .unwrap_or_else(|_| log.to_path_buf())
            .display()
            .to_string(),
        file,
        sha256: Some(sha),
    })
}

/// Reads a memory run's manifest (`RUN_DIR/manifest.json`).
pub fn read_manifest(dir: &Path) -> Result<MemoryManifest, String> {
    let p = dir.join("manifest.json");
    let bytes = crate::ingest::source::read_regular(&p, 64 << 20).map_err(|e| e.to_string())?;
    let m: MemoryManifest = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{}: not a memory run manifest ({e})", p.display()))?;
    if m.kind != MEMORY_MANIFEST_KIND {
        return Err(format!(
            "{}: kind is `{}`, not a memory run",
            p.display(),
            m.kind
        ));
    }
    Ok(m)
}

/// The evidence files of a run, for `profscope memory`: (role, snapshot file) pairs and the other
/// evidence paths (the copied log, the msprof CSVs, the checkpoint).
pub fn run_evidence(dir: &Path, m: &MemoryManifest) -> (Vec<(String, PathBuf)>, Vec<PathBuf>) {
    let roles = m
        .snapshots
        .iter()
        .map(|s| (s.role.clone(), dir.join(&s.file)))
        .collect();
    let other = m
        .evidence
        .iter()
        .map(|e| match &e.file {
            Some(f) => dir.join(f),
            None => PathBuf::from(&e.source),
        })
        .collect();
    (roles, other)
}

/// `--resume-run RUN_DIR --msprof PATH`: copies the msprof module-memory CSVs found under `PATH`
/// (`npu_module_mem*.csv` of the PROF_* / ASCEND_PROFILER_OUTPUT folders) into
/// `RUN_DIR/msprof/npu_module_mem_<k>.csv`
/// and updates the manifest; none found is an error that leaves the run as it was.
pub fn resume(dir: &Path, msprof: &Path) -> Result<MemoryManifest, MemoryCollectError> {
    let mut m = read_manifest(dir).map_err(MemoryCollectError::Bad)?;
    let mut found = Vec::new();
    find_module_csvs(msprof, 0, &mut found);
    found.sort();
    if found.is_empty() {
        return Err(MemoryCollectError::Bad(format!(
            "{}: no npu_module_mem*.csv under it (msprof's export of the run: PROF_*/mindstudio_profiler_output or *_ascend_pt/ASCEND_PROFILER_OUTPUT)",
            msprof.display()
        )));
    }
    let to_dir = dir.join("msprof");
    std::fs::create_dir_all(&to_dir).map_err(io_err(&to_dir))?;
    for (k, f) in found.iter().enumerate() {
        // Named as msprof names them (`npu_module_mem*.csv`), numbered: the readers find them so.
        let name = format!("npu_module_mem_{k}.csv");
        let to = to_dir.join(&name);
        std::fs::copy(f, &to).map_err(io_err(&to))?;
        m.evidence.push(Evidence {
            kind: "msprof_module_mem".into(),
            source: f.display().to_string(),
            file: Some(format!("msprof/{name}")),
            sha256: sha256::file_hex(&to).ok(),
        });
    }
    m.missing.retain(|x| !x.starts_with("msprof module memory"));
    finish(&mut m);
    write_manifest(&m, dir)?;
    Ok(m)
}

fn find_module_csvs(p: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 12 {
        return;
    }
    if p.is_file() {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        if name.starts_with("npu_module_mem") && name.ends_with(".csv") {
            out.push(p.to_path_buf());
        }
        return;
    }
    for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
        find_module_csvs(&e.path(), depth + 1, out);
    }
}
