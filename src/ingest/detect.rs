//! Which files under a path are inputs, and in which format: Chrome-trace JSON (`*.json`,
//! `*.json.gz`) recognised by content (the first non-blank byte is `[`, or `{` with a `traceEvents`
//! member) so that `profiler_info.json` and friends are skipped, not failed; and profiler dbs by
//! name (`ascend_pytorch_profiler[_<rank>].db`, `msprof_<digits>.db`).

use super::error::IngestError;
use std::io::Read;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    ChromeJson,
    /// `ascend_pytorch_profiler[_<rank>].db` or `msprof_<digits>.db`.
    AscendDb,
}

/// A torch_npu or msprof profiler db by its file name (`analysis.db` is vendor-derived, not read yet).
fn is_profiler_db(name: &str) -> bool {
    let Some(file) = std::path::Path::new(name)
        .file_name()
        .and_then(|f| f.to_str())
    else {
        return false;
    };
    let Some(stem) = file.strip_suffix(".db") else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    stem == "ascend_pytorch_profiler"
        || stem
            .strip_prefix("ascend_pytorch_profiler_")
            .is_some_and(digits)
        || stem.strip_prefix("msprof_").is_some_and(digits)
}

#[derive(Debug, Clone)]
pub struct Input {
    pub path: String,
    pub format: InputFormat,
    pub size_bytes: u64,
}

fn is_json_name(name: &str) -> bool {
    name.ends_with(".json") || name.ends_with(".json.gz")
}

/// True if the start of the file looks like a Chrome trace (array, or object naming traceEvents
/// in its first 64 KiB, which is where every writer puts it or the small header before it).
pub fn looks_like_chrome_trace(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(65536);
    let name = path.to_string_lossy();
    let read = if name.ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(file)
            .take(65536)
            .read_to_end(&mut head)
    } else {
        file.take(65536).read_to_end(&mut head)
    };
    if read.is_err() && head.is_empty() {
        return false;
    }
    let first = head
        .iter()
        .copied()
        .find(|c| !c.is_ascii_whitespace() && *c != 0xEF && *c != 0xBB && *c != 0xBF);
    match first {
        Some(b'[') => true,
        Some(b'{') => memchr::memmem::find(&head, b"\"traceEvents\"").is_some(),
        _ => false,
    }
}

/// Every input under `path` (a file is taken as given; a folder is walked, sorted by path).
pub fn find_inputs(path: &Path) -> Result<Vec<Input>, IngestError> {
    let io = |e: std::io::Error| IngestError::Io {
        path: path.display().to_string(),
        source: e,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_file() {
        let name = path.to_string_lossy().to_string();
        let format = if is_profiler_db(&name) {
            InputFormat::AscendDb
        } else if is_json_name(&name) {
            InputFormat::ChromeJson
        } else {
            return Err(IngestError::Unsupported { path: name });
        };
        return Ok(vec![Input {
            path: name,
            format,
            size_bytes: meta.len(),
        }]);
    }
    let mut out = Vec::new();
    walk(path, &mut out).map_err(io)?;
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<Input>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let p = entry.path();
        let ft = entry.file_type()?;
        if ft.is_dir() {
            walk(&p, out)?;
        } else if ft.is_file() {
            let name = p.to_string_lossy().to_string();
            if is_profiler_db(&name) {
                out.push(Input {
                    path: name,
                    format: InputFormat::AscendDb,
                    size_bytes: entry.metadata()?.len(),
                });
            } else if is_json_name(&name) && looks_like_chrome_trace(&p) {
                out.push(Input {
                    path: name,
                    format: InputFormat::ChromeJson,
                    size_bytes: entry.metadata()?.len(),
                });
            }
        }
    }
    Ok(())
}
