//! The parts of a report that `diff` reads, as typed fields. A saved report and a fresh one (both
//! JSON values) deserialize into the same view; fields and sections a report lacks or holds as
//! `null` (an analysis left out with `--only`, an older schema) read as empty or zero, and a
//! number that is not one reads as zero, as the metrics have always treated them. Unknown
//! fields are ignored, so the view reads every report that has these fields.

use serde::{Deserialize, Deserializer};

/// A JSON number as f64; anything else (null, a string, absent) is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Num(pub f64);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Ok(Num(v.as_f64().unwrap_or(0.0)))
    }
}

/// `null` as the type's default (serde's `default` covers only a missing field).
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Declares view structs whose every field defaults when missing or null.
macro_rules! view {
    ($( $name:ident { $( $field:ident : $ty:ty ),* $(,)? } )*) => {
        $(
            #[derive(Debug, Clone, Default, Deserialize)]
            pub struct $name {
                $( #[serde(default, deserialize_with = "nullable")] pub $field: $ty, )*
            }
        )*
    };
}

view! {
    ReportView { analyses: Analyses }
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
    }
    CrossRank { cohorts: Vec<Cohort> }
    Cohort { ranks: Vec<RankSteps>, collectives: Collectives }
    RankSteps { steps: Num, step_mean_ns: Num, samples: Samples }
    Samples {
        step_ns: Vec<Num>,
        computing_ns: Vec<Num>,
        communication_not_overlapped_ns: Vec<Num>,
        free_ns: Vec<Num>,
    }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_null_and_odd_values_read_as_empty_or_zero() {
        let v = serde_json::json!({
            "analyses": {
                "cross_rank": null,
                "device_time": [{"computing_ns": 5, "free_ns": "x", "extra": [1, 2]}],
                "bubbles": [{"idle_ns": null, "window_ns": 10.5}]
            }
        });
        let r = ReportView::deserialize(&v).unwrap();
        assert!(r.analyses.cross_rank.cohorts.is_empty());
        let d = &r.analyses.device_time[0];
        assert_eq!(
            (d.computing_ns, d.free_ns, d.window_ns),
            (Num(5.0), Num(0.0), Num(0.0))
        );
        assert_eq!(r.analyses.bubbles[0].idle_ns, Num(0.0));
        assert_eq!(r.analyses.bubbles[0].window_ns, Num(10.5));
        assert!(r.analyses.top_events.is_empty());
        let empty = ReportView::deserialize(&serde_json::json!({})).unwrap();
        assert!(empty.analyses.dispatch.is_empty());
    }
}
