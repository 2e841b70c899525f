//! `profscope report PATH... --html OUT.html [--memory PATH...]`: the analyze report (and,
//! with --memory, the HBM attribution) as one offline, self-contained HTML page with charts. The
//! profiles are analysed as `analyze` does, through the result cache (the same cache flags).

use crate::pipeline::RunOpts;
use crate::report::AnalyzeOpts;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ReportArgs {
    /// Profiles (files, folders or a collect manifest).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Write the page here.
    #[arg(long)]
    pub html: PathBuf,
    /// Memory evidence (npu-smi, vLLM logs, safetensors, msprof module memory) for the HBM section.
    #[arg(long, num_args = 1..)]
    pub memory: Vec<PathBuf>,
    /// Tensor-parallel size for the HBM section (weights per device).
    #[arg(long, default_value_t = 1)]
    pub tp: u64,
    /// Data-parallel size for the HBM section.
    #[arg(long, default_value_t = 1)]
    pub dp: u64,
    /// Never show the progress bar.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
    #[command(flatten)]
    pub peaks: super::analyze::PeakArgs,
}

pub fn run(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let inputs: Vec<PathBuf> = a.paths.iter().chain(&a.memory).cloned().collect();
    let footprint = crate::ingest::footprint::Footprint::of(&inputs);
    crate::cli::refuse_overwriting_inputs(&a.html, &footprint)?;
    let opts = a.cache.apply(
        RunOpts::new(
            AnalyzeOpts {
                peaks: a.peaks.to_override(),
                ..AnalyzeOpts::default()
            },
            None,
        ),
        &footprint,
    )?;
    let mut report = super::analyze::report_for(&a.paths, &opts, a.quiet)?;
    // One page for any rank count: the devices that matter, every rank in the distributions.
    report.detail_capped =
        crate::report::detail::cap_devices(&mut report, crate::report::detail::DEFAULT_DEVICE_CAP);
    let memory = if a.memory.is_empty() {
        None
    } else {
        let par = crate::report::memory::Parallel {
            tp: a.tp,
            dp: a.dp,
            expert_parallel: false,
        };
        Some(crate::report::memory::report(
            crate::pipeline::memory::one_run(&a.memory, &[], par)?,
            None,
        ))
    };
    let page = crate::render::html::render(&report, memory.as_ref());
    std::fs::write(&a.html, &page)?;
    eprintln!(
        "profscope report: wrote {} ({} bytes)",
        a.html.display(),
        page.len()
    );
    Ok(ExitCode::SUCCESS)
}
