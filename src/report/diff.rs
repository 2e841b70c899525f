//! Run-to-run comparison for regression gates: run-level metrics read from two reports (JSON
//! values read through one typed view, `diff_input`, so a saved report and a fresh one go through
//! the same code), their changes, and
//! thresholds (`step_time>+3%,bubble_share>+1pt,kernel.*>+10%`) that decide pass or fail.
//!
//! Every metric is a ratio or a mean, never a sum over the capture, so two captures of different
//! length compare fairly. Its unit is `ns` or `pct`, and its denominator is stated.

use super::diff_input::{self as input, ReportView};
use super::json_view::Num;
use super::noise::{self, Interval, Stat, Step};
use crate::contract::evidence::Status as VerdictStatus;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Clone, Serialize)]
pub struct Metric {
    pub unit: MetricUnit,
    pub value: f64,
    /// What the value is (and its denominator).
    pub definition: &'static str,
    /// The run's steps and what the metric computes from them (its noise, [`noise::from_steps`]).
    #[serde(skip)]
    pub steps: Option<(Stat, Arc<Vec<Step>>)>,
    /// For a mean per call: the calls' count, mean and variance ([`noise::from_calls`]).
    #[serde(skip)]
    pub calls: Option<noise::Calls>,
}

crate::model::closed_set::closed_set! {
    /// The unit of a diff metric.
    pub enum MetricUnit {
        Ns = "ns",
        /// Percent (its change is in percentage points).
        Pct = "pct",
        GbPerS = "GB/s",
    }
}

/// `sum(num) / sum(den)` over the items, as percent; None when the denominator is 0.
fn share<T>(items: &[T], num: impl Fn(&T) -> Num, den: impl Fn(&T) -> Num) -> Option<f64> {
    let (n, d) = items
        .iter()
        .fold((0.0, 0.0), |(n, d), x| (n + num(x).0, d + den(x).0));
    (d > 0.0).then(|| 100.0 * n / d)
}

/// The run-level metrics of a report (a `profscope analyze --format json` value, saved or
/// fresh), read through the typed view of [`super::diff_input`].
pub fn metrics(report: &Value) -> Result<BTreeMap<String, Metric>, DiffError> {
    let mut view =
        ReportView::from_value(report).map_err(|e| DiffError::NotAReport(e.to_string()))?;
    Ok(metrics_of(&mut view))
}

/// The run-level metrics of a report's view; its step samples move into the metrics (the
/// view keeps none, so a large report's samples are held once).
pub fn metrics_of(view: &mut ReportView) -> BTreeMap<String, Metric> {
    let a = &mut view.analyses;
    let mut m = Metrics::default();
    step_metrics(&a.cross_rank, &mut m);
    device_metrics(a, &mut m);
    let steps = Arc::new(steps_of(&mut a.cross_rank));
    for (name, stat) in [
        ("step_time", Stat::MeanStep),
        ("computing_share", Stat::Share(1)),
        ("comm_exposed_share", Stat::Share(2)),
        ("free_share", Stat::Share(3)),
    ] {
        if let Some(x) = m.0.get_mut(name) {
            x.steps = Some((stat, steps.clone()));
        }
    }
    dispatch_metrics(&a.dispatch, &mut m);
    collective_metrics(&a.communication_ops, &mut m);
    communication_metrics(a, &mut m);
    kernel_metrics(a, &mut m);
    m.0
}

/// Every rank's step samples (cross_rank), pooled; each rank's are freed as they are moved.
fn steps_of(c: &mut input::CrossRank) -> Vec<Step> {
    let ranks = || c.cohorts.iter().flat_map(|c| &c.ranks);
    let mut out = Vec::with_capacity(ranks().map(|r| r.samples.steps.len()).sum());
    for r in c.cohorts.iter_mut().flat_map(|c| &mut c.ranks) {
        out.extend(std::mem::take(&mut r.samples.steps));
    }
    out
}

#[derive(Default)]
struct Metrics(BTreeMap<String, Metric>);

impl Metrics {
    /// Adds a metric when it has a value.
    fn put(
        &mut self,
        name: String,
        unit: MetricUnit,
        value: Option<f64>,
        definition: &'static str,
    ) {
        if let Some(value) = value {
            self.0.insert(
                name,
                Metric {
                    unit,
                    value,
                    definition,
                    steps: None,
                    calls: None,
                },
            );
        }
    }
}

