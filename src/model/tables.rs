//! [`Tables`]: the whole normalized model of one ingest (one file, one rank or one root), plus
//! the convenience joins every analysis needs (event → thread → process → file).

use super::category::ProcessRole;
use super::comm_tasks::CommTaskTable;
use super::counters::CounterTable;
use super::events::EventTable;
use super::files::FileTable;
use super::flows::FlowTable;
use super::ids::{FileId, ProcessId, ThreadId};
use super::kernels::KernelTable;
use super::memory::{MemoryTable, OpMemoryTable};
use super::meta::MetaTable;
use super::op_args::OpArgsTable;
use super::op_metrics::OpMetricsTable;
use super::reference::ReferenceTable;
use super::steps::StepTable;
use super::strings::{Interner, StrId};
use super::task_waits::TaskWaitTable;
use super::tracks::{ProcessTable, ThreadTable};
use super::vendor_overlap::VendorOverlapTable;
use crate::diag::Diagnostics;

#[derive(Debug, Clone, Default)]
pub struct Tables {
    pub strings: Interner,
    pub files: FileTable,
    pub processes: ProcessTable,
    pub threads: ThreadTable,
    pub events: EventTable,
    pub counters: CounterTable,
    pub flows: FlowTable,
    pub kernels: KernelTable,
    pub comm_tasks: CommTaskTable,
    pub op_metrics: OpMetricsTable,
    pub op_args: OpArgsTable,
    pub steps: StepTable,
    pub task_waits: TaskWaitTable,
    pub memory: MemoryTable,
    pub op_memory: OpMemoryTable,
    pub meta: MetaTable,
    pub reference: ReferenceTable,
    pub vendor_overlap: VendorOverlapTable,
    pub diagnostics: Diagnostics,
}

impl Tables {
    pub fn str(&self, id: StrId) -> &str {
        self.strings.get(id)
    }
    pub fn thread_process(&self, t: ThreadId) -> ProcessId {
        self.threads.process[t.idx()]
    }
    pub fn event_process(&self, i: usize) -> ProcessId {
        self.thread_process(self.events.thread[i])
    }
    pub fn process_file(&self, p: ProcessId) -> FileId {
        self.processes.file[p.idx()]
    }
    pub fn thread_file(&self, t: ThreadId) -> FileId {
        self.process_file(self.thread_process(t))
    }
    pub fn event_file(&self, i: usize) -> FileId {
        self.thread_file(self.events.thread[i])
    }
    pub fn event_rank(&self, i: usize) -> i32 {
        self.files.rank[self.event_file(i).idx()]
    }
    pub fn event_role(&self, i: usize) -> ProcessRole {
        self.processes.role[self.event_process(i).idx()]
    }
    /// True when the thread's process is a device process.
    pub fn thread_is_device_side(&self, t: ThreadId) -> bool {
        self.processes.role[self.thread_process(t).idx()].is_device()
    }
    /// True when the event's process is a device process.
    pub fn event_is_device_side(&self, i: usize) -> bool {
        self.thread_is_device_side(self.events.thread[i])
    }
    pub fn event_device_id(&self, i: usize) -> i32 {
        self.processes.device_id[self.event_process(i).idx()]
    }
    pub fn event_name(&self, i: usize) -> &str {
        self.str(self.events.name[i])
    }
    /// Human label of a thread: its thread_name, else `tid <n>`.
    pub fn thread_label(&self, t: ThreadId) -> String {
        let name = self.threads.name[t.idx()];
        if !name.is_empty() {
            return self.str(name).to_string();
        }
        let text = self.threads.tid_text[t.idx()];
        if !text.is_empty() {
            return self.str(text).to_string();
        }
        format!("tid {}", self.threads.tid[t.idx()])
    }
    /// Human label of a process: its process_name (and labels), else `pid <n>`.
    pub fn process_label(&self, p: ProcessId) -> String {
        let name = self.processes.name[p.idx()];
        let labels = self.processes.labels[p.idx()];
        let base = if !name.is_empty() {
            self.str(name).to_string()
        } else if !self.processes.pid_text[p.idx()].is_empty() {
            self.str(self.processes.pid_text[p.idx()]).to_string()
        } else {
            format!("pid {}", self.processes.pid[p.idx()])
        };
        if labels.is_empty() {
            base
        } else {
            format!("{base} ({})", self.str(labels))
        }
    }
}
