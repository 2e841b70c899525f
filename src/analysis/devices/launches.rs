//! The launch call of each device task of one device (Ascend connection ids, Kineto
//! correlations, or torch_npu flows when a file has no CANN API rows), computed once per device
//! and cached on it: dispatch, bubbles and cross_rank read it.

use super::{Device, iv};
pub use crate::contract::dispatch::Link;
use crate::model::flows::FlowPhase;
use crate::model::hash::FxHashMap;
use crate::model::{Category, ProcessRole, Tables, ThreadId};

/// "No launch" in [`Launches::launch`].
pub const NO_LAUNCH: u32 = u32::MAX;

/// The launch call of each device task of one device.
pub struct Launches {
    pub link: Link,
    /// Per entry of [`Device::events`]: the event index of the host call that launched it, or
    /// [`NO_LAUNCH`].
    pub launch: Vec<u32>,
}

impl Launches {
    /// True when launch call `c` had certainly issued its task before `a`: it began before `a`
    /// (a CANN / runtime call), or, when the launcher is a framework op above the real call
    /// ([`Link::Flow`]), the op had ended by `a`.
    pub fn issued_before(&self, t: &Tables, c: u32, a: i64) -> bool {
        let (start, end) = iv(t, c);
        match self.link {
            Link::Flow => end <= a,
            _ => start <= a,
        }
    }
}

/// The launches of `d`'s tasks, computed once per device.
pub fn launches<'a>(t: &Tables, d: &'a Device) -> &'a Launches {
    d.launches.get_or_init(|| link(t, d))
}

fn link(t: &Tables, d: &Device) -> Launches {
    let kineto = t.processes.role[d.process.idx()] == ProcessRole::KinetoDevice;
    let key = |i: usize| {
        if kineto {
            t.events.correlation_id.at(i)
        } else {
            t.events.connection_id.at(i)
        }
    };
    // The host calls of the device's file by link id, only for the ids the device's tasks carry
    // (a file has far more host calls than launches); the earliest when several share one.
    let mut wanted: FxHashMap<i64, u32> = FxHashMap::default();
    for &i in &d.events {
        let k = key(i as usize);
        if k >= 0 {
            wanted.insert(k, NO_LAUNCH);
        }
    }
    let host_role = if kineto {
        ProcessRole::Host
    } else {
        ProcessRole::CannApi
    };
    let host_process: Vec<bool> = (0..t.processes.len())
        .map(|p| t.processes.file[p] == d.file && t.processes.role[p] == host_role)
        .collect();
    // Whether the file has host calls with link ids at all (else: flows, below).
    let mut any_call = false;
    if host_process.iter().any(|&x| x) {
        for i in 0..t.events.len() {
            let k = key(i);
            if k < 0
                || t.events.category[i] != Category::HostOp
                || !host_process[t.event_process(i).idx()]
            {
                continue;
            }
            any_call = true;
            if wanted.is_empty() {
                break;
            }
            let Some(e) = wanted.get_mut(&k) else {
                continue;
            };
            if *e == NO_LAUNCH
                || (t.events.ts_ns[i], i) < (t.events.ts_ns[*e as usize], *e as usize)
            {
                *e = i as u32;
            }
        }
    }
    let mut calls = wanted;
    calls.retain(|_, c| *c != NO_LAUNCH);
    let mut link = if kineto {
        Link::Correlation
    } else {
        Link::ConnectionId
    };
    if !any_call && !kineto {
        calls = flow_calls(t, d);
        link = Link::Flow;
    }
    let launch = d
        .events
        .iter()
        .map(|&i| {
            let k = key(i as usize);
            if k < 0 {
                NO_LAUNCH
            } else {
                calls.get(&k).copied().unwrap_or(NO_LAUNCH)
            }
        })
        .collect();
    Launches { link, launch }
}

/// Connection id → host op, from flows that start on a host op and finish on one of `d`'s tasks
/// (the task's connection id stands for every task of that launch).
fn flow_calls(t: &Tables, d: &Device) -> FxHashMap<i64, u32> {
    let f = &t.flows;
    let mut out: FxHashMap<i64, u32> = FxHashMap::default();
    if f.is_empty() {
        return out;
    }
    let tasks: FxHashMap<(ThreadId, i64), u32> = d
        .events
        .iter()
        .map(|&i| ((t.events.thread[i as usize], t.events.ts_ns[i as usize]), i))
        .collect();
    // Flow id → the connection id of the task it finishes on.
    let mut conn_of: FxHashMap<u64, i64> = FxHashMap::default();
    for j in 0..f.len() {
        if f.phase[j] == FlowPhase::Finish
            && let Some(&i) = tasks.get(&(f.thread[j], f.ts_ns[j]))
            && t.events.connection_id.at(i as usize) >= 0
        {
            conn_of.insert(f.id[j], t.events.connection_id.at(i as usize));
        }
    }
    // (host thread, start) of each flow start → connection ids (one op can launch several).
    let mut starts: FxHashMap<(ThreadId, i64), Vec<i64>> = FxHashMap::default();
    for j in 0..f.len() {
        if f.phase[j] == FlowPhase::Start
            && let Some(&c) = conn_of.get(&f.id[j])
        {
            starts.entry((f.thread[j], f.ts_ns[j])).or_default().push(c);
        }
    }
    for i in 0..t.events.len() {
        if t.events.category[i] == Category::HostOp
            && let Some(cs) = starts.get(&(t.events.thread[i], t.events.ts_ns[i]))
        {
            for &c in cs {
                out.entry(c).or_insert(i as u32);
            }
        }
    }
    out
}
