//! safetensors checkpoints without reading tensor data: a file's header is an 8-byte little-endian
//! length followed by that many bytes of JSON (`name -> {dtype, shape, data_offsets}`, optional
//! `__metadata__`), so only the header is read, which is cheap on shared storage. Also read: the
//! header JSON alone, and a sharded checkpoint's `model.safetensors.index.json` (names → shard
//! file, `metadata.total_size`), whose local shards' headers are read when they are real files.
//! A Git LFS pointer (what a clone without LFS holds) is named as such, never parsed as a tensor
//! file.

use serde_json::Value;
use std::io::Read;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum SafetensorsError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: a Git LFS pointer (the tensor data was never fetched: `git lfs pull`)")]
    LfsPointer { path: String },
    #[error("{path}: {what}")]
    Bad { path: String, what: String },
}

pub use crate::model::checkpoint::{Checkpoint, Tensor};

/// Bytes per element of a safetensors dtype.
pub fn dtype_bytes(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "F64" | "I64" | "U64" => 8,
        "F32" | "I32" | "U32" => 4,
        "F16" | "BF16" | "I16" | "U16" => 2,
        "F8_E4M3" | "F8_E5M2" | "I8" | "U8" | "BOOL" => 1,
        _ => return None,
    })
}

fn bad(path: &Path, what: impl Into<String>) -> SafetensorsError {
    SafetensorsError::Bad {
        path: path.display().to_string(),
        what: what.into(),
    }
}

const LFS: &[u8] = b"version https://git-lfs.github.com/spec/v1";

/// Reads a `.safetensors` file's header, a header `.json`, or an `*.index.json` (with its shards).
pub fn read(path: &Path) -> Result<Checkpoint, SafetensorsError> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let mut c = Checkpoint::default();
    if name.ends_with(".index.json") {
        read_index(path, &mut c)?;
    } else {
        read_file(path, &mut c)?;
    }
    Ok(c)
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> SafetensorsError + '_ {
    move |source| SafetensorsError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn read_file(path: &Path, c: &mut Checkpoint) -> Result<(), SafetensorsError> {
    let mut f = crate::ingest::source::open_regular(path, u64::MAX).map_err(io(path))?;
    let size = f.metadata().map_err(io(path))?.len();
    let mut head = [0u8; 8];
    let n = f.read(&mut head).map_err(io(path))?;
    let mut probe = head[..n].to_vec();
    if probe.first() == Some(&b'{') {
        // The header JSON alone.
        f.read_to_end(&mut probe).map_err(io(path))?;
        return header(path, &probe, None, c);
    }
    if n < 8 {
        return Err(bad(
            path,
            format!("{size} bytes: too short for a header length"),
        ));
    }
    if LFS.starts_with(&head) {
        return Err(SafetensorsError::LfsPointer {
            path: path.display().to_string(),
        });
    }
    let len = u64::from_le_bytes(head);
    if len > 100 << 20 || len + 8 > size {
        return Err(bad(
            path,
            format!(
                "header length {len} does not fit the file ({size} bytes): not a safetensors file, or cut inside its header"
            ),
        ));
    }
    let mut json = vec![0u8; len as usize];
    f.read_exact(&mut json).map_err(io(path))?;
    header(path, &json, Some(size - 8 - len), c)
}

/// The tensors of a safetensors header JSON alone (fuzzing and tests), named `path`.
pub fn parse_header(path: &Path, json: &[u8]) -> Result<Checkpoint, SafetensorsError> {
    let mut c = Checkpoint::default();
    header(path, json, None, &mut c)?;
    Ok(c)
}

/// Parses header JSON; `data_len` is the bytes after the header when the file holds them.
fn header(
    path: &Path,
    json: &[u8],
    data_len: Option<u64>,
    c: &mut Checkpoint,
) -> Result<(), SafetensorsError> {
    let v: serde_json::Map<String, Value> = serde_json::from_slice(json)
        .map_err(|e| bad(path, format!("header is not a JSON object: {e}")))?;
    let file = path.display().to_string();
    let mut end = 0u64;
    for (name, t) in &v {
        if name == "__metadata__" {
            c.metadata.get_or_insert_with(|| t.to_string());
            continue;
        }
        let dtype = t["dtype"].as_str().unwrap_or("").to_string();
        let shape: Vec<u64> = t["shape"]
            .as_array()
            .ok_or_else(|| bad(path, format!("tensor `{name}` has no shape")))?
            .iter()
            .map(|d| {
                d.as_u64()
                    .ok_or_else(|| bad(path, format!("tensor `{name}`: bad shape")))
            })
            .collect::<Result<_, _>>()?;
        if let Some(e) = t["data_offsets"].get(1).and_then(Value::as_u64) {
            end = end.max(e);
        }
        let bytes = match dtype_bytes(&dtype) {
            Some(b) => Some(
                shape
                    .iter()
                    .try_fold(b, |acc, &d| acc.checked_mul(d))
                    .ok_or_else(|| {
                        bad(
                            path,
                            format!("tensor `{name}`: shape {shape:?} of {dtype} overflows a 64-bit byte count"),
                        )
                    })?,
            ),
            None => None,
        };
        c.tensors.push(Tensor {
            name: name.clone(),
            dtype,
            shape,
            bytes,
            file: file.clone(),
        });
    }
    if data_len.is_none_or(|d| d < end) {
        c.data_missing.push(file.clone());
    }
    c.files.push(file);
    Ok(())
}

fn read_index(path: &Path, c: &mut Checkpoint) -> Result<(), SafetensorsError> {
    let bytes =
        crate::ingest::source::read_regular(path, crate::ingest::source::MAX_COMPANION_BYTES)
            .map_err(io(path))?;
    let text = String::from_utf8_lossy(&bytes);
    let v: Value = serde_json::from_str(&text).map_err(|e| bad(path, format!("not JSON: {e}")))?;
    let map = v["weight_map"]
        .as_object()
        .ok_or_else(|| bad(path, "no `weight_map` object"))?;
    c.index_total_size = v["metadata"]["total_size"].as_u64();
    c.files.push(path.display().to_string());
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut shards: Vec<&str> = map.values().filter_map(Value::as_str).collect();
    shards.sort_unstable();
    shards.dedup();
    let mut read_ok = std::collections::BTreeSet::new();
    for s in shards {
        let mut one = Checkpoint::default();
        match read_file(&dir.join(s), &mut one) {
            Ok(()) => {
                read_ok.insert(s.to_string());
                c.tensors.extend(one.tensors);
                c.files.extend(one.files);
                c.data_missing.extend(one.data_missing);
                c.metadata = c.metadata.take().or(one.metadata);
            }
            Err(e) => c.shards_not_read.push(e.to_string()),
        }
    }
    // Names of shards not read: known by name only.
    for (name, shard) in map {
        let shard = shard.as_str().unwrap_or("");
        if !read_ok.contains(shard) {
            c.tensors.push(Tensor {
                name: name.clone(),
                dtype: String::new(),
                shape: Vec::new(),
                bytes: None,
                file: shard.to_string(),
            });
        }
    }
    Ok(())
}
