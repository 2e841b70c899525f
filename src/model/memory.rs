//! Memory evidence: sampled totals per component ([`MemoryTable`]: db NPU_MEM, NPU_MODULE_MEM,
//! MEMORY_RECORD) and per-operator allocations ([`OpMemoryTable`]: db OP_MEMORY). Bytes and ns,
//! as the profiler wrote them; -1 where a source has no such value.

use super::ids::FileId;
use super::strings::StrId;

#[derive(Debug, Clone, Default)]
pub struct MemoryTable {
    pub file: Vec<FileId>,
    pub device: Vec<i32>,
    /// The source table (`NPU_MEM`, `NPU_MODULE_MEM`, `MEMORY_RECORD`, `npu_module_mem.csv`).
    pub source: Vec<StrId>,
    /// NPU_MEM: `app` / `device`; NPU_MODULE_MEM: the module (`HCCL`, `RUNTIME`, `APP`, ...);
    /// MEMORY_RECORD: `PTA`, `GE`, `PTA+GE`, `WORKSPACE`.
    pub component: Vec<StrId>,
    pub ts_ns: Vec<i64>,
    /// MEMORY_RECORD totalAllocated.
    pub allocated_bytes: Vec<i64>,
    /// MEMORY_RECORD totalReserved; NPU_MODULE_MEM totalReserved.
    pub reserved_bytes: Vec<i64>,
    /// MEMORY_RECORD totalActive.
    pub active_bytes: Vec<i64>,
    /// NPU_MEM hbm (HBM in use).
    pub hbm_bytes: Vec<i64>,
}

impl MemoryTable {
    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }
}

#[derive(Debug, Clone, Default)]
pub struct OpMemoryTable {
    pub file: Vec<FileId>,
    pub device: Vec<i32>,
    /// Operator (`aten::empty`; GE operators prefixed `cann::`).
    pub name: Vec<StrId>,
    pub size_bytes: Vec<i64>,
    pub allocation_ns: Vec<i64>,
    /// -1 when never released inside the capture.
    pub release_ns: Vec<i64>,
    pub allocation_total_allocated: Vec<i64>,
    pub allocation_total_reserved: Vec<i64>,
    pub release_total_allocated: Vec<i64>,
    pub release_total_reserved: Vec<i64>,
}

impl OpMemoryTable {
    pub fn len(&self) -> usize {
        self.name.len()
    }
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }
}
