//! Processes and threads of the traces. A device stream is a thread of a device process; an
//! event points at its thread, the thread at its process, the process at its file.

use super::category::ProcessRole;
use super::ids::{FileId, ProcessId};
use super::strings::StrId;

#[derive(Debug, Clone, Default)]
pub struct ProcessTable {
    pub file: Vec<FileId>,
    /// Numeric pid as written; a string pid (Kineto `"Spans"`) gets a negative synthetic id.
    pub pid: Vec<i64>,
    /// The pid as text when it was a string, else empty.
    pub pid_text: Vec<StrId>,
    /// `process_name` metadata.
    pub name: Vec<StrId>,
    /// `process_labels` metadata (`NPU`, `NPU 3`, `CPU`, `GPU 0`).
    pub labels: Vec<StrId>,
    pub sort_index: Vec<i64>,
    pub role: Vec<ProcessRole>,
    /// Device id from the labels (`NPU 3`, `GPU 0`) or Kineto `args.device`; -1 unknown.
    pub device_id: Vec<i32>,
}

impl ProcessTable {
    pub fn len(&self) -> usize {
        self.file.len()
    }
    pub fn is_empty(&self) -> bool {
        self.file.is_empty()
    }
    pub fn push(&mut self, file: FileId, pid: i64, pid_text: StrId) -> ProcessId {
        let id = ProcessId(self.file.len() as u32);
        self.file.push(file);
        self.pid.push(pid);
        self.pid_text.push(pid_text);
        self.name.push(StrId::EMPTY);
        self.labels.push(StrId::EMPTY);
        self.sort_index.push(i64::MIN);
        self.role.push(ProcessRole::Unknown);
        self.device_id.push(-1);
        id
    }
}

#[derive(Debug, Clone, Default)]
pub struct ThreadTable {
    pub process: Vec<ProcessId>,
    /// Numeric tid; for device processes this is the stream / plane number.
    pub tid: Vec<i64>,
    pub tid_text: Vec<StrId>,
    /// `thread_name` metadata (`Stream 3`, `Plane 0`, `Group 0 Communication`, `Thread 123`).
    pub name: Vec<StrId>,
    pub sort_index: Vec<i64>,
}

impl ThreadTable {
    pub fn len(&self) -> usize {
        self.process.len()
    }
    pub fn is_empty(&self) -> bool {
        self.process.is_empty()
    }
    pub fn push(&mut self, process: ProcessId, tid: i64, tid_text: StrId) -> super::ids::ThreadId {
        let id = super::ids::ThreadId(self.process.len() as u32);
        self.process.push(process);
        self.tid.push(tid);
        self.tid_text.push(tid_text);
        self.name.push(StrId::EMPTY);
        self.sort_index.push(i64::MIN);
        id
    }
}
