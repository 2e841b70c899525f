//! The events table: every timed event (complete `X`, matched `B`/`E`, instant `i`), struct of
//! arrays. Rank, file, process, side and device id are reached through `thread`.

use super::category::Category;
use super::coded::Coded;
use super::ids::ThreadId;
use super::narrow::NarrowI64;
use super::strings::StrId;
use serde::Serialize;

/// How the event was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum EventKind {
    /// `X`, or a matched `B`/`E` pair.
    Complete,
    /// `i` / `I` (dur_ns = 0).
    Instant,
}

#[derive(Debug, Clone, Default)]
pub struct EventTable {
    pub thread: Vec<ThreadId>,
    pub ts_ns: Vec<i64>,
    pub dur_ns: NarrowI64,
    pub name: Vec<StrId>,
    pub cat: Coded<StrId>,
    /// Ascend `args["Task Type"]` / HCCL `args["task type"]`; empty elsewhere.
    pub task_type: Coded<StrId>,
    /// Physical stream: `Physic Stream Id`, else `Stream Id`, else Kineto `stream`, else the tid
    /// of a device thread; -1 on host events.
    pub stream: Coded<i32>,
    pub category: Vec<Category>,
    pub kind: Vec<EventKind>,
    /// Ascend `connection_id` (host→device); -1 absent.
    pub connection_id: NarrowI64,
    /// torch_npu `correlation_id` / Kineto `correlation`; -1 absent.
    pub correlation_id: NarrowI64,
    /// The graph a device event was replayed from: Ascend `Model Id` (trace_view.json), `model
    /// id` (HCCL), TASK.modelId (db), kernel_details.csv `Model ID`; Kineto `graph id`
    /// (CUDA >= 12). -1 none (Ascend writes 4294967295 for a task outside any graph).
    pub graph_id: Coded<i64>,
    /// The kernel a host launch call names: HIP runtime `args.kernel`, Ascend `Node@launch`
    /// `args.item_id`; empty elsewhere (CUDA runtime calls name none). Graph mode aligns the
    /// launches a capture recorded with the replays' device events by it.
    pub launched: Coded<StrId>,
    /// Row of [`super::kernels::KernelTable`] (op type, block dims, shapes); [`NO_ROW`] when none.
    pub kernel: Vec<u32>,
    /// Row of [`super::comm_tasks::CommTaskTable`] (HCCL plane task details); [`NO_ROW`] when none.
    pub comm_task: Vec<u32>,
}

/// The `kernel` / `comm_task` value of an event without such a row.
pub const NO_ROW: u32 = u32::MAX;

/// Ascend's model id of a task outside any graph (`4294967295`, u32::MAX).
pub const NO_GRAPH_ASCEND: i64 = u32::MAX as i64;

/// The `graph_id` value of a file's model / graph id: -1 for none (negative, or Ascend's
/// [`NO_GRAPH_ASCEND`]).
pub fn graph_id_of(v: i64) -> i64 {
    if v < 0 || v == NO_GRAPH_ASCEND { -1 } else { v }
}

impl EventTable {
    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }
    pub fn end_ns(&self, i: usize) -> i64 {
        self.ts_ns[i] + self.dur_ns.at(i)
    }
    /// A copy with only the rows where `keep` is true.
    pub fn retain(&self, keep: &[bool]) -> EventTable {
        fn pick<T: Copy>(v: &[T], keep: &[bool]) -> Vec<T> {
            v.iter()
                .zip(keep)
                .filter(|(_, k)| **k)
                .map(|(x, _)| *x)
                .collect()
        }
        EventTable {
            thread: pick(&self.thread, keep),
            ts_ns: pick(&self.ts_ns, keep),
            dur_ns: self.dur_ns.pick(keep),
            name: pick(&self.name, keep),
            cat: self.cat.pick(keep),
            task_type: self.task_type.pick(keep),
            stream: self.stream.pick(keep),
            category: pick(&self.category, keep),
            kind: pick(&self.kind, keep),
            connection_id: self.connection_id.pick(keep),
            correlation_id: self.correlation_id.pick(keep),
            graph_id: self.graph_id.pick(keep),
            launched: self.launched.pick(keep),
            kernel: pick(&self.kernel, keep),
            comm_task: pick(&self.comm_task, keep),
        }
    }

    pub fn reserve(&mut self, n: usize) {
        self.thread.reserve(n);
        self.ts_ns.reserve(n);
        self.dur_ns.reserve(n);
        self.name.reserve(n);
        self.cat.reserve(n);
        self.task_type.reserve(n);
        self.stream.reserve(n);
        self.category.reserve(n);
        self.kind.reserve(n);
        self.connection_id.reserve(n);
        self.correlation_id.reserve(n);
        self.graph_id.reserve(n);
        self.launched.reserve(n);
        self.kernel.reserve(n);
        self.comm_task.reserve(n);
    }

    /// Fills the link columns (`kernel`, `comm_task`) with [`NO_ROW`] up to the row count, for
    /// readers whose rows carry no such details.
    pub fn pad_links(&mut self) {
        let n = self.len();
        self.kernel.resize(n, NO_ROW);
        self.comm_task.resize(n, NO_ROW);
    }
}
