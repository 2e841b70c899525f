//! `profscope diff BASE NEW [--fail-on ...]`: the regression gate. BASE and NEW are each a saved
//! report (`analyze --save`, or `--format json` output) or a profile (file or folder, analysed
//! here with the default options); BASE may also be a folder of saved reports (earlier runs,
//! e.g. the last N nightlies), whose spread is the noise. A threshold fails only outside the
//! noise (docs/diff.md). Exit 0 when no threshold fails, 1 when one does, 2 on error.

use crate::pipeline::RunOpts;
use crate::render::Format;
use crate::report::diff::{self, Metric, Threshold};
use crate::report::diff_input::ReportView;
use anyhow::Context;
use clap::Args;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct DiffArgs {
    /// The baseline: a saved JSON report, a profile to analyse, or a folder of saved reports
    /// (earlier runs: their mean is the base, their spread the noise).
    pub base: PathBuf,
    /// The new run: a saved JSON report, or a profile to analyse.
    pub new: PathBuf,
    /// Thresholds, comma-separated: `step_time>+3%,bubble_share>+1pt,kernel.*>+2us,free_share<-5%`
    /// (`%` relative to base, `pt` percentage points for pct metrics, ns/us/ms/s for ns metrics;
    /// a name ending in `*` matches a prefix).
    #[arg(long)]
    pub fail_on: Option<String>,
    /// Thresholds from a file: JSON (`{"step_time": "+3%", "kernel.*": "+2us"}`) or TOML
    /// (`step_time = "+3%"` lines); a `-` change means a fall fails.
    #[arg(long)]
    pub thresholds: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Never show the progress bar when analysing.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
}

/// A saved report as diff reads it, or a profile analysed with the default options and `opts`'
/// cache (a progress bar unless `quiet`).
pub(crate) fn load(path: &Path, opts: &RunOpts, quiet: bool) -> anyhow::Result<ReportView> {
    Ok(super::progress::with_bar(quiet, |progress| {
        crate::pipeline::load::report_view(path, opts, progress)
    })?)
}

/// One run of a diff: its label, its report's view and its metrics.
struct Side {
    label: String,
    view: ReportView,
    metrics: BTreeMap<String, Metric>,
}

/// The metrics of one run's report (with their per-step samples only when `steps`: an earlier
/// run of a history needs none); a report without any is an error.
fn side(label: String, mut view: ReportView, steps: bool) -> anyhow::Result<Side> {
    let mut metrics = diff::metrics_of(&mut view);
    if !steps {
        metrics.values_mut().for_each(|m| m.steps = None);
    }
    anyhow::ensure!(
        !metrics.is_empty(),
        "{label}: no metric to compare: not a profscope report, nor a profile with device or step events"
    );
    let version = view.schema_version.as_str();
    if version != crate::report::SCHEMA_VERSION {
        eprintln!(
            "profscope diff: {} has report schema {}, this tool writes {}: metrics it lacks show as `in one run only`",
            crate::render::escape_controls(&label),
            if version.is_empty() { "?" } else { version },
            crate::report::SCHEMA_VERSION
        );
    }
    Ok(Side {
        label,
        view,
        metrics,
    })
}

