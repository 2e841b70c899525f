//! `profscope collect verify|archive|analyse|case|msprof|memory`: collection gates and capture
//! drivers. Prints one JSON object on stdout; exit 0 when every gate passed, 1 when one failed,
//! 2 on error.

use crate::collect::{analyse, archive, case, manifest, verify};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct CollectArgs {
    #[command(subcommand)]
    pub command: CollectCommand,
}

#[derive(Subcommand)]
pub enum CollectCommand {
    /// Check that every rank folder's analyse() output landed (db and/or text export).
    Verify(VerifyArgs),
    /// Verify, then copy every rank's outputs into `<TO>/<tag>_<UTC time>/` (itself a valid root).
    Archive(ArchiveArgs),
    /// Run the per-rank analyse step for every rank folder, in parallel, under one timeout.
    Analyse(AnalyseArgs),
    /// Attach msprof's dynamic collector to a running service (xLLM): start, workload, stop,
    /// quit, export every PROF_*, hash the timelines; prints the manifest.
    Msprof(MsprofArgs),
    /// Capture one case from a vLLM-style service: health, /start_profile, workload,
    /// /stop_profile, stop, analyse, verify, archive; prints the manifest.
    Case(Box<CaseArgs>),
    /// Capture the HBM evidence around a running vLLM-style service: idle baseline, ready, the
    /// peak while a workload runs (npu-smi sampled), post-inference, the vLLM log; then
    /// `profscope memory RUN_DIR`. `--resume-run RUN_DIR --msprof PATH` adds msprof module memory
    /// after the service stopped.
    Memory(Box<MemoryArgs>),
}

#[derive(Args)]
pub struct MemoryArgs {
    /// The OpenAI-compatible service, e.g. http://127.0.0.1:8000.
    #[arg(long, required_unless_present = "resume_run")]
    pub url: Option<String>,
    /// The model name the service answers to (the `model` of each request).
    #[arg(long, required_unless_present = "resume_run")]
    pub served_model_name: Option<String>,
    /// Start the service with this shell command (and stop it afterwards); default: attach to a
    /// running one and never stop it.
    #[arg(long)]
    pub serve_start: Option<String>,
    /// How to stop a service we started (else SIGTERM, then SIGKILL, to its process group).
    #[arg(long)]
    pub serve_stop: Option<String>,
    /// Reuse an idle npu-smi capture as the baseline: a raw `npu-smi info` text, or an earlier
    /// memory run's folder.
    #[arg(long, conflicts_with = "baseline_now")]
    pub baseline_from: Option<PathBuf>,
    /// Capture the idle baseline now; refused (and named) when a process holds a device.
    #[arg(long)]
    pub baseline_now: bool,
    /// The npu-smi program, run as `<it> info`.
    #[arg(long, default_value = "npu-smi")]
    pub npu_smi: String,
    /// Seconds one `npu-smi info` may take.
    #[arg(long, default_value_t = 30.0)]
    pub npu_smi_timeout_s: f64,
    /// Sample npu-smi this often during the workload, ms.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(10..))]
    pub sample_ms: u64,
    /// The service's log (copied into the run folder): weights, KV cache, graph capture.
    #[arg(long)]
    pub vllm_log: Option<PathBuf>,
    /// The checkpoint (folder, .safetensors or its index): headers only, never tensor data.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Tensor-parallel size of the service (recorded; `profscope memory` divides weights by it).
    #[arg(long, default_value_t = 1)]
    pub tp: u64,
    /// Data-parallel size of the service.
    #[arg(long, default_value_t = 1)]
    pub dp: u64,
    /// The service shards experts over TP x DP (vLLM `--enable-expert-parallel`).
    #[arg(long)]
    pub expert_parallel: bool,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Seconds to wait for /health to answer.
    #[arg(long, default_value_t = 900.0)]
    pub health_timeout_s: f64,
    /// Seconds one request may take.
    #[arg(long, default_value_t = 600.0)]
    pub request_timeout_s: f64,
    /// Seconds between SIGTERM and SIGKILL when stopping a service we started.
    #[arg(long, default_value_t = 30.0)]
    pub stop_grace_s: f64,
    /// Where `<UTC time>_<tag>/` is made (a new folder per run, never an earlier one).
    #[arg(long, default_value = "profscope-runs")]
    pub runs_dir: PathBuf,
    /// A name for this run in its folder name and manifest.
    #[arg(long, default_value = "memory")]
    pub tag: String,
    /// Add msprof module memory to an earlier run (after the service stopped); with --msprof.
    #[arg(long, requires = "msprof")]
    pub resume_run: Option<PathBuf>,
    /// msprof's export of that run: a folder holding npu_module_mem*.csv (PROF_* or
    /// ASCEND_PROFILER_OUTPUT).
    #[arg(long)]
    pub msprof: Option<PathBuf>,
}