/// Step time and collective skew (cross_rank).
fn step_metrics(c: &input::CrossRank, m: &mut Metrics) {
    let ranks = c.cohorts.iter().flat_map(|c| &c.ranks);
    let (steps, step_ns) = ranks.fold((0.0, 0.0), |(n, s), r| {
        (n + r.steps.0, s + r.step_mean_ns.0 * r.steps.0)
    });
    m.put(
        "step_time".into(),
        MetricUnit::Ns,
        (steps > 0.0).then(|| step_ns / steps),
        "mean device step time over every rank's steps (cross_rank)",
    );
    let skews: Vec<&input::Collectives> = c
        .cohorts
        .iter()
        .map(|c| &c.collectives)
        .filter(|k| k.matched.0 > 0.0)
        .collect();
    m.put(
        "collective_skew".into(),
        MetricUnit::Ns,
        (!skews.is_empty()).then(|| {
            skews
                .iter()
                .map(|k| k.skew_mean_ns.0 * k.matched.0)
                .sum::<f64>()
                / skews.iter().map(|k| k.matched.0).sum::<f64>()
        }),
        "mean start skew of collectives matched across ranks (cross_rank)",
    );
}

/// Computing, exposed communication, free and bubble shares of the device windows.
fn device_metrics(a: &input::Analyses, m: &mut Metrics) {
    type Field = fn(&input::DeviceTime) -> Num;
    let fields: [(&str, Field, &'static str); 3] = [
        (
            "computing_share",
            |x| x.computing_ns,
            "computing / device window, % (device_time, all devices)",
        ),
        (
            "comm_exposed_share",
            |x| x.communication_not_overlapped_ns,
            "communication not overlapped / device window, % (device_time)",
        ),
        (
            "free_share",
            |x| x.free_ns,
            "free / device window, % (device_time)",
        ),
    ];
    for (name, num, def) in fields {
        m.put(
            name.into(),
            MetricUnit::Pct,
            share(&a.device_time, num, |x| x.window_ns),
            def,
        );
    }
    m.put(
        "bubble_share".into(),
        MetricUnit::Pct,
        share(&a.bubbles, |x| x.idle_ns, |x| x.window_ns),
        "idle gaps / device window, % (bubbles, all devices)",
    );
}

/// Host-bound idle and launch latency (dispatch).
fn dispatch_metrics(dispatch: &[input::Dispatch], m: &mut Metrics) {
    m.put(
        "host_bound_share".into(),
        MetricUnit::Pct,
        share(
            dispatch,
            |x| x.host_bound.host_bound_ns,
            |x| x.host_bound.idle_ns,
        ),
        "idle gaps whose next task was launched after the gap began / idle, % (dispatch, all devices)",
    );
    let linked: Vec<&input::Dispatch> = dispatch
        .iter()
        .filter(|x| x.latency.count.0 > 0.0)
        .collect();
    m.put(
        "launch_latency_p99".into(),
        MetricUnit::Ns,
        (!linked.is_empty()).then(|| {
            linked
                .iter()
                .map(|x| x.latency.p99_ns.0)
                .fold(f64::MIN, f64::max)
        }),
        "p99 launch latency (call start to first task start), the largest over devices (dispatch)",
    );
}

/// Collective wait ratio and bandwidth per link type (communication_ops).
fn collective_metrics(c: &input::CommunicationOps, m: &mut Metrics) {
    let (wait, transit) = c.devices.iter().fold((0.0, 0.0), |(w, t), d| {
        let x = &d.total.times;
        (w + x.wait_ns.0, t + x.transit_ns.0)
    });
    m.put(
        "collective_wait_ratio".into(),
        MetricUnit::Pct,
        (wait + transit > 0.0).then(|| 100.0 * wait / (wait + transit)),
        "Notify_Wait time / (wait + transit) on the master plane of every collective op, % (communication_ops, all devices)",
    );
    let mut links: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for b in c.devices.iter().flat_map(|d| &d.total.bandwidth) {
        if b.time_ns.0 > 0.0 {
            let e = links
                .entry(b.link.clone().unwrap_or_else(|| "?".into()))
                .or_default();
            e.0 += b.size_bytes.0;
            e.1 += b.time_ns.0;
        }
    }
    for (link, (bytes, ns)) in links {
        m.put(
            format!("link_bandwidth.{link}"),
            MetricUnit::GbPerS,
            Some(bytes / ns),
            "bytes / transfer time over one link type, all collective ops and devices (communication_ops)",
        );
    }
}

/// NOTIFY_WAIT ratio (step_sync) and the two communication shares (communication).
fn communication_metrics(a: &input::Analyses, m: &mut Metrics) {
    m.put(
        "notify_wait_ratio".into(),
        MetricUnit::Pct,
        share(
            &a.step_sync,
            |x| x.notify_wait_total_ns,
            |x| x.replay_total_ns,
        ),
        "NOTIFY_WAIT / graph-replay time, % (step_sync, all devices)",
    );
    m.put(
        "comm_kernel_share".into(),
        MetricUnit::Pct,
        share(
            &a.communication,
            |x| x.comm_kernels.sum_ns,
            |x| x.compute_kernel_ns,
        ),
        "communication kernels / compute-kernel time, % (communication (a))",
    );
    m.put(
        "wait_share".into(),
        MetricUnit::Pct,
        share(
            &a.communication,
            |x| x.event_and_mem_waits.sum_ns,
            |x| x.device_task_ns,
        ),
        "EVENT/STREAM/MEM waits / all device task time, % (communication (b))",
    );
}

/// Kernel family shares (composition) and per-call means of the top events.
fn kernel_metrics(a: &input::Analyses, m: &mut Metrics) {
    let name = |x: &input::Named| x.name.clone().unwrap_or_else(|| "?".into());
    let compute_ns: f64 = a.composition.iter().map(|c| c.compute_ns.0).sum();
    let mut families: BTreeMap<String, f64> = BTreeMap::new();
    for x in a.composition.iter().flat_map(|c| &c.families) {
        *families.entry(name(x)).or_default() += x.sum_ns.0;
    }
    for (family, ns) in families {
        m.put(
            format!("family.{family}"),
            MetricUnit::Pct,
            (compute_ns > 0.0).then(|| 100.0 * ns / compute_ns),
            "kernel family time / compute-kernel time, % (composition)",
        );
    }
    // Per name: summed ns, calls, and the sum of squared durations (from each device's mean and
    // population standard deviation: n (sd² + mean²)).
    let mut kernels: BTreeMap<String, (f64, f64, f64)> = BTreeMap::new();
    for x in a.top_events.iter().flat_map(|t| &t.by_sum) {
        let e = kernels.entry(name(x)).or_default();
        let (sum, n, sd) = (x.sum_ns.0, x.count.0, x.std_ns.0);
        e.0 += sum;
        e.1 += n;
        if n > 0.0 {
            e.2 += n * (sd * sd + (sum / n).powi(2));
        }
    }
    for (kernel, (ns, n, squares)) in kernels {
        let key = format!("kernel.{kernel}");
        m.put(
            key.clone(),
            MetricUnit::Ns,
            (n > 0.0).then(|| ns / n),
            "mean duration per call of a top event (top_events by sum)",
        );
        if let Some(x) = m.0.get_mut(&key) {
            let mean = ns / n;
            x.calls = Some(noise::Calls {
                n,
                mean,
                var: (squares / n - mean * mean).max(0.0),
            });
        }
    }
}

/// How a threshold measures change.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Relative change, percent of the base value.
    Percent,
    /// Absolute change in percentage points (pct metrics).
    Points,
    /// Absolute change in nanoseconds (ns metrics).
    Nanos,
}

