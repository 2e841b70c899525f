//! Counter samples (`C` events): one row per (series, timestamp). A `C` event with several args
//! yields one row per numeric arg; the arg key is the series (`KB`, `MHz`, `Read(MB/s)`).

use super::ids::ProcessId;
use super::strings::StrId;

#[derive(Debug, Clone, Default)]
pub struct CounterTable {
    pub process: Vec<ProcessId>,
    /// The `C` event name (`APP/HBM`, `AI Core Freq`).
    pub name: Vec<StrId>,
    /// The arg key of this value.
    pub series: Vec<StrId>,
    pub ts_ns: Vec<i64>,
    pub value: Vec<f64>,
}

impl CounterTable {
    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }
}