/// The chat workload of `collect case` and `collect memory`.
#[derive(Args)]
pub struct WorkloadArgs {
    /// text or vl (each request carries an image part).
    #[arg(long, default_value = "text")]
    pub request_kind: String,
    /// Prompt length of each request, tokens (approximate).
    #[arg(long, default_value_t = 1024)]
    pub prompt_tokens: u64,
    /// max_tokens of each request.
    #[arg(long, default_value_t = 128)]
    pub output_tokens: u64,
    /// Requests sent in all.
    #[arg(long, default_value_t = 16)]
    pub total_requests: u64,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: u64,
    /// Fraction of requests that must succeed.
    #[arg(long, default_value_t = 0.8)]
    pub success_threshold: f64,
}

impl WorkloadArgs {
    fn to_workload(&self, followup_output_tokens: u64) -> manifest::Workload {
        manifest::Workload {
            request_kind: self.request_kind.clone(),
            prompt_tokens: self.prompt_tokens,
            output_tokens: self.output_tokens,
            total_requests: self.total_requests,
            concurrency: self.concurrency,
            success_threshold: self.success_threshold,
            followup_output_tokens,
        }
    }
}

#[derive(Args)]
pub struct AnalyseArgs {
    /// The profiler directory holding the `*_ascend_pt` rank folders.
    pub root: PathBuf,
    /// The per-rank command; `{dir}` and `{export}` are substituted (default: torch_npu's
    /// offline analyse() through python3).
    #[arg(long = "analyse-cmd")]
    pub command: Option<String>,
    /// What analyse() exports: db, text or both.
    #[arg(long, value_enum, default_value_t = verify::Export::Db)]
    pub export: verify::Export,
    /// Ranks analysed at once (effective: min(ranks, N)).
    #[arg(long, default_value_t = 8)]
    pub parallelism: usize,
    /// One overall wall-clock limit; ranks still running are killed.
    #[arg(long, default_value_t = 3600.0)]
    pub timeout_s: f64,
}