/// `name>+3%`: fails when the metric rises by more than 3 % (`<-3%`: falls by more).
#[derive(Debug, Clone, Serialize)]
pub struct Threshold {
    /// A metric name, or a prefix ending in `*` (`kernel.*`).
    pub pattern: String,
    /// True for `>` (a rise fails), false for `<` (a fall fails).
    pub rise: bool,
    pub limit: f64,
    pub measure: Measure,
    /// As written.
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("not a profscope report: {0}")]
    NotAReport(String),
    #[error(
        "threshold `{0}`: expected NAME>+N% | NAME>+Npt | NAME>+N(ns|us|ms|s), or < with a negative change"
    )]
    BadThreshold(String),
    #[error("thresholds `{0}`: no threshold in it, so the gate would pass everything")]
    EmptyGate(String),
    #[error(
        "threshold `{text}`: no metric `{name}` in either run, so the gate would never fire (metrics: {known})"
    )]
    UnknownMetric {
        text: String,
        name: String,
        known: String,
    },
    #[error("threshold `{text}` is in {measure:?} but `{metric}` is in {unit}")]
    UnitMismatch {
        text: String,
        measure: Measure,
        metric: String,
        unit: MetricUnit,
    },
}

/// Parses `step_time>+3%,bubble_share>+1pt` (commas or newlines between thresholds); a text
/// with no threshold in it (`,`, blanks) is an error: an empty gate would pass everything.
pub fn parse_thresholds(s: &str) -> Result<Vec<Threshold>, DiffError> {
    let t: Vec<Threshold> = s
        .split([',', '\n'])
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(parse_one)
        .collect::<Result<_, _>>()?;
    if t.is_empty() {
        return Err(DiffError::EmptyGate(s.to_string()));
    }
    Ok(t)
}

fn parse_one(text: &str) -> Result<Threshold, DiffError> {
    let bad = || DiffError::BadThreshold(text.to_string());
    let at = text.find(['>', '<']).ok_or_else(bad)?;
    let pattern = text[..at].trim().to_string();
    let rise = text.as_bytes()[at] == b'>';
    let rest = text[at + 1..].trim();
    let (measure, num, scale) = if let Some(n) = rest.strip_suffix('%') {
        (Measure::Percent, n, 1.0)
    } else if let Some(n) = rest.strip_suffix("pt") {
        (Measure::Points, n, 1.0)
    } else if let Some(n) = rest.strip_suffix("ns") {
        (Measure::Nanos, n, 1.0)
    } else if let Some(n) = rest.strip_suffix("us").or_else(|| rest.strip_suffix("µs")) {
        (Measure::Nanos, n, 1e3)
    } else if let Some(n) = rest.strip_suffix("ms") {
        (Measure::Nanos, n, 1e6)
    } else if let Some(n) = rest.strip_suffix('s') {
        (Measure::Nanos, n, 1e9)
    } else {
        return Err(bad());
    };
    let limit: f64 = num.trim().parse().map_err(|_| bad())?;
    if !limit.is_finite() || pattern.is_empty() || (rise && limit < 0.0) || (!rise && limit > 0.0) {
        return Err(bad());
    }
    Ok(Threshold {
        pattern,
        rise,
        limit: limit.abs() * scale,
        measure,
        text: text.to_string(),
    })
}

