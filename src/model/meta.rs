//! Run metadata as key/value rows per file: db META_DATA (SCHEMA_VERSION, ENV_VARIABLES,
//! profiler_metadata keys), NPU_INFO (`npu_info.<device>` = chip), SESSION_TIME_INFO,
//! HOST_INFO.

use super::ids::FileId;
use super::strings::StrId;

/// The key of the row a reader writes, with the reason as its value, when a text export's
/// profiler_metadata.json is there but cannot be read (ingest's `metadata_unreadable`
/// diagnostic): the advisor's environment rule then says it could not check the file.
pub const METADATA_UNREADABLE: &str = "profiler_metadata.unreadable";

#[derive(Debug, Clone, Default)]
pub struct MetaTable {
    pub file: Vec<FileId>,
    pub key: Vec<StrId>,
    pub value: Vec<StrId>,
}

impl MetaTable {
    pub fn len(&self) -> usize {
        self.key.len()
    }
    pub fn is_empty(&self) -> bool {
        self.key.is_empty()
    }
    /// The first value of `key` in `file`.
    pub fn get(&self, file: FileId, key: StrId) -> Option<StrId> {
        (0..self.len())
            .find(|&i| self.file[i] == file && self.key[i] == key)
            .map(|i| self.value[i])
    }
}