#[derive(Args)]
pub struct MsprofArgs {
    /// The service's parent process id (started with PROFILING_MODE=dynamic).
    #[arg(long)]
    pub pid: u32,
    /// A fresh (absent or empty) output directory for the PROF_* folders.
    #[arg(long)]
    pub output: PathBuf,
    /// The workload, as a shell command, run between start and stop.
    #[arg(long)]
    pub workload_cmd: String,
    /// The msprof binary (a path, or a name on PATH).
    #[arg(long, default_value = "msprof")]
    pub msprof: String,
    /// Extra capture options (repeat), e.g. --capture-arg=--aicpu=on.
    #[arg(long = "capture-arg", allow_hyphen_values = true)]
    pub capture_args: Vec<String>,
    /// Extra export options (repeat).
    #[arg(long = "export-arg", allow_hyphen_values = true)]
    pub export_args: Vec<String>,
    /// Seconds to wait for msprof to attach to the service.
    #[arg(long, default_value_t = 120.0)]
    pub ready_timeout_s: f64,
    /// Seconds each msprof control command (start, stop) may take.
    #[arg(long, default_value_t = 300.0)]
    pub command_timeout_s: f64,
    /// Seconds the workload command may run before it is killed.
    #[arg(long, default_value_t = 3600.0)]
    pub workload_timeout_s: f64,
    /// After `quit`, the collector flushes and exits; killed after this.
    #[arg(long, default_value_t = 600.0)]
    pub exit_timeout_s: f64,
    /// Seconds msprof's export of the PROF_* folders may take.
    #[arg(long, default_value_t = 3600.0)]
    pub export_timeout_s: f64,
    /// Where `<UTC time>_<tag>/manifest.json` is written.
    #[arg(long, default_value = "profscope-runs")]
    pub runs_dir: PathBuf,
    /// A name for this run in its folder name and manifest.
    #[arg(long, default_value = "msprof")]
    pub tag: String,
    /// A folder of known-failure signatures (JSON) matched against a failed gate.
    #[arg(long)]
    pub knowledge: Option<PathBuf>,
}

#[derive(Args)]
pub struct CaseArgs {
    /// The OpenAI-compatible service, e.g. http://127.0.0.1:8000.
    #[arg(long)]
    pub url: String,
    /// Start the service with this shell command (and stop it afterwards).
    #[arg(long)]
    pub serve_start: Option<String>,
    /// How to stop a service we started (else SIGTERM, then SIGKILL, to its process group).
    #[arg(long)]
    pub serve_stop: Option<String>,
    /// The model path or name (recorded in the manifest; default: the served name).
    #[arg(long)]
    pub model: Option<String>,
    /// The model name the service answers to (the `model` of each request).
    #[arg(long)]
    pub served_model_name: String,
    /// Tensor-parallel size: with --dp, the rank folders the run must produce.
    #[arg(long, default_value_t = 1)]
    pub tp: u32,
    /// Data-parallel size.
    #[arg(long, default_value_t = 1)]
    pub dp: u32,
    /// enforce_eager, full_decode_only or piecewise_graph (recorded in the manifest).
    #[arg(long, default_value = "enforce_eager")]
    pub mode: String,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// max_tokens of the short request sent while profiling.
    #[arg(long, default_value_t = 8)]
    pub followup_output_tokens: u64,
    /// The service's profiler output directory (VLLM_TORCH_PROFILER_DIR); must hold no rank
    /// folder yet.
    #[arg(long)]
    pub profiler_dir: PathBuf,
    /// Seconds to wait for /health to answer.
    #[arg(long, default_value_t = 900.0)]
    pub health_timeout_s: f64,
    /// /start_profile and /stop_profile can take minutes on big models.
    #[arg(long, default_value_t = 900.0)]
    pub control_timeout_s: f64,
    /// Seconds one request may take.
    #[arg(long, default_value_t = 600.0)]
    pub request_timeout_s: f64,
    /// Seconds between SIGTERM and SIGKILL when stopping a service we started.
    #[arg(long, default_value_t = 30.0)]
    pub stop_grace_s: f64,
    /// Per-rank analyse command (`{dir}`, `{export}`); `default` = torch_npu's analyse();
    /// omitted = the service already analysed online.
    #[arg(long = "analyse-cmd")]
    pub analyse_cmd: Option<String>,
    /// Ranks analysed at once.
    #[arg(long, default_value_t = 8)]
    pub analyse_parallelism: usize,
    /// One overall wall-clock limit on the analyse step.
    #[arg(long, default_value_t = 3600.0)]
    pub analyse_timeout_s: f64,
    /// What analyse() exports: db, text or both.
    #[arg(long, value_enum, default_value_t = verify::Export::Db)]
    pub export: verify::Export,
    /// Archive the verified root here.
    #[arg(long)]
    pub archive_to: Option<PathBuf>,
    /// Where `<UTC time>_<tag>/manifest.json` is written.
    #[arg(long, default_value = "profscope-runs")]
    pub runs_dir: PathBuf,
    /// A name for this run in its folder name and manifest.
    #[arg(long, default_value = "case")]
    pub tag: String,
    /// A folder of known-failure signatures (JSON) matched against a failed gate.
    #[arg(long)]
    pub knowledge: Option<PathBuf>,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// The profiler directory holding the `*_ascend_pt` rank folders.
    pub root: PathBuf,
    /// Rank folders the run must have (tp x dp); a different count fails the gate.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=crate::cli::MAX_RANKS))]
    pub expected_ranks: Option<u32>,
    /// What analyse() was asked to export.
    #[arg(long, value_enum, default_value_t = verify::Export::Db)]
    pub export: verify::Export,
}

