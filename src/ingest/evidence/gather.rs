//! Collects one run's memory evidence from files and folders: npu-smi tables and vLLM logs (by
//! content), a safetensors checkpoint (index, file or header JSON), and msprof module memory
//! (`npu_module_mem.csv`, or the NPU_MODULE_MEM table of a profiler / msprof db, read alone).
//! Each npu-smi snapshot gets a role: explicit, else `idle` when no process holds a device,
//! else from its file name (idle/baseline, ready, post/after, peak), else `loaded`.

use super::{npu_smi, safetensors, vllm_log};
use crate::ingest::builder::{FileMeta, TablesBuilder};
use crate::model::Tables;
use crate::model::checkpoint::Checkpoint;
use crate::model::serving::{NpuSmiSnapshot, SnapshotRole, VllmLog};
use std::path::{Path, PathBuf};

#[derive(Default)]
pub struct Gathered {
    pub snapshots: Vec<(NpuSmiSnapshot, SnapshotRole)>,
    pub logs: Vec<VllmLog>,
    pub checkpoint: Option<(String, Checkpoint)>,
    /// Memory tables of the msprof files read (module rows only matter).
    pub module_tables: Tables,
    /// Files looked at and not used, with why.
    pub skipped: Vec<(String, String)>,
    /// Files that looked like evidence and could not be read.
    pub errors: Vec<String>,
}

/// Text files larger than this are not sniffed as npu-smi tables or logs.
const MAX_TEXT: u64 = 512 << 20;

/// Files under `p` (depth ≤ 8), following links; a folder reached twice (a link loop, or two
/// links to one folder) is walked once.
fn walk(p: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    walk_seen(p, out, depth, &mut std::collections::HashSet::new());
}

fn walk_seen(
    p: &Path,
    out: &mut Vec<PathBuf>,
    depth: usize,
    seen: &mut std::collections::HashSet<PathBuf>,
) {
    if p.is_dir() {
        if depth > 8 || !std::fs::canonicalize(p).is_ok_and(|c| seen.insert(c)) {
            return;
        }
        let Ok(rd) = std::fs::read_dir(p) else { return };
        let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        v.sort();
        for c in v {
            walk_seen(&c, out, depth + 1, seen);
        }
    } else {
        out.push(p.to_path_buf());
    }
}

fn role_from_name(name: &str) -> Option<SnapshotRole> {
    let n = name.to_ascii_lowercase();
    [
        ("idle", SnapshotRole::Idle),
        ("baseline", SnapshotRole::Idle),
        ("peak", SnapshotRole::Peak),
        ("post", SnapshotRole::PostInference),
        ("after", SnapshotRole::PostInference),
        ("ready", SnapshotRole::Ready),
    ]
    .into_iter()
    .find(|(k, _)| n.contains(k))
    .map(|(_, r)| r)
}

