//! Run-to-run comparison for regression gates: run-level metrics read from two reports (JSON
//! values read through one typed view, `diff_input`, so a saved report and a fresh one go through
//! the same code), their changes, and
//! thresholds (`step_time>+3%,bubble_share>+1pt,kernel.*>+10%`) that decide pass or fail.
//!
//! Every metric is a ratio or a mean, never a sum over the capture, so two captures of different
//! length compare fairly. Its unit is `ns` or `pct`, and its denominator is stated.

use super::diff_input::{self as input, Num, ReportView};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize)]
pub struct Metric {
    pub unit: MetricUnit,
    pub value: f64,
    /// What the value is (and its denominator).
    pub definition: &'static str,
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
    let view = ReportView::deserialize(report).map_err(|e| DiffError::NotAReport(e.to_string()))?;
    let a = &view.analyses;
    let mut m = Metrics::default();
    step_metrics(&a.cross_rank, &mut m);
    device_metrics(a, &mut m);
    dispatch_metrics(&a.dispatch, &mut m);
    collective_metrics(&a.communication_ops, &mut m);
    communication_metrics(a, &mut m);
    kernel_metrics(a, &mut m);
    Ok(m.0)
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
    let mut kernels: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for x in a.top_events.iter().flat_map(|t| &t.by_sum) {
        let e = kernels.entry(name(x)).or_default();
        e.0 += x.sum_ns.0;
        e.1 += x.count.0;
    }
    for (kernel, (ns, n)) in kernels {
        m.put(
            format!("kernel.{kernel}"),
            MetricUnit::Ns,
            (n > 0.0).then(|| ns / n),
            "mean duration per call of a top event (top_events by sum)",
        );
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

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    /// A threshold was crossed.
    Fail,
    /// In one run only.
    Missing,
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
    /// The thresholds that apply, as written.
    pub thresholds: Vec<String>,
    pub status: Status,
}

#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub schema_version: &'static str,
    pub base: String,
    pub new: String,
    pub rows: Vec<Row>,
    /// Thresholds that matched no metric of either run (not evaluated).
    pub unmatched_thresholds: Vec<String>,
    pub failed: bool,
}

/// Compares every metric of the two runs and applies the thresholds.
pub fn diff(
    base_label: String,
    base: &BTreeMap<String, Metric>,
    new_label: String,
    new: &BTreeMap<String, Metric>,
    thresholds: &[Threshold],
) -> Result<Diff, DiffError> {
    let mut names: Vec<&String> = base.keys().chain(new.keys()).collect();
    names.sort();
    names.dedup();
    let mut used = vec![false; thresholds.len()];
    let mut rows = Vec::new();
    for name in names {
        let (b, n) = (base.get(name), new.get(name));
        let any = b.or(n).expect("in one of the runs");
        let (bv, nv) = (b.map(|x| x.value), n.map(|x| x.value));
        let change = bv.zip(nv).map(|(b, n)| n - b);
        let change_pct = bv
            .zip(nv)
            .and_then(|(b, n)| (b != 0.0).then(|| 100.0 * (n - b) / b.abs()));
        let mut applied = Vec::new();
        let mut fail = false;
        for (k, t) in thresholds.iter().enumerate() {
            if !t.matches(name) {
                continue;
            }
            let unit_ok = matches!(
                (t.measure, any.unit),
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
                    metric: name.clone(),
                    unit: any.unit,
                });
            }
            used[k] = true;
            applied.push(t.text.clone());
            let delta = match t.measure {
                Measure::Percent => change_pct,
                Measure::Points | Measure::Nanos => change,
            };
            if let Some(d) = delta {
                fail |= if t.rise { d > t.limit } else { d < -t.limit };
            }
        }
        let status = if b.is_none() || n.is_none() {
            Status::Missing
        } else if fail {
            Status::Fail
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
            thresholds: applied,
            status,
        });
    }
    // A named metric that neither run has is a typo (`step_tme`), never a silently disabled gate;
    // a wildcard that matches nothing is listed as unmatched.
    if let Some((t, _)) = thresholds
        .iter()
        .zip(&used)
        .find(|(t, u)| !**u && !t.pattern.ends_with('*'))
    {
        let mut known: Vec<&str> = base.keys().chain(new.keys()).map(String::as_str).collect();
        known.sort_unstable();
        known.dedup();
        let shown = known
            .iter()
            .take(40)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        return Err(DiffError::UnknownMetric {
            text: t.text.clone(),
            name: t.pattern.clone(),
            known: if known.len() > 40 {
                format!("{shown}, ...")
            } else {
                shown
            },
        });
    }
    let failed = rows.iter().any(|r| matches!(r.status, Status::Fail));
    Ok(Diff {
        schema_version: super::SCHEMA_VERSION,
        base: base_label,
        new: new_label,
        rows,
        unmatched_thresholds: thresholds
            .iter()
            .zip(used)
            .filter(|(_, u)| !u)
            .map(|(t, _)| t.text.clone())
            .collect(),
        failed,
    })
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
                &one("step_time", MetricUnit::Ns, b),
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
            &one("bubble_share", MetricUnit::Pct, 10.0),
            "n".into(),
            &one("bubble_share", MetricUnit::Pct, 11.5),
            &p,
        )
        .unwrap();
        assert!(d.failed);
        // Points on an ns metric is a usage error.
        let e = diff(
            "b".into(),
            &one("step_time", MetricUnit::Ns, 1.0),
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
}
