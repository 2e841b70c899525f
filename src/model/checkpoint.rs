//! A model checkpoint's tensors as their safetensors headers (or index) state them: the input of
//! weight inspection, filled by `ingest::evidence::safetensors`. Not a profiling table.

/// One tensor as its header states it.
#[derive(Debug, Clone)]
pub struct Tensor {
    pub name: String,
    /// `F32`, `BF16`, `I64`, ... (empty when only an index names it).
    pub dtype: String,
    pub shape: Vec<u64>,
    /// Bytes from the dtype and shape; None when unknown (index only, or an unknown dtype).
    pub bytes: Option<u64>,
    /// The file whose header (or index entry) named it.
    pub file: String,
}

/// What a path holds.
#[derive(Debug, Clone, Default)]
pub struct Checkpoint {
    pub tensors: Vec<Tensor>,
    /// Files read (headers, index).
    pub files: Vec<String>,
    /// `__metadata__` of the first header, as text.
    pub metadata: Option<String>,
    /// `metadata.total_size` of an index (bytes of all tensors, by the exporter).
    pub index_total_size: Option<u64>,
    /// Headers whose tensor data extends past the end of the file (a header-only copy, or a cut
    /// download): the header is still valid.
    pub data_missing: Vec<String>,
    /// Shards an index names that are absent or not tensor files here (e.g. LFS pointers).
    pub shards_not_read: Vec<String>,
}
