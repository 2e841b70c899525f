//! The parts of a report that `diff` reads, as typed views (declared with
//! [`super::json_view::view!`]). A saved report and a fresh one (serialized) are read by the same
//! code, [`ReportView::read`]: streamed, each kept entry charged to a memory budget, and checked
//! against what a profscope report can hold, so a damaged or made-up file is an error naming the
//! field instead of a silent wrong number. Fields and sections a report lacks or holds as `null`
//! (an analysis left out with `--only`, an older schema) read as empty or zero; unknown fields
//! are skipped.
//!
//! Checked on reading: every number fits the 64-bit range reports are written in; a device's
//! step samples are at most [`MAX_STEP_SAMPLES`], each a time of 0 to a week (the longest span
//! any reader accepts), the four lists of one length; `verdict.status` is one of the closed set;
//! `schema_version` is a version.

use super::json_view::{self, Field, Num, invalid, view};
use super::noise::Step;
use crate::contract::MAX_STEP_SAMPLES;
use crate::contract::evidence::Status;
use serde::Deserializer;
use serde::de::{self, Visitor};
use std::fmt;

/// The most memory a report's view may keep (entries and text): 1 GiB, what a `--detail full`
/// report of 4,096 ranks with 4,096 sampled steps each (the most a device keeps) needs for its
/// samples, twice over.
pub const MAX_VIEW_BYTES: usize = 1 << 30;

view! {
    ReportView {
        schema_version: String,
        verdict: Option<VerdictView>,
        analyses: Analyses,
    }
    /// The report's verdict (absent before schema 0.9.0).
    VerdictView { status: Option<Status>, statement: String }
    Analyses {
        cross_rank: CrossRank,
        device_time: Vec<DeviceTime>,
        bubbles: Vec<Bubbles>,
        dispatch: Vec<Dispatch>,
        communication_ops: CommunicationOps,
        step_sync: Vec<StepSync>,
        communication: Vec<Communication>,
        composition: Vec<Composition>,
        top_events: Vec<TopEvents>,
        advisor: AdvisorView,
    }
    CrossRank { cohorts: Vec<Cohort> }
    Cohort { ranks: Vec<RankSteps>, collectives: Collectives }
    RankSteps { steps: Num, step_mean_ns: StepNs, samples: Samples }
    Collectives { matched: Num, skew_mean_ns: Num }
    DeviceTime {
        computing_ns: Num,
        communication_not_overlapped_ns: Num,
        free_ns: Num,
        window_ns: Num,
    }
    Bubbles { idle_ns: Num, window_ns: Num }
    Dispatch { host_bound: HostBound, latency: Latency }
    HostBound { host_bound_ns: Num, idle_ns: Num }
    Latency { count: Num, p99_ns: Num }
    CommunicationOps { devices: Vec<CommOpsDevice> }
    CommOpsDevice { total: CommOpsTotal }
    CommOpsTotal { times: OpTimes, bandwidth: Vec<Band> }
    OpTimes { wait_ns: Num, transit_ns: Num }
    Band { link: Option<String>, size_bytes: Num, time_ns: Num }
    StepSync { notify_wait_total_ns: Num, replay_total_ns: Num }
    Communication {
        comm_kernels: Share,
        compute_kernel_ns: Num,
        event_and_mem_waits: Share,
        device_task_ns: Num,
    }
    Share { sum_ns: Num }
    Composition { compute_ns: Num, families: Vec<Named> }
    TopEvents { by_sum: Vec<Named> }
    Named { name: Option<String>, sum_ns: Num, count: Num, std_ns: Num }
    AdvisorView { findings: Vec<FindingView> }
    FindingView { rule: String, subject: String, statement: String, time_at_stake_ns: Num }
}