impl Threshold {
    fn matches(&self, name: &str) -> bool {
        match self.pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => self.pattern == name,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    /// A threshold was crossed, outside the noise (or with the noise unknown).
    Fail,
    /// A threshold was crossed by the change, but the change is within the noise: not a failure.
    CrossedWithinNoise,
    /// In one run only.
    Missing,
}

/// What the change of a metric is, given its noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The 95% interval of the change lies wholly on the worse side of 0.
    Regressed,
    /// Wholly on the better side.
    Improved,
    /// The interval holds 0.
    WithinNoise,
    /// Too few steps or earlier runs to know the noise: thresholds apply as given.
    NoiseUnknown,
}

/// Where a metric's noise came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseMethod {
    /// A bootstrap of both runs' steps ([`noise::from_steps`]).
    Steps,
    /// The spread of earlier runs ([`noise::from_history`]).
    History,
    /// The calls' spread, for a mean per call ([`noise::from_calls`]).
    Calls,
    Unknown,
}

/// The noise of one metric's change.
#[derive(Debug, Clone, Serialize)]
pub struct Noise {
    pub method: NoiseMethod,
    /// Samples on each side: steps (every rank's) for `steps`, runs for `history`.
    pub n_base: usize,
    pub n_new: usize,
    /// The 95% interval of the change, in the metric's unit (pct metrics: points) and as % of
    /// base.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// Why the noise is unknown, when it is.
    pub unknown_because: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub metric: String,
    pub unit: MetricUnit,
    pub definition: &'static str,
    pub base: Option<f64>,
    pub new: Option<f64>,
    /// new - base, in the metric's unit (pct metrics: percentage points).
    pub change: Option<f64>,
    /// Change as % of base (None when base is 0 or a value is missing).
    pub change_pct: Option<f64>,
    pub noise: Noise,
    pub verdict: Verdict,
    /// The thresholds that apply, as written.
    pub thresholds: Vec<String>,
    pub status: Status,
}

/// The gate's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    Pass,
    Fail,
    /// A side's verdict is withheld: its numbers cannot support a comparison (exit 2).
    CannotTell,
}

/// The verdict of one side, as its report states it (`verdict.status`, `verdict.statement`);
/// absent in reports older than schema 0.9.0.
#[derive(Debug, Clone, Serialize)]
pub struct SideVerdict {
    pub run: String,
    pub status: VerdictStatus,
    pub statement: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub schema_version: &'static str,
    pub base: String,
    pub new: String,
    /// Earlier runs the base stands for (1: one run).
    pub base_runs: usize,
    /// The gate's answer and why, in one line (the first line of every format).
    pub gate: Gate,
    pub summary: String,
    pub rows: Vec<Row>,
    /// Thresholds that matched no metric of either run (not evaluated).
    pub unmatched_thresholds: Vec<String>,
    /// Each side's verdict status when it is not `confident` (a qualified side is said in the
    /// summary; a withheld one makes the gate `cannot_tell`).
    pub verdicts: Vec<SideVerdict>,
    /// Advisor findings (rule, subject) in the new run and not the base (`appeared`), and in
    /// the base and not the new run (`gone`); docs/advisor.md.
    pub findings: FindingsChange,
    pub failed: bool,
}

/// Advisor findings that appeared or went away between the base and the new run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FindingsChange {
    pub appeared: Vec<FindingRef>,
    pub gone: Vec<FindingRef>,
}

/// One finding as `diff` names it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FindingRef {
    pub rule: String,
    pub subject: String,
    pub statement: String,
    pub time_at_stake_ns: i64,
}

impl Diff {
    /// Compares the advisor findings of the last base side (the latest earlier run) and the
    /// last side (the new run), by (rule, subject). Reports without an advisor (older schemas) compare as no findings.
    pub fn with_findings(mut self, sides: &[(&str, &ReportView)]) -> Diff {
        let refs = |v: &ReportView| -> Vec<FindingRef> {
            v.analyses
                .advisor
                .findings
                .iter()
                .map(|f| FindingRef {
                    rule: f.rule.clone(),
                    subject: f.subject.clone(),
                    statement: f.statement.clone(),
                    time_at_stake_ns: f.time_at_stake_ns.0 as i64,
                })
                .collect()
        };
        let (Some(base), Some(new)) = (sides.len().checked_sub(2).map(|i| &sides[i]), sides.last())
        else {
            return self;
        };
        let (b, n) = (refs(base.1), refs(new.1));
        let key = |f: &FindingRef| (f.rule.clone(), f.subject.clone());
        let missing_from = |from: &[FindingRef], other: &[FindingRef]| -> Vec<FindingRef> {
            from.iter()
                .filter(|f| !other.iter().any(|o| key(o) == key(f)))
                .cloned()
                .collect()
        };
        self.findings = FindingsChange {
            appeared: missing_from(&n, &b),
            gone: missing_from(&b, &n),
        };
        self
    }

