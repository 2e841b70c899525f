//! Kernel details of device compute tasks (db COMPUTE_TASK_INFO, kernel_details.csv, op_summary):
//! one row per task that has them, reached from `events.kernel`. Strings are interned as written.

use super::strings::StrId;

#[derive(Debug, Clone, Default)]
pub struct KernelTable {
    /// Operator type (`MatMulV2`, `TransData`): what msprof-analyze groups compute time by.
    pub op_type: Vec<StrId>,
    /// The kernel's task type as its info row states it (`AI_VECTOR_CORE`, `MIX_AIV`,
    /// `DSA_SQE`); the TASK row's may differ (`KERNEL_AIVEC`).
    pub task_type: Vec<StrId>,
    /// Cube/vector blocks (`blockNum`, older CANN `blockDim`); -1 unknown.
    pub block_num: Vec<i64>,
    /// Mixed-kernel blocks (`mixBlockNum`, older `mixBlockDim`); -1 unknown.
    pub mix_block_num: Vec<i64>,
    pub input_shapes: Vec<StrId>,
    pub input_dtypes: Vec<StrId>,
    pub input_formats: Vec<StrId>,
    pub output_shapes: Vec<StrId>,
    pub output_dtypes: Vec<StrId>,
    pub output_formats: Vec<StrId>,
}

impl KernelTable {
    pub fn len(&self) -> usize {
        self.op_type.len()
    }
    pub fn is_empty(&self) -> bool {
        self.op_type.is_empty()
    }
}
