//! `profscope diff BASE NEW [--fail-on ...]`: the regression gate. BASE and NEW are each a saved
//! report (`analyze --save`, or `--format json` output) or a profile (file or folder, analysed
//! here with the default options); BASE may also be a folder of saved reports (earlier runs,
//! e.g. the last N nightlies), whose spread is the noise. A threshold fails only outside the
//! noise (docs/diff.md). Exit 0 when no threshold fails, 1 when one does, 2 on error.

use crate::pipeline::RunOpts;
use crate::render::Format;
use crate::report::diff::{self, Threshold};
use anyhow::Context;
use clap::Args;
use serde_json::Value;
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

/// A saved report as it is, or a profile analysed with the default options and `opts`' cache (a
/// progress bar unless `quiet`).
pub(crate) fn load(path: &Path, opts: &RunOpts, quiet: bool) -> anyhow::Result<Value> {
    Ok(super::progress::with_bar(quiet, |progress| {
        crate::pipeline::load::report_value(path, opts, progress)
    })?)
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
    let base: Vec<(String, Value)> = match crate::pipeline::load::history(&a.base)? {
        Some(h) => h,
        None => vec![(a.base.display().to_string(), load(&a.base, &opts, a.quiet)?)],
    };
    let new = (a.new.display().to_string(), load(&a.new, &opts, a.quiet)?);
    let mut metrics = Vec::new();
    for (label, v) in base.iter().chain(std::iter::once(&new)) {
        let m = diff::metrics(v).with_context(|| label.clone())?;
        anyhow::ensure!(
            !m.is_empty(),
            "{label}: no metric to compare: not a profscope report, nor a profile with device or step events"
        );
        let version = v["schema_version"].as_str().unwrap_or("?");
        if version != crate::report::SCHEMA_VERSION {
            eprintln!(
                "profscope diff: {label} has report schema {version}, this tool writes {}: metrics it lacks show as `in one run only`",
                crate::report::SCHEMA_VERSION
            );
        }
        metrics.push(m);
    }
    let new_metrics = metrics.pop().expect("two sides");
    let sides: Vec<(&str, &Value)> = base
        .iter()
        .chain(std::iter::once(&new))
        .map(|(l, v)| (l.as_str(), v))
        .collect();
    let d = diff::diff(
        a.base.display().to_string(),
        &metrics,
        a.new.display().to_string(),
        &new_metrics,
        &thresholds,
    )?
    .with_verdicts(&sides)
    .with_findings(&sides);
    crate::cli::write_stdout(&crate::render::diff::render(&d, a.format))?;
    Ok(match d.gate {
        diff::Gate::CannotTell => {
            eprintln!("profscope diff: {}", d.summary);
            ExitCode::from(2)
        }
        _ if d.failed => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}
