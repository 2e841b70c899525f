//! The launch call of each device task of one device (Ascend connection ids, Kineto
//! correlations, or torch_npu flows when a file has no CANN API rows or none of them shares a
//! task's connection id), computed once per device and cached on it: dispatch, bubbles and
//! cross_rank read it. With flow links, the runtime's own launch time comes from the
//! `HostToDevice` flow that ends on the task when the file has one (its start is the CANN launch
//! call's start; torch_npu writes it even when it writes no CANN events).

use super::{Device, iv};
pub use crate::contract::dispatch::Link;
use crate::model::flows::FlowPhase;
use crate::model::hash::FxHashMap;
use crate::model::{Category, ProcessRole, Tables, ThreadId};

/// "No launch" in [`Launches::launch`].
pub const NO_LAUNCH: u32 = u32::MAX;

/// "Not known" in [`Launches::launched_at`].
const NO_TIME: i64 = i64::MIN;

/// The launch call of each device task of one device.
pub struct Launches {
    pub link: Link,
    /// Per entry of [`Device::events`]: the event index of the host call that launched it, or
    /// [`NO_LAUNCH`].
    pub launch: Vec<u32>,
    /// Flow links only (else empty): per entry of [`Device::events`], when the runtime launched
    /// it (the start of the `HostToDevice` flow of its connection id), or `NO_TIME`.
    launched_at: Vec<i64>,
}

/// One task's launch: the task, the host call (or framework op) that launched it, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub task: u32,
    pub call: u32,
    /// When the launch began: the call's start, or the `HostToDevice` flow's start.
    pub at_ns: i64,
    /// True when `at_ns` is the runtime's launch itself; false when it is the start of a
    /// framework op that launched the task somewhere inside it ([`Link::Flow`] without a
    /// `HostToDevice` time).
    pub exact: bool,
}

impl Launch {
    /// True when the launch certainly began after `a` (a framework op that began after `a`
    /// launched after it too).
    pub fn late(&self, a: i64) -> bool {
        self.at_ns > a
    }

    /// True when the launch had certainly issued its task by `a`: it began by `a`, or, when only
    /// the framework op above the real call is known, the op had ended by `a`.
    pub fn issued_before(&self, t: &Tables, a: i64) -> bool {
        if self.exact {
            self.at_ns <= a
        } else {
            iv(t, self.call).1 <= a
        }
    }
}

impl Launches {
    /// The launch of entry `k` of [`Device::events`], when linked.
    pub fn of(&self, d: &Device, t: &Tables, k: usize) -> Option<Launch> {
        let call = *self.launch.get(k).filter(|&&c| c != NO_LAUNCH)?;
        let flow = self.launched_at.get(k).copied().filter(|&x| x != NO_TIME);
        Some(Launch {
            task: d.events[k],
            call,
            at_ns: flow.unwrap_or(t.events.ts_ns[call as usize]),
            exact: flow.is_some() || self.link != Link::Flow,
        })
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
    // A launch's tasks come one after another (a graph replay's hundreds share one id): an id
    // equal to the previous task's is not looked up again.
    let mut wanted: FxHashMap<i64, u32> = FxHashMap::default();
    let mut last = -1;
    for &i in &d.events {
        let k = key(i as usize);
        if k >= 0 && k != last {
            wanted.insert(k, NO_LAUNCH);
        }
        last = k;
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
    // No CANN call, or none that shares a task's connection id (a 2024 trace_view.json whose
    // node-level launch calls were not written): the flows.
    if !kineto && (!any_call || calls.is_empty()) {
        calls = flow_calls(t, d);
        link = Link::Flow;
    }
    let mut last = (-1, NO_LAUNCH);
    let launch = d
        .events
        .iter()
        .map(|&i| {
            let k = key(i as usize);
            if k < 0 {
                NO_LAUNCH
            } else if k == last.0 {
                last.1
            } else {
                let c = calls.get(&k).copied().unwrap_or(NO_LAUNCH);
                last = (k, c);
                c
            }
        })
        .collect();
    let launched_at = if link == Link::Flow {
        flow_times(t, d)
    } else {
        Vec::new()
    };
    Launches {
        link,
        launch,
        launched_at,
    }
}

/// Per entry of `d.events`: the start of the `HostToDevice` flow of its connection id (the flow
/// ends on one task of the launch; its start is the runtime's launch), or `NO_TIME`. Empty when
/// the file has no such flow.
fn flow_times(t: &Tables, d: &Device) -> Vec<i64> {
    let f = &t.flows;
    let Some(cat) = t.strings.lookup("HostToDevice") else {
        return Vec::new();
    };
    let tasks: FxHashMap<(ThreadId, i64), i64> = d
        .events
        .iter()
        .map(|&i| i as usize)
        .filter(|&i| t.events.connection_id.at(i) >= 0)
        .map(|i| {
            (
                (t.events.thread[i], t.events.ts_ns[i]),
                t.events.connection_id.at(i),
            )
        })
        .collect();
    // Flow id → connection id of the task it ends on; then connection id → the flow's start.
    // Flow ids are per file: only the device's file's flows.
    let mine = |j: usize| t.process_file(t.thread_process(f.thread[j])) == d.file;
    let mut conn_of: FxHashMap<u64, i64> = FxHashMap::default();
    for j in (0..f.len()).filter(|&j| f.cat[j] == cat && f.phase[j] == FlowPhase::Finish) {
        if let Some(&c) = tasks.get(&(f.thread[j], f.ts_ns[j])) {
            conn_of.insert(f.id[j], c);
        }
    }
    let mut at: FxHashMap<i64, i64> = FxHashMap::default();
    for j in (0..f.len()).filter(|&j| f.cat[j] == cat && f.phase[j] == FlowPhase::Start && mine(j))
    {
        if let Some(&c) = conn_of.get(&f.id[j]) {
            let e = at.entry(c).or_insert(f.ts_ns[j]);
            *e = (*e).min(f.ts_ns[j]);
        }
    }
    if at.is_empty() {
        return Vec::new();
    }
    d.events
        .iter()
        .map(|&i| {
            at.get(&t.events.connection_id.at(i as usize))
                .copied()
                .unwrap_or(NO_TIME)
        })
        .collect()
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
            && t.process_file(t.thread_process(f.thread[j])) == d.file
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
