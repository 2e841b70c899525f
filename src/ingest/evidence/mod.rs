//! Serving evidence beside the profiles (issue 5): today safetensors checkpoints (headers and
//! sharded indexes); npu-smi text and vLLM start-up logs join here.

pub mod safetensors;
