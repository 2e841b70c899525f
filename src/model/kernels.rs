//! Kernel details of device compute tasks (db COMPUTE_TASK_INFO, kernel_details.csv, op_summary):
//! one row per distinct detail signature (a decode loop runs the same few hundred signatures
//! millions of times), reached from `events.kernel`. Strings are interned as written.

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

/// One row's values, as a reader found them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelRow {
    pub op_type: StrId,
    pub task_type: StrId,
    pub block_num: i64,
    pub mix_block_num: i64,
    /// Input shapes, dtypes, formats, then output shapes, dtypes, formats.
    pub shapes: [StrId; 6],
}

impl KernelTable {
    /// Appends `r` as a new row and returns its index (callers deduplicate: see
    /// `TablesBuilder::kernel_row`).
    pub fn push(&mut self, r: &KernelRow) -> u32 {
        let row = self.len() as u32;
        self.op_type.push(r.op_type);
        self.task_type.push(r.task_type);
        self.block_num.push(r.block_num);
        self.mix_block_num.push(r.mix_block_num);
        self.input_shapes.push(r.shapes[0]);
        self.input_dtypes.push(r.shapes[1]);
        self.input_formats.push(r.shapes[2]);
        self.output_shapes.push(r.shapes[3]);
        self.output_dtypes.push(r.shapes[4]);
        self.output_formats.push(r.shapes[5]);
        row
    }

    /// Row `i`'s values.
    pub fn row(&self, i: usize) -> KernelRow {
        KernelRow {
            op_type: self.op_type[i],
            task_type: self.task_type[i],
            block_num: self.block_num[i],
            mix_block_num: self.mix_block_num[i],
            shapes: [
                self.input_shapes[i],
                self.input_dtypes[i],
                self.input_formats[i],
                self.output_shapes[i],
                self.output_dtypes[i],
                self.output_formats[i],
            ],
        }
    }

    pub fn len(&self) -> usize {
        self.op_type.len()
    }
    pub fn is_empty(&self) -> bool {
        self.op_type.is_empty()
    }
}
