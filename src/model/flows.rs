//! Flow events (`s`, `t`, `f`): host→device links (`HostToDevice`, `async_npu`, Kineto
//! `ac2g`), enqueue→dequeue, forward→backward. Ids are kept as written (numeric strings parsed).

use super::ids::ThreadId;
use super::strings::StrId;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum FlowPhase {
    Start,
    Step,
    Finish,
}

#[derive(Debug, Clone, Default)]
pub struct FlowTable {
    pub thread: Vec<ThreadId>,
    pub phase: Vec<FlowPhase>,
    pub cat: Vec<StrId>,
    pub name: Vec<StrId>,
    /// Flow id: the number, or a hash of a non-numeric string id.
    pub id: Vec<u64>,
    pub ts_ns: Vec<i64>,
    /// `bp: "e"` (binds to the enclosing slice).
    pub bind_enclosing: Vec<bool>,
}

impl FlowTable {
    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }
}
