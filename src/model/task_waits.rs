//! The vendor's own wait before each device task of a CSV-only export (kernel_details.csv /
//! op_summary `Wait Time(us)`): how long after the previous task (in start order, any stream)
//! ended the task started, as the exporter computed it over every task it saw. Keyed by the
//! task's thread and start, as flows are (event indexes change when events are sorted).

use super::ids::ThreadId;

#[derive(Debug, Clone, Default)]
pub struct TaskWaitTable {
    /// The task's `Ascend Hardware` stream thread.
    pub thread: Vec<ThreadId>,
    /// The task's start, ns.
    pub ts_ns: Vec<i64>,
    /// `Wait Time(us)` in ns (≥ 0).
    pub wait_ns: Vec<i64>,
}

impl TaskWaitTable {
    pub fn push(&mut self, thread: ThreadId, ts_ns: i64, wait_ns: i64) {
        self.thread.push(thread);
        self.ts_ns.push(ts_ns);
        self.wait_ns.push(wait_ns);
    }
    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }
}
