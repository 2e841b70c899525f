//! Shared helpers of the integration tests: where the real samples are, and per-table tallies
//! computed from the model in the same shape as the oracles' outputs.
#![allow(dead_code)]

use profscope::model::{EventKind, Tables};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `../shared/samples` beside the repository (CI lays a copy there). Panics with a clear message
/// when absent: these tests must not pass by skipping.
pub fn samples_dir() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/samples");
    assert!(
        p.is_dir(),
        "real samples not found at {} (expected shared/ beside the repo)",
        p.display()
    );
    p
}

pub fn ingest(path: &std::path::Path) -> Tables {
    profscope::ingest::ingest_paths(&[path.to_path_buf()], &Default::default())
        .unwrap_or_else(|e| panic!("ingest {}: {e}", path.display()))
}

/// X events per process name (`pid <pid>` when the process has no name), as the oracle counts.
pub fn x_by_process(t: &Tables) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for i in 0..t.events.len() {
        if t.events.kind[i] != EventKind::Complete {
            continue;
        }
        let p = t.event_process(i).idx();
        let name = t.str(t.processes.name[p]);
        let key = if !name.is_empty() {
            name.to_string()
        } else if !t.processes.pid_text[p].is_empty() {
            format!("pid {}", t.str(t.processes.pid_text[p]))
        } else {
            format!("pid {}", t.processes.pid[p])
        };
        *m.entry(key).or_insert(0) += 1;
    }
    m
}

pub fn events_by_category(t: &Tables) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for c in &t.events.category {
        *m.entry(c.as_str().to_string()).or_insert(0) += 1;
    }
    m
}

/// Per category: (events, sum of dur_ns).
pub fn category_sums(t: &Tables) -> BTreeMap<String, (u64, i64)> {
    let mut m: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for i in 0..t.events.len() {
        let e = m
            .entry(t.events.category[i].as_str().to_string())
            .or_default();
        e.0 += 1;
        e.1 += t.events.dur_ns.at(i);
    }
    m
}

/// A tiny deterministic generator for test inputs (same seed, same sequence everywhere).
pub struct Lcg(pub u64);

impl Lcg {
    /// Uniform-ish in `0..n` (`n` 0 is taken as 1).
    pub fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// A generated run (profscope synth) in its own temp folder, removed when dropped.
pub struct Generated {
    pub dir: PathBuf,
    pub truth: profscope::synth::Truth,
}

impl Drop for Generated {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn generated(tag: &str, ranks: u32, target_bytes: u64, seed: u64, kineto: bool) -> Generated {
    generated_with(
        tag,
        profscope::synth::SynthOpts {
            ranks,
            target_bytes,
            seed,
            kineto,
            export: Default::default(),
            slow: None,
            graph_mode: false,
            capture_apart: false,
        },
    )
}

/// A copy of the folder `from` at `to`, written afresh (the samples are read-only: a copy made
/// with their permissions could not be edited by a test running as a normal user).
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::write(&dst, std::fs::read(&src).unwrap()).unwrap();
        }
    }
}

/// A generated root with any options (e.g. `export: Export::Db`).
pub fn generated_with(tag: &str, opts: profscope::synth::SynthOpts) -> Generated {
    let dir = std::env::temp_dir().join(format!("profscope-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let truth = profscope::synth::generate(&dir, &opts).unwrap();
    Generated { dir, truth }
}

/// Command lines of running processes that mention `s` (from /proc, no external tool).
pub fn procs_mentioning(s: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
                && e.file_name().to_string_lossy() != me.as_str()
        })
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(s))
        .collect()
}

/// A small JSON Schema checker for what docs/collect-manifest.schema.json and
/// docs/collect-memory-manifest.schema.json use: type (one or a
/// list), const, enum, properties, required, additionalProperties: false, items, oneOf, minimum.
pub fn validate_schema(
    v: &serde_json::Value,
    s: &serde_json::Value,
    at: &str,
) -> Result<(), String> {
    use serde_json::Value;
    let type_ok = |t: &str| match t {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => false,
    };
    match &s["type"] {
        Value::String(t) if !type_ok(t) => return Err(format!("{at}: not {t}: {v}")),
        Value::Array(ts) if !ts.iter().any(|t| type_ok(t.as_str().unwrap())) => {
            return Err(format!("{at}: not any of {ts:?}: {v}"));
        }
        _ => {}
    }
    if let Some(c) = s.get("const")
        && c != v
    {
        return Err(format!("{at}: {v} != {c}"));
    }
    if let Some(e) = s["enum"].as_array()
        && !e.contains(v)
    {
        return Err(format!("{at}: {v} not in {e:?}"));
    }
    if let (Some(m), Some(x)) = (s["minimum"].as_f64(), v.as_f64())
        && x < m
    {
        return Err(format!("{at}: {x} < {m}"));
    }
    if let Some(one) = s["oneOf"].as_array() {
        let n = one
            .iter()
            .filter(|o| validate_schema(v, o, at).is_ok())
            .count();
        if n != 1 {
            return Err(format!("{at}: matches {n} of oneOf"));
        }
    }
    if let (Some(props), Some(obj)) = (s["properties"].as_object(), v.as_object()) {
        for r in s["required"].as_array().into_iter().flatten() {
            if !obj.contains_key(r.as_str().unwrap()) {
                return Err(format!("{at}: missing {r}"));
            }
        }
        for (k, x) in obj {
            match props.get(k) {
                Some(ps) => validate_schema(x, ps, &format!("{at}.{k}"))?,
                None if s["additionalProperties"] == Value::Bool(false) => {
                    return Err(format!("{at}: unexpected {k}"));
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (s.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            validate_schema(x, items, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}

/// The profscope binary as a command, with the result cache off (`PROFSCOPE_NO_CACHE`): tests
/// never write to the user's cache, and every run reads its inputs. tests/it/cache.rs builds its
/// own commands to test the cache itself.
pub fn profscope_command() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_profscope"));
    c.env("PROFSCOPE_NO_CACHE", "1");
    c
}

/// The JSON that `profscope ARGS` prints; fails the test with its stderr when it exits non-zero.
pub fn profscope_json(args: &[&str]) -> serde_json::Value {
    let out = crate::common::profscope_command()
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "profscope {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A real sample db opened the way profscope opens inputs: read-only and immutable, so SQLite
/// creates no `-wal` / `-shm` beside it (a plain read-only open of a WAL-mode db does, and the
/// cache then sees the db as modified).
pub fn open_sample_db(path: &Path) -> rusqlite::Connection {
    let uri = format!("file:{}?immutable=1", path.display());
    rusqlite::Connection::open_with_flags(
        uri,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )
    .unwrap()
}

/// The examples of diagnostic `code` (empty when absent).
pub fn diag_examples(r: &serde_json::Value, code: &str) -> Vec<String> {
    r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == code)
        .flat_map(|d| d["examples"].as_array().unwrap().clone())
        .map(|e| e.as_str().unwrap().to_string())
        .collect()
}

pub fn diag_count(r: &serde_json::Value, code: &str) -> u64 {
    r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == code)
        .map_or(0, |d| d["count"].as_u64().unwrap())
}