#[derive(Args)]
pub struct ArchiveArgs {
    #[command(flatten)]
    pub verify: VerifyArgs,
    /// Archive folder (shared storage).
    #[arg(long)]
    pub to: PathBuf,
    /// Tag of the case (the archived root is `<tag>_<UTC time>`).
    #[arg(long, default_value = "profile")]
    pub tag: String,
}

pub fn run(a: CollectArgs) -> anyhow::Result<ExitCode> {
    let (json, ok) = match a.command {
        CollectCommand::Analyse(x) => analyse_ranks(x)?,
        CollectCommand::Msprof(x) => msprof(x)?,
        CollectCommand::Case(c) => case_run(*c)?,
        CollectCommand::Memory(x) => memory_run(&x)?,
        CollectCommand::Verify(v) => {
            let r = verify::verify(&v.root, v.expected_ranks, v.export)?;
            (
                serde_json::to_string_pretty(&r)?,
                r.status == crate::collect::Outcome::Ok,
            )
        }
        CollectCommand::Archive(x) => {
            let v = &x.verify;
            let r = archive::archive(&v.root, &x.to, &x.tag, v.expected_ranks, v.export)?;
            (
                serde_json::to_string_pretty(&r)?,
                r.status == crate::collect::Outcome::Ok,
            )
        }
    };
    crate::cli::write_stdout(&(json + "\n"))?;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The JSON to print and whether the gate passed.
type Outcome = anyhow::Result<(String, bool)>;

/// `collect analyse`: every rank's analyse() in parallel under one timeout.
fn analyse_ranks(x: AnalyseArgs) -> Outcome {
    let dirs = verify::rank_dirs(&x.root)?;
    if dirs.is_empty() {
        anyhow::bail!("{}: no `*_ascend_pt` rank folder found", x.root.display());
    }
    let cmd = x.command.unwrap_or_else(|| analyse::DEFAULT_COMMAND.into());
    let export = match x.export {
        verify::Export::Db => "db",
        verify::Export::Text => "text",
        verify::Export::Both => "all",
    };
    let r = analyse::run(
        &dirs,
        &cmd,
        export,
        x.parallelism,
        std::time::Duration::from_secs_f64(x.timeout_s),
    );
    Ok((
        serde_json::to_string_pretty(&r)?,
        r.status == crate::collect::Outcome::Ok,
    ))
}

/// `collect msprof`: attach CANN's dynamic collector around a workload.
fn msprof(x: MsprofArgs) -> Outcome {
    let secs = std::time::Duration::from_secs_f64;
    let o = crate::collect::msprof::MsprofOpts {
        pid: x.pid,
        output: x.output,
        msprof: x.msprof,
        capture_args: x.capture_args,
        export_args: x.export_args,
        workload_cmd: x.workload_cmd,
        ready_timeout: secs(x.ready_timeout_s),
        command_timeout: secs(x.command_timeout_s),
        workload_timeout: secs(x.workload_timeout_s),
        exit_timeout: secs(x.exit_timeout_s),
        export_timeout: secs(x.export_timeout_s),
        runs_dir: x.runs_dir.clone(),
        tag: x.tag,
        knowledge: x.knowledge,
    };
    let m = crate::collect::msprof::run(&o);
    let path = crate::collect::msprof::write(&m, &x.runs_dir)?;
    case::progress(
        "manifest",
        serde_json::json!({"path": path.display().to_string()}),
    );
    Ok((serde_json::to_string_pretty(&m)?, m.status == "ok"))
}

/// `collect case`: one profiling case end to end against a service.
fn case_run(c: CaseArgs) -> Outcome {
    let secs = std::time::Duration::from_secs_f64;
    let o = case::CaseOpts {
        url: c.url,
        serve_start: c.serve_start,
        serve_stop: c.serve_stop,
        model: c.model,
        served_model_name: c.served_model_name,
        tp: c.tp,
        dp: c.dp,
        mode: c.mode,
        workload: c.workload.to_workload(c.followup_output_tokens),
        profiler_dir: c.profiler_dir,
        health_timeout: secs(c.health_timeout_s),
        control_timeout: secs(c.control_timeout_s),
        request_timeout: secs(c.request_timeout_s),
        stop_grace: secs(c.stop_grace_s),
        analyse_cmd: c.analyse_cmd.map(|x| {
            if x == "default" {
                analyse::DEFAULT_COMMAND.into()
            } else {
                x
            }
        }),
        analyse_parallelism: c.analyse_parallelism,
        analyse_timeout: secs(c.analyse_timeout_s),
        export: c.export,
        archive_to: c.archive_to,
        runs_dir: c.runs_dir.clone(),
        tag: c.tag,
        knowledge: c.knowledge,
    };
    if !matches!(o.workload.request_kind.as_str(), "text" | "vl") {
        anyhow::bail!("--request-kind is text or vl");
    }
    let m = case::run(&o);
    let path = case::write(&m, &c.runs_dir)?;
    case::progress(
        "manifest",
        serde_json::json!({"path": path.display().to_string()}),
    );
    Ok((serde_json::to_string_pretty(&m)?, m.status == "ok"))
}

/// `collect memory`: the HBM evidence phases around a live service, or a resume with msprof.
fn memory_run(x: &MemoryArgs) -> Outcome {
    use crate::collect::memory;
    let m = if let (Some(dir), Some(msprof)) = (&x.resume_run, &x.msprof) {
        memory::resume(dir, msprof)?
    } else {
        let secs = std::time::Duration::from_secs_f64;
        let w = &x.workload;
        if !matches!(w.request_kind.as_str(), "text" | "vl") {
            anyhow::bail!("--request-kind is text or vl");
        }
        let o = memory::MemoryOpts {
            url: x.url.clone().unwrap_or_default(),
            serve_start: x.serve_start.clone(),
            serve_stop: x.serve_stop.clone(),
            served_model_name: x.served_model_name.clone().unwrap_or_default(),
            workload: w.to_workload(0),
            health_timeout: secs(x.health_timeout_s),
            request_timeout: secs(x.request_timeout_s),
            stop_grace: secs(x.stop_grace_s),
            npu_smi: x.npu_smi.clone(),
            npu_smi_timeout: secs(x.npu_smi_timeout_s),
            sample_every: std::time::Duration::from_millis(x.sample_ms),
            baseline: match (&x.baseline_from, x.baseline_now) {
                (Some(p), _) => memory::Baseline::From(p.clone()),
                (None, true) => memory::Baseline::Now,
                (None, false) => memory::Baseline::Missing,
            },
            vllm_log: x.vllm_log.clone(),
            model: x.model.clone(),
            tp: x.tp,
            dp: x.dp,
            expert_parallel: x.expert_parallel,
            runs_dir: x.runs_dir.clone(),
            tag: x.tag.clone(),
        };
        let (m, dir) = memory::run(&o)?;
        case::progress(
            "manifest",
            serde_json::json!({"path": dir.join("manifest.json").display().to_string()}),
        );
        m
    };
    Ok((serde_json::to_string_pretty(&m)?, m.status != "failed"))
}
