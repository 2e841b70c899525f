//! Serving evidence beside the profiles (issue 5): safetensors checkpoints (headers and sharded
//! indexes), `npu-smi info` tables and vLLM / vLLM-Ascend start-up logs.

pub mod gather;
pub mod npu_smi;
pub mod safetensors;
pub mod vllm_log;

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {what}")]
    Bad { path: String, what: String },
}

impl EvidenceError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        EvidenceError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