/// `{"name": "+3%"}` (JSON) or `name = "+3%"` lines (TOML) as `name>+3%` thresholds.
fn thresholds_file(path: &Path) -> anyhow::Result<Vec<Threshold>> {
    let bytes = crate::ingest::source::read_regular(path, 16 << 20)
        .with_context(|| format!("reading {}", path.display()))?;
    let text =
        String::from_utf8(bytes).with_context(|| format!("{}: not UTF-8 text", path.display()))?;
    let pairs: Vec<(String, String)> = if text.trim_start().starts_with('{') {
        let v: serde_json::Map<String, Value> = serde_json::from_str(&text)
            .with_context(|| format!("{}: expected a JSON object", path.display()))?;
        v.into_iter()
            .map(|(k, v)| {
                Ok((
                    k,
                    v.as_str()
                        .context("values are strings like \"+3%\"")?
                        .into(),
                ))
            })
            .collect::<anyhow::Result<_>>()?
    } else {
        text.lines()
            .enumerate()
            .map(|(n, l)| (n + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
            .filter(|(_, l)| !(l.starts_with('[') && l.ends_with(']')))
            .map(|(n, l)| {
                toml_pair(l).with_context(|| {
                    format!(
                        "{} line {n}: `{l}` is not `name = \"+3%\"` (TOML: a key, `=`, a quoted string)",
                        path.display()
                    )
                })
            })
            .collect::<anyhow::Result<_>>()?
    };
    anyhow::ensure!(
        !pairs.is_empty(),
        "{}: no threshold in it, so the gate would pass everything",
        path.display()
    );
    let mut out = Vec::new();
    for (k, v) in pairs {
        let op = if v.starts_with('-') { '<' } else { '>' };
        out.extend(
            diff::parse_thresholds(&format!("{k}{op}{v}"))
                .with_context(|| format!("{}: `{k}`", path.display()))?,
        );
    }
    Ok(out)
}

/// One `key = "value"` line of TOML (a bare key of letters, digits, `_ - . *`, or a quoted
/// key; the value a basic string; an end-of-line comment allowed); None otherwise.
fn toml_pair(line: &str) -> Option<(String, String)> {
    let (k, rest) = if let Some(q) = line.strip_prefix('"') {
        let end = q.find('"')?;
        (q[..end].to_string(), q[end + 1..].trim_start())
    } else {
        let end = line.find(|c: char| c == '=' || c.is_whitespace())?;
        let k = &line[..end];
        let bare = |c: char| c.is_ascii_alphanumeric() || "_-.*".contains(c);
        if k.is_empty() || !k.chars().all(bare) {
            return None;
        }
        (k.to_string(), line[end..].trim_start())
    };
    let v = rest.strip_prefix('=')?.trim_start().strip_prefix('"')?;
    let end = v.find('"')?;
    let after = v[end + 1..].trim();
    if !(after.is_empty() || after.starts_with('#')) || k.is_empty() {
        return None;
    }
    Some((k, v[..end].to_string()))
}

pub fn run(a: DiffArgs) -> anyhow::Result<ExitCode> {
    let mut thresholds = match &a.fail_on {
        Some(s) => diff::parse_thresholds(s)?,
        None => Vec::new(),
    };
    if let Some(p) = &a.thresholds {
        thresholds.extend(thresholds_file(p)?);
    }
    let footprint = crate::ingest::footprint::Footprint::of(&[a.base.clone(), a.new.clone()]);
    let opts = a.cache.apply(
        RunOpts::new(crate::report::AnalyzeOpts::default(), None),
        &footprint,
    )?;
    // A folder of saved reports is a history of earlier runs: the base is their mean and the
    // noise their spread.
    let base: Vec<Side> = match crate::pipeline::load::history(&a.base, |l, v| side(l, v, false))? {
        Some(h) => h.into_iter().collect::<anyhow::Result<_>>()?,
        None => vec![side(
            a.base.display().to_string(),
            load(&a.base, &opts, a.quiet)?,
            true,
        )?],
    };
    let new = side(
        a.new.display().to_string(),
        load(&a.new, &opts, a.quiet)?,
        true,
    )?;
    let base_metrics: Vec<BTreeMap<String, Metric>> =
        base.iter().map(|s| s.metrics.clone()).collect();
    let sides: Vec<(&str, &ReportView)> = base
        .iter()
        .chain(std::iter::once(&new))
        .map(|s| (s.label.as_str(), &s.view))
        .collect();
    let d = diff::diff(
        a.base.display().to_string(),
        &base_metrics,
        a.new.display().to_string(),
        &new.metrics,
        &thresholds,
    )?
    .with_verdicts(&sides)
    .with_findings(&sides);
    crate::cli::write_stdout(&crate::render::diff::render(&d, a.format))?;
    Ok(match d.gate {
        diff::Gate::CannotTell => {
            eprintln!(
                "profscope diff: {}",
                crate::render::escape_controls(&d.summary)
            );
            ExitCode::from(2)
        }
        _ if d.failed => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}