impl ReportView {
    /// Reads a report from JSON text (a saved file, streamed; or a fresh report serialized),
    /// keeping at most `budget` bytes, and checks it.
    pub fn read(r: impl std::io::Read, budget: usize) -> Result<ReportView, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_reader(r);
        let v: ReportView = json_view::read_root(&mut de, budget)?;
        de.end()?;
        v.check().map_err(de::Error::custom)?;
        Ok(v)
    }

    /// Reads a report held as a JSON value (tests, the MCP server's fresh reports).
    pub fn from_value(v: &serde_json::Value) -> Result<ReportView, serde_json::Error> {
        let view: ReportView = json_view::read_root(v, MAX_VIEW_BYTES)?;
        view.check().map_err(de::Error::custom)?;
        Ok(view)
    }

    /// What the reading itself cannot check: a verdict without a status, a schema version that
    /// is not one.
    fn check(&self) -> Result<(), String> {
        if let Some(v) = &self.verdict
            && v.status.is_none()
        {
            return Err("verdict.status: missing (a report's verdict always has one: confident, qualified or withheld)".into());
        }
        let version = &self.schema_version;
        let is_version = version.len() <= 32
            && version.split('.').count() == 3
            && version
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if !version.is_empty() && !is_version {
            return Err(format!(
                "schema_version: {:?} is not a version (N.N.N)",
                crate::diag::cap_text(version, 64)
            ));
        }
        Ok(())
    }
}

impl Field for Status {
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Status;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                json_view::expecting(f, "a verdict status (confident, qualified, withheld)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Status, E> {
                Status::ALL
                    .iter()
                    .copied()
                    .find(|s| *s == v)
                    .ok_or_else(|| {
                        invalid(format_args!(
                            "{:?} is not a verdict status (confident, qualified, withheld)",
                            crate::diag::cap_text(v, 64)
                        ))
                    })
            }
        }
        d.deserialize_str(V)
    }
}

/// A step's length (or a part of it), ns: 0 to a week, what a real step can be.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepNs(pub f64);

impl Field for StepNs {
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Num(x) = Num::read(d)?;
        let week = crate::units::MAX_SPAN_NS as f64;
        if !(0.0..=week).contains(&x) {
            return Err(invalid(format_args!(
                "{x} ns is not a step's time: 0 to a week ({week} ns, the longest span profscope reads)"
            )));
        }
        Ok(StepNs(x))
    }
}

/// The names of a device's per-step sample lists, in [`Step`] order.
const SAMPLE_LISTS: [&str; 4] = [
    "step_ns",
    "computing_ns",
    "communication_not_overlapped_ns",
    "free_ns",
];

/// One list of samples: at most [`MAX_STEP_SAMPLES`] entries.
#[derive(Default)]
struct SampleList(Vec<StepNs>);

impl Field for SampleList {
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        json_view::read_list(
            d,
            MAX_STEP_SAMPLES,
            "profscope keeps the first 4096 steps of a device",
        )
        .map(SampleList)
    }
}

/// One device's per-step samples as steps (step time, computing, exposed communication, free:
/// the four lists of the report zipped), in step order.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    pub steps: Vec<Step>,
}