    /// Applies the sides' verdicts (run label, report): a withheld side never passes
    /// (`cannot_tell`), a qualified one is named in the summary. A report without a verdict
    /// (schema before 0.9.0) counts as confident.
    pub fn with_verdicts(mut self, sides: &[(&str, &ReportView)]) -> Diff {
        for (run, v) in sides {
            let Some(verdict) = &v.verdict else { continue };
            let status = verdict.status.unwrap_or(VerdictStatus::Confident);
            if status != VerdictStatus::Confident {
                self.verdicts.push(SideVerdict {
                    run: run.to_string(),
                    status,
                    statement: verdict.statement.clone(),
                });
            }
        }
        let said = |s: &SideVerdict| format!("{} is {}: {}", s.run, s.status, s.statement);
        let withheld: Vec<String> = self
            .verdicts
            .iter()
            .filter(|s| s.status == VerdictStatus::Withheld)
            .map(said)
            .collect();
        let qualified: Vec<String> = self
            .verdicts
            .iter()
            .filter(|s| s.status == VerdictStatus::Qualified)
            .map(said)
            .collect();
        if !withheld.is_empty() {
            self.gate = Gate::CannotTell;
            self.failed = true;
            self.summary = format!(
                "CANNOT TELL: {} (the gate never passes on a run whose verdict is withheld); {}",
                withheld.join("; "),
                self.summary
            );
        }
        if !qualified.is_empty() {
            self.summary = format!("{} [{}]", self.summary, qualified.join("; "));
        }
        self
    }
}

/// True when a rise of the metric is the worse direction (bandwidth and the computing share:
/// a fall is).
fn rise_is_worse(name: &str, unit: MetricUnit) -> bool {
    unit != MetricUnit::GbPerS && name != "computing_share"
}

/// The base value and the noise of the change of one metric: from history when the base is
/// several runs, else from both runs' steps.
/// What [`noise_of`] found: the base value, the interval (or why there is none), the method
/// and the samples on each side.
struct Found {
    base: Option<f64>,
    interval: Result<Interval, String>,
    method: NoiseMethod,
    n_base: usize,
    n_new: usize,
}