/// `explicit` maps files to roles (`--npu-smi ROLE=FILE`); those files need not be in `paths`.
pub fn gather(paths: &[PathBuf], explicit: &[(SnapshotRole, PathBuf)]) -> Gathered {
    let mut g = Gathered::default();
    let mut files = Vec::new();
    for p in paths {
        if !p.exists() {
            g.errors
                .push(format!("{}: no such file or folder", p.display()));
        }
        walk(p, &mut files, 0);
    }
    for (_, p) in explicit {
        if !files.contains(p) {
            files.push(p.clone());
        }
    }
    let mut b = TablesBuilder::new();
    let index = files
        .iter()
        .find(|f| f.to_string_lossy().ends_with(".safetensors.index.json"))
        .cloned();
    for f in &files {
        let s = f.display().to_string();
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let is_tensor_file = name.ends_with(".safetensors")
            || name.ends_with(".safetensors.index.json")
            || name.ends_with(".safetensors.header.json");
        if is_tensor_file {
            let chosen = match &index {
                Some(i) => i == f,
                None => g.checkpoint.is_none(),
            };
            if !chosen {
                g.skipped
                    .push((s, "another checkpoint file of the run was used".into()));
                continue;
            }
            match safetensors::read(f) {
                Ok(c) => g.checkpoint = Some((s, c)),
                Err(e) => g.errors.push(e.to_string()),
            }
            continue;
        }
        if name.starts_with("npu_module_mem") && name.ends_with(".csv") {
            let file = b.add_file(&s, FileMeta::default());
            if let Err(e) = crate::ingest::msprof_csv::module_mem::ingest(&s, file, &mut b) {
                g.errors.push(e.to_string());
            }
            continue;
        }
        if name.ends_with(".db")
            && (name.starts_with("ascend_pytorch_profiler") || name.starts_with("msprof_"))
        {
            if let Err(e) = crate::ingest::ascend_db::ingest_memory_only(&s, &mut b) {
                g.errors.push(e.to_string());
            }
            continue;
        }
        let ext = f
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        if !matches!(ext.as_deref(), None | Some("txt" | "log" | "out")) {
            g.skipped.push((s, "not an evidence file type".into()));
            continue;
        }
        let Ok(meta) = std::fs::metadata(f) else {
            continue;
        };
        if meta.len() > MAX_TEXT {
            g.skipped
                .push((s, format!("text over {} MB not sniffed", MAX_TEXT >> 20)));
            continue;
        }
        let text = match crate::ingest::source::read_regular(f, MAX_TEXT) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                g.errors.push(format!("{s}: {e}"));
                continue;
            }
        };
        let role = explicit.iter().find(|(_, p)| p == f).map(|(r, _)| *r);
        if role.is_some() || npu_smi::looks_like(&text) {
            match npu_smi::parse(&text, &s) {
                Ok(snap) => {
                    let role = role.unwrap_or_else(|| {
                        if !snap.has_processes() {
                            SnapshotRole::Idle
                        } else {
                            role_from_name(&name)
                                .filter(|r| *r != SnapshotRole::Idle)
                                .unwrap_or(SnapshotRole::Loaded)
                        }
                    });
                    g.snapshots.push((snap, role));
                }
                Err(e) => g.errors.push(e.to_string()),
            }
        } else if vllm_log::looks_like(&text) {
            match vllm_log::parse_checked(&text, &s) {
                Ok(l) => g.logs.push(l),
                Err(e) => g.errors.push(e.to_string()),
            }
        } else {
            g.skipped
                .push((s, "neither an npu-smi table nor a vLLM log".into()));
        }
    }
    g.module_tables = b.finish();
    g
}

/// The npu-smi snapshots grouped by the machine they describe: the device set with each chip's
/// name, HBM size and bus id. Snapshots of one run share it; two groups mean tables of different
/// hosts or device sets, which must not be merged into one device list. Each group: a short
/// description (`devices 0-3, Ascend910B4, 32768 MB HBM each`) and its files.
pub fn machine_groups(g: &Gathered) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(Shape, String, Vec<String>)> = Vec::new();
    for (snap, _) in &g.snapshots {
        let mut shape: Shape = snap
            .chips
            .iter()
            .map(|c| (c.device(), c.name.clone(), c.hbm_total_mb, c.bus_id.clone()))
            .collect();
        shape.sort();
        match groups.iter_mut().find(|x| x.0 == shape) {
            Some(x) => x.2.push(snap.path.clone()),
            None => {
                let desc = describe(&shape);
                groups.push((shape, desc, vec![snap.path.clone()]));
            }
        }
    }
    groups.into_iter().map(|(_, d, f)| (d, f)).collect()
}

/// Per chip, sorted: device id, name, HBM total (MB), bus id.
type Shape = Vec<(u32, String, u64, String)>;

fn describe(shape: &[(u32, String, u64, String)]) -> String {
    let (Some(first), Some(last)) = (shape.first(), shape.last()) else {
        return "no devices".into();
    };
    let mut names: Vec<&str> = shape.iter().map(|c| c.1.as_str()).collect();
    names.dedup();
    let mut hbm: Vec<u64> = shape.iter().map(|c| c.2).collect();
    hbm.dedup();
    format!(
        "{} device{} {}-{}, {}, {} MB HBM{}",
        shape.len(),
        if shape.len() == 1 { "" } else { "s" },
        first.0,
        last.0,
        names.join("/"),
        hbm.iter().map(u64::to_string).collect::<Vec<_>>().join("/"),
        if hbm.len() == 1 { " each" } else { "" }
    )
}