impl Field for Samples {
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Samples;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                json_view::expecting(f, "an object of sample lists")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, m: A) -> Result<Samples, A::Error> {
                let mut lists: [Option<Vec<StepNs>>; 4] = Default::default();
                json_view::members(m, &SAMPLE_LISTS, |name, m| {
                    let k = SAMPLE_LISTS.iter().position(|n| *n == name).unwrap_or(0);
                    let l: SampleList = m.next_value_seed(json_view::Named::new(name))?;
                    lists[k] = Some(l.0);
                    Ok(())
                })?;
                let n = lists[0].as_ref().map_or(0, Vec::len);
                for (k, l) in lists.iter().enumerate().skip(1) {
                    if let Some(l) = l
                        && l.len() != n
                    {
                        return Err(invalid(format_args!(
                            "{} holds {} entries and step_ns {n}: a report holds one of each per step",
                            SAMPLE_LISTS[k],
                            l.len()
                        )));
                    }
                }
                let at = |k: usize, i: usize| lists[k].as_ref().map_or(0.0, |l| l[i].0);
                let steps = (0..n)
                    .map(|i| [at(0, i), at(1, i), at(2, i), at(3, i)])
                    .collect();
                Ok(Samples { steps })
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(v: serde_json::Value) -> Result<ReportView, String> {
        ReportView::read(v.to_string().as_bytes(), MAX_VIEW_BYTES).map_err(|e| e.to_string())
    }

    #[test]
    fn missing_and_null_values_read_as_empty_or_zero() {
        let v = serde_json::json!({
            "analyses": {
                "cross_rank": null,
                "device_time": [{"computing_ns": 5, "free_ns": null, "extra": [1, 2]}],
                "bubbles": [{"idle_ns": null, "window_ns": 10.5}]
            }
        });
        let r = read(v).unwrap();
        assert!(r.analyses.cross_rank.cohorts.is_empty());
        let d = &r.analyses.device_time[0];
        assert_eq!(
            (d.computing_ns, d.free_ns, d.window_ns),
            (Num(5.0), Num(0.0), Num(0.0))
        );
        assert_eq!(r.analyses.bubbles[0].idle_ns, Num(0.0));
        assert_eq!(r.analyses.bubbles[0].window_ns, Num(10.5));
        assert!(r.analyses.top_events.is_empty() && r.verdict.is_none());
        let empty = read(serde_json::json!({})).unwrap();
        assert!(empty.analyses.dispatch.is_empty());
    }

    fn rank(samples: serde_json::Value) -> serde_json::Value {
        serde_json::json!({"analyses": {"cross_rank": {"cohorts": [{"ranks": [
            {"steps": 2, "step_mean_ns": 10, "samples": {"step_ns": [9, 11]}},
            {"steps": 2, "step_mean_ns": 10, "samples": samples}
        ]}]}}})
    }

    #[test]
    fn samples_are_zipped_into_steps_and_checked() {
        let ok = read(rank(serde_json::json!({
            "step_ns": [10, 12], "computing_ns": [4, 5], "free_ns": [1, 2]
        })))
        .unwrap();
        let r = &ok.analyses.cross_rank.cohorts[0].ranks;
        assert_eq!(
            r[0].samples.steps,
            vec![[9.0, 0.0, 0.0, 0.0], [11.0, 0.0, 0.0, 0.0]]
        );
        assert_eq!(
            r[1].samples.steps,
            vec![[10.0, 4.0, 0.0, 1.0], [12.0, 5.0, 0.0, 2.0]]
        );
        let e = read(rank(serde_json::json!({"step_ns": [10, 9.2e18]}))).unwrap_err();
        assert!(
            e.starts_with("analyses.cross_rank.cohorts[0].ranks[1].samples.step_ns[1]: 9200000000000000000 ns is not a step's time"),
            "{e}"
        );
        let e = read(rank(serde_json::json!({"step_ns": [10, -1]}))).unwrap_err();
        assert!(e.contains("step_ns[1]: -1 ns is not a step's time"), "{e}");
        let e = read(rank(
            serde_json::json!({"step_ns": [10], "free_ns": [1, 2]}),
        ))
        .unwrap_err();
        assert!(
            e.starts_with("analyses.cross_rank.cohorts[0].ranks[1].samples: free_ns holds 2 entries and step_ns 1"),
            "{e}"
        );
        let many = vec![1; MAX_STEP_SAMPLES + 1];
        let e = read(rank(serde_json::json!({"step_ns": many}))).unwrap_err();
        assert!(e.contains("samples.step_ns: more than 4096 entries"), "{e}");
    }

    #[test]
    fn verdict_status_and_schema_version_are_checked() {
        let with = |verdict: serde_json::Value| {
            read(serde_json::json!({"schema_version": "0.13.0", "verdict": verdict}))
        };
        let ok = with(serde_json::json!({"status": "withheld", "statement": "s"})).unwrap();
        assert_eq!(ok.verdict.unwrap().status, Some(Status::Withheld));
        let e = with(serde_json::json!({"status": "nonsense"})).unwrap_err();
        assert!(
            e.starts_with("verdict.status: \"nonsense\" is not a verdict status"),
            "{e}"
        );
        let e = with(serde_json::json!({"status": 7})).unwrap_err();
        assert!(
            e.contains(
                "expected a verdict status (confident, qualified, withheld) at verdict.status"
            ),
            "{e}"
        );
        let e = with(serde_json::json!({"statement": "no status"})).unwrap_err();
        assert!(e.starts_with("verdict.status: missing"), "{e}");
        let e = read(serde_json::json!({"schema_version": "\u{1b}[31m1.0"})).unwrap_err();
        assert!(
            e.contains("schema_version: \"\\u{1b}[31m1.0\" is not a version"),
            "{e}"
        );
    }
}