fn noise_of(name: &str, base: &[BTreeMap<String, Metric>], new: Option<&Metric>) -> Found {
    let values: Vec<f64> = base
        .iter()
        .filter_map(|m| m.get(name).map(|x| x.value))
        .collect();
    if base.len() > 1 {
        let mean = (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
        let got = new.and_then(|n| noise::from_history(&values, n.value));
        return Found {
            base: mean,
            method: if got.is_some() {
                NoiseMethod::History
            } else {
                NoiseMethod::Unknown
            },
            interval: got.map(|g| g.1).ok_or_else(|| {
                format!(
                    "{} earlier runs hold it: fewer than {}",
                    values.len(),
                    noise::MIN_HISTORY
                )
            }),
            n_base: values.len(),
            n_new: 1,
        };
    }
    let b = base.first().and_then(|m| m.get(name));
    let steps = |m: Option<&Metric>| m.and_then(|m| m.steps.clone());
    let (bs, ns) = (steps(b), steps(new));
    let sizes = (
        bs.as_ref().map_or(0, |s| s.1.len()),
        ns.as_ref().map_or(0, |s| s.1.len()),
    );
    let calls = |m: Option<&Metric>| m.and_then(|m| m.calls);
    let mut method = NoiseMethod::Steps;
    let (mut n_base, mut n_new) = sizes;
    let interval = match (b, new, bs, ns) {
        (Some(b), Some(n), Some((stat, bs)), Some((_, ns))) => {
            noise::from_steps(stat, &bs, &ns, (b.value, n.value))
        }
        (Some(_), Some(_), ..) => match (calls(b), calls(new)) {
            (Some(cb), Some(cn)) => {
                method = NoiseMethod::Calls;
                (n_base, n_new) = (cb.n as usize, cn.n as usize);
                noise::from_calls(cb, cn)
            }
            _ => Err("no per-step samples of this metric".into()),
        },
        _ => Err("in one run only".into()),
    };
    Found {
        base: b.map(|x| x.value),
        method: if interval.is_ok() {
            method
        } else {
            NoiseMethod::Unknown
        },
        interval,
        n_base,
        n_new,
    }
}

/// Compares every metric of the new run with the base (one run, or the mean of several earlier
/// runs) and applies the thresholds: a threshold fails only when the change crosses it and lies
/// outside the noise (its 95% interval excludes 0 on the threshold's side), or when the noise is
/// unknown (then the threshold applies as given).
pub fn diff(
    base_label: String,
    base: &[BTreeMap<String, Metric>],
    new_label: String,
    new: &BTreeMap<String, Metric>,
    thresholds: &[Threshold],
) -> Result<Diff, DiffError> {
    let mut names: Vec<&String> = base
        .iter()
        .flat_map(|m| m.keys())
        .chain(new.keys())
        .collect();
    names.sort();
    names.dedup();
    let mut used = vec![false; thresholds.len()];
    let mut rows = Vec::new();
    for name in names {
        let n = new.get(name);
        let any = base
            .iter()
            .find_map(|m| m.get(name))
            .or(n)
            .expect("in one of the runs");
        let found = noise_of(name, base, n);
        let (bv, method, n_base, n_new) = (found.base, found.method, found.n_base, found.n_new);
        let unknown_because = found.interval.as_ref().err().cloned();
        let interval = found.interval.ok();
        let nv = n.map(|x| x.value);
        let change = bv.zip(nv).map(|(b, n)| n - b);
        let change_pct = bv
            .zip(nv)
            .and_then(|(b, n)| (b != 0.0).then(|| 100.0 * (n - b) / b.abs()));
        let Applied {
            texts: applied,
            fail,
            crossed,
            worse_up,
        } = apply_thresholds(
            name,
            any.unit,
            (change, change_pct),
            interval,
            thresholds,
            &mut used,
        )?;
        let verdict = match interval {
            _ if bv.is_none() || nv.is_none() => Verdict::NoiseUnknown,
            None => Verdict::NoiseUnknown,
            Some(i) if (i.low > 0.0 && worse_up) || (i.high < 0.0 && !worse_up) => {
                Verdict::Regressed
            }
            Some(i) if i.low > 0.0 || i.high < 0.0 => Verdict::Improved,
            Some(_) => Verdict::WithinNoise,
        };
        let status = if bv.is_none() || nv.is_none() {
            Status::Missing
        } else if fail {
            Status::Fail
        } else if crossed {
            Status::CrossedWithinNoise
        } else {
            Status::Ok
        };
        rows.push(Row {
            metric: name.clone(),
            unit: any.unit,
            definition: any.definition,
            base: bv,
            new: nv,
            change,
            change_pct,
            noise: Noise {
                method,
                n_base,
                n_new,
                ci_low: interval.map(|i| i.low),
                ci_high: interval.map(|i| i.high),
                ci_low_pct: interval.and_then(|i| i.low_pct),
                ci_high_pct: interval.and_then(|i| i.high_pct),
                unknown_because,
            },
            verdict,
            thresholds: applied,
            status,
        });
    }
    if let Some(e) = unknown_metric(base, new, thresholds, &used) {
        return Err(e);
    }
    let failed = rows.iter().any(|r| r.status == Status::Fail);
    Ok(Diff {
        schema_version: super::SCHEMA_VERSION,
        base: base_label,
        new: new_label,
        base_runs: base.len(),
        gate: if failed { Gate::Fail } else { Gate::Pass },
        summary: summary(&rows, thresholds.is_empty(), base.len()),
        rows,
        unmatched_thresholds: thresholds
            .iter()
            .zip(used)
            .filter(|(_, u)| !u)
            .map(|(t, _)| t.text.clone())
            .collect(),
        verdicts: Vec::new(),
        findings: FindingsChange::default(),
        failed,
    })
}

/// What the thresholds that match one metric say about its change.
struct Applied {
    texts: Vec<String>,
    fail: bool,
    crossed: bool,
    worse_up: bool,
}

/// Applies every threshold matching `name` to its (change, change %) and noise interval;
/// marks the thresholds used. A named threshold of another unit is a usage error.
fn apply_thresholds(
    name: &str,
    unit: MetricUnit,
    (change, change_pct): (Option<f64>, Option<f64>),
    interval: Option<Interval>,
    thresholds: &[Threshold],
    used: &mut [bool],
) -> Result<Applied, DiffError> {
    let mut out = Applied {
        texts: Vec::new(),
        fail: false,
        crossed: false,
        worse_up: rise_is_worse(name, unit),
    };
    for (k, t) in thresholds.iter().enumerate() {
        if !t.matches(name) {
            continue;
        }
        let unit_ok = matches!(
            (t.measure, unit),
            (Measure::Percent, _)
                | (Measure::Points, MetricUnit::Pct)
                | (Measure::Nanos, MetricUnit::Ns)
        );
        if !unit_ok {
            // A wildcard skips metrics of another unit; a named metric is a usage error.
            if t.pattern.ends_with('*') {
                continue;
            }
            return Err(DiffError::UnitMismatch {
                text: t.text.clone(),
                measure: t.measure,
                metric: name.to_string(),
                unit,
            });
        }
        used[k] = true;
        if out.texts.is_empty() {
            out.worse_up = t.rise;
        }
        out.texts.push(t.text.clone());
        let delta = match t.measure {
            Measure::Percent => change_pct,
            Measure::Points | Measure::Nanos => change,
        };
        let Some(d) = delta else { continue };
        if !(if t.rise { d > t.limit } else { d < -t.limit }) {
            continue;
        }
        out.crossed = true;
        // Outside the noise on the threshold's side, or no noise to judge by.
        out.fail |= interval.is_none_or(|i| if t.rise { i.low > 0.0 } else { i.high < 0.0 });
    }
    Ok(out)
}

/// A named metric that neither run has is a typo (`step_tme`), never a silently disabled gate;
/// a wildcard that matches nothing is listed as unmatched instead.
fn unknown_metric(
    base: &[BTreeMap<String, Metric>],
    new: &BTreeMap<String, Metric>,
    thresholds: &[Threshold],
    used: &[bool],
) -> Option<DiffError> {
    let (t, _) = thresholds
        .iter()
        .zip(used)
        .find(|(t, u)| !**u && !t.pattern.ends_with('*'))?;
    let mut known: Vec<&str> = base
        .iter()
        .flat_map(|m| m.keys())
        .chain(new.keys())
        .map(String::as_str)
        .collect();
    known.sort_unstable();
    known.dedup();
    let shown = known
        .iter()
        .take(40)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    Some(DiffError::UnknownMetric {
        text: t.text.clone(),
        name: t.pattern.clone(),
        known: if known.len() > 40 {
            format!("{shown}, ...")
        } else {
            shown
        },
    })
}

/// A change and its interval in words: `+5.3% (95% CI +3.1% .. +7.4%, 102 vs 102 steps)`.
fn change_words(r: &Row) -> String {
    let n = &r.noise;
    let (change, interval) = if r.unit == MetricUnit::Pct {
        let c = r.change.unwrap_or(0.0);
        let ci = n.ci_low.zip(n.ci_high);
        (
            format!("{c:+.2} pt"),
            ci.map(|(a, b)| format!("{a:+.2} .. {b:+.2} pt")),
        )
    } else {
        let change = r.change_pct.map_or_else(
            || format!("{:+.3}", r.change.unwrap_or(0.0)),
            |p| format!("{p:+.2}%"),
        );
        let ci = match (n.ci_low_pct.zip(n.ci_high_pct), n.ci_low.zip(n.ci_high)) {
            (Some((a, b)), _) => Some(format!("{a:+.2}% .. {b:+.2}%")),
            (None, Some((a, b))) => Some(format!("{a:+.3} .. {b:+.3}")),
            _ => None,
        };
        (change, ci)
    };
    let what = match n.method {
        NoiseMethod::Steps => format!("{} vs {} steps", n.n_base, n.n_new),
        NoiseMethod::Calls => format!("{} vs {} calls", n.n_base, n.n_new),
        NoiseMethod::History => format!("against {} earlier runs", n.n_base),
        NoiseMethod::Unknown => return change,
    };
    match interval {
        Some(ci) => format!("{change} (95% CI {ci}, {what})"),
        None => change,
    }
}

/// The gate's first line: pass / FAIL and why.
fn summary(rows: &[Row], no_thresholds: bool, base_runs: usize) -> String {
    let of = |st: Status| rows.iter().filter(move |r| r.status == st);
    let fails: Vec<String> = of(Status::Fail)
        .map(|r| match &r.noise.unknown_because {
            Some(why) if r.verdict == Verdict::NoiseUnknown => format!(
                "{} {} crossed its threshold with the noise unknown ({why}): applied as given",
                r.metric,
                change_words(r)
            ),
            _ => format!(
                "{} {} crossed its threshold outside the noise",
                r.metric,
                change_words(r)
            ),
        })
        .collect();
    if !fails.is_empty() {
        return format!("FAIL: {}", fails.join("; "));
    }
    if no_thresholds {
        return "pass: no threshold given".into();
    }
    let within: Vec<String> = of(Status::CrossedWithinNoise)
        .map(|r| format!("{} {}", r.metric, change_words(r)))
        .collect();
    let against = if base_runs > 1 {
        format!(" against {base_runs} earlier runs")
    } else {
        String::new()
    };
    let unknown: Vec<String> = rows
        .iter()
        .filter(|r| !r.thresholds.is_empty() && r.verdict == Verdict::NoiseUnknown)
        .map(|r| {
            format!(
                "{} ({})",
                r.metric,
                r.noise.unknown_because.as_deref().unwrap_or("?")
            )
        })
        .collect();
    let caveat = if unknown.is_empty() {
        String::new()
    } else {
        format!(
            "; noise unknown for {}: thresholds applied as given",
            unknown.join(", ")
        )
    };
    if within.is_empty() {
        format!("pass: no threshold crossed{against}{caveat}")
    } else {
        format!(
            "pass{against}: within noise, not a regression: {}{caveat}",
            within.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(name: &str, unit: MetricUnit, v: f64) -> BTreeMap<String, Metric> {
        BTreeMap::from([(
            name.to_string(),
            Metric {
                unit,
                value: v,
                definition: "",
                steps: None,
                calls: None,
            },
        )])
    }

    #[test]
    fn thresholds_parse_and_apply() {
        let t = parse_thresholds("step_time>+3%, bubble_share>+1pt,kernel.*>+2us,free_share<-5%")
            .unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!((t[2].measure, t[2].limit), (Measure::Nanos, 2000.0));
        assert!(!t[3].rise);
        for bad in ["step_time", "step_time>3", ">+3%", "x>-3%", "x<+3%"] {
            assert!(parse_thresholds(bad).is_err(), "{bad}");
        }
        let run = |b: f64, n: f64| {
            diff(
                "b".into(),
                &[one("step_time", MetricUnit::Ns, b)],
                "n".into(),
                &one("step_time", MetricUnit::Ns, n),
                &t[..1],
            )
            .unwrap()
            .failed
        };
        // +3 % of 1000 ns is 1030: 1030 passes, 1031 fails, a fall never fails a `>`.
        assert!(!run(1000.0, 1030.0));
        assert!(run(1000.0, 1031.0));
        assert!(!run(1000.0, 500.0));
        // Points on a pct metric: 10 % -> 11.5 % is +1.5 pt.
        let p = parse_thresholds("bubble_share>+1pt").unwrap();
        let d = diff(
            "b".into(),
            &[one("bubble_share", MetricUnit::Pct, 10.0)],
            "n".into(),
            &one("bubble_share", MetricUnit::Pct, 11.5),
            &p,
        )
        .unwrap();
        assert!(d.failed);
        // Points on an ns metric is a usage error.
        let e = diff(
            "b".into(),
            &[one("step_time", MetricUnit::Ns, 1.0)],
            "n".into(),
            &one("step_time", MetricUnit::Ns, 1.0),
            &p.iter()
                .map(|x| Threshold {
                    pattern: "step_time".into(),
                    ..x.clone()
                })
                .collect::<Vec<_>>(),
        );
        assert!(e.is_err());
    }

    /// Steps of two runs (made here): the same 60 step times reordered (+0%), the same times
    /// +2% with a spread of ±4% (crosses a 1% threshold within noise), and +10%: a 1% gate
    /// passes the first two (the second as `crossed_within_noise`) and fails the third.
    #[test]
    fn a_threshold_fails_only_outside_the_noise() {
        let times = |scale: f64, spread: f64| -> Arc<Vec<Step>> {
            Arc::new(
                (0..60)
                    .map(|i| {
                        let t = scale * (1000.0 + spread * (((i * 37) % 21) as f64 - 10.0));
                        [t, t / 2.0, 0.0, t / 4.0]
                    })
                    .collect(),
            )
        };
        let metrics = |s: Arc<Vec<Step>>| {
            let mean = Stat::MeanStep.of(&s);
            BTreeMap::from([(
                "step_time".to_string(),
                Metric {
                    unit: MetricUnit::Ns,
                    value: mean,
                    definition: "",
                    steps: Some((Stat::MeanStep, s)),
                    calls: None,
                },
            )])
        };
        let t = parse_thresholds("step_time>+1%").unwrap();
        let base = metrics(times(1.0, 4.0));
        let gate = |new| {
            diff(
                "b".into(),
                std::slice::from_ref(&base),
                "n".into(),
                &new,
                &t,
            )
            .unwrap()
        };
        let same = gate(metrics(times(1.0, 4.0)));
        assert_eq!(
            (same.failed, same.rows[0].verdict),
            (false, Verdict::WithinNoise)
        );
        let noisy = gate(metrics(times(1.02, 40.0)));
        assert_eq!(
            noisy.rows[0].status,
            Status::CrossedWithinNoise,
            "{:?}",
            noisy.rows[0]
        );
        assert!(
            !noisy.failed && noisy.summary.starts_with("pass"),
            "{}",
            noisy.summary
        );
        let slow = gate(metrics(times(1.10, 4.0)));
        assert_eq!(
            (slow.failed, slow.rows[0].verdict),
            (true, Verdict::Regressed)
        );
        assert!(
            slow.summary.starts_with("FAIL: step_time +10.00%"),
            "{}",
            slow.summary
        );
        // Without steps the noise is unknown and the threshold applies as given.
        let bare = diff(
            "b".into(),
            &[one("step_time", MetricUnit::Ns, 1000.0)],
            "n".into(),
            &one("step_time", MetricUnit::Ns, 1020.0),
            &t,
        )
        .unwrap();
        assert_eq!(
            (bare.failed, bare.rows[0].verdict),
            (true, Verdict::NoiseUnknown)
        );
        assert!(bare.summary.contains("noise unknown"), "{}", bare.summary);
    }
}
