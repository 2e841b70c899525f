//! `collect verify ROOT --expected-ranks N --export db|text|both`: did every rank's analyse()
//! output land? Per rank folder (`*_ascend_pt`): with `db`, the newest
//! `ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_*.db` exists, is non-empty and opens read-only
//! as SQLite with a TASK table; with `text`, `kernel_details.csv` and `trace_view.json` exist and
//! are non-empty; `both` needs both. The run fails when any rank is not `ok` or when the number
//! of rank folders differs from the expected count.

use super::{CollectError, Outcome};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What torch_npu's analyse() was asked to write (`export_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Export {
    Db,
    Text,
    Both,
}

crate::model::closed_set::closed_set! {
    /// Whether one rank's output landed.
    pub enum RankStatus {
        Ok = "ok",
        /// Some expected output is missing, empty or unreadable (see `problems`).
        Partial = "partial",
        /// Text export: trace_view.json is there but kernel_details.csv is not.
        MissingKernelDetails = "missing_kernel_details",
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RankCheck {
    pub dir: String,
    /// From `profiler_info_<rank>.json`; -1 when absent.
    pub rank: i32,
    pub status: RankStatus,
    /// Outputs found and accepted.
    pub outputs: Vec<String>,
    /// What is wrong, one sentence each.
    pub problems: Vec<String>,
    /// Another folder of the same rank that `analyze` reads instead (a newer capture); absent
    /// when this folder is the one read or no other folder claims its rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Verify {
    pub schema_version: &'static str,
    pub root: String,
    pub export: Export,
    /// `db` for the db export, `csv` for text (kernel_details.csv is the gate's key file).
    pub expected_output_kind: &'static str,
    pub expected_ranks: Option<u32>,
    pub rank_count: u32,
    pub ranks: Vec<RankCheck>,
    /// Failed gates: `rank_count_mismatch`, `rank_not_ok`, `duplicate_rank` (two rank folders
    /// claim one rank).
    pub gates_failed: Vec<&'static str>,
    pub status: Outcome,
}

/// Every `*_ascend_pt` folder under `root` (not looking inside rank folders), sorted: the
/// finder of `analyze` ([`crate::ingest::detect::rank_folders`]).
pub fn rank_dirs(root: &Path) -> Result<Vec<PathBuf>, CollectError> {
    crate::ingest::detect::rank_folders(root).map_err(|source| CollectError::Io {
        path: root.display().to_string(),
        source,
    })
}

/// For each check whose rank another folder also claims: the folder `analyze` reads for that rank
/// instead (the newer capture, by the rule of [`crate::ingest::detect::select`]).
fn mark_superseded(root: &Path, ranks: &mut [RankCheck]) {
    let Ok((inputs, _)) = crate::ingest::detect::find_inputs(root) else {
        return;
    };
    let (kept, _) = crate::ingest::detect::select(inputs, root);
    let read = |dir: &str| {
        kept.iter()
            .any(|i| Path::new(&i.path).starts_with(Path::new(dir)))
    };
    let read_dirs: Vec<(i32, String)> = ranks
        .iter()
        .filter(|r| r.rank >= 0 && read(&r.dir))
        .map(|r| (r.rank, r.dir.clone()))
        .collect();
    for r in ranks.iter_mut().filter(|r| r.rank >= 0) {
        if read_dirs.iter().any(|(_, d)| *d == r.dir) {
            continue;
        }
        r.superseded_by = read_dirs
            .iter()
            .find(|(rank, _)| *rank == r.rank)
            .map(|(_, d)| d.clone());
    }
}

fn non_empty(p: &Path) -> Option<u64> {
    std::fs::metadata(p)
        .ok()
        .filter(|m| m.len() > 0)
        .map(|m| m.len())
}

/// The profiler db of a rank folder that `analyze` reads: the newest by modification time, then
/// by name ([`crate::ingest::detect::newest_of`]).
fn newest_db(out: &Path) -> Option<PathBuf> {
    let dbs: Vec<PathBuf> = std::fs::read_dir(out)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("ascend_pytorch_profiler") && n.ends_with(".db"))
        })
        .collect();
    let refs: Vec<&Path> = dbs.iter().map(PathBuf::as_path).collect();
    crate::ingest::detect::newest_of(&refs).map(|k| dbs[k].clone())
}

/// Reads the output with the reader `analyze` uses (read-only, bounded) and says what would make
/// its analysis wrong: it cannot be read, it holds no event, or rows were lost (a truncated or
/// damaged file). A db must also have a TASK table.
fn readable(p: &Path, format: crate::ingest::detect::InputFormat) -> Result<(), String> {
    use crate::ingest::detect::{Input, InputFormat};
    if format == InputFormat::AscendDb {
        let c = crate::ingest::ascend_db::open(&p.to_string_lossy()).map_err(|e| e.to_string())?;
        let n: i64 = c
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'TASK'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| e.to_string())?;
        if n != 1 {
            return Err("no TASK table".into());
        }
    }
    let input = Input {
        path: p.to_string_lossy().into_owned(),
        format,
        size_bytes: std::fs::metadata(p).map_or(0, |m| m.len()),
        alternates: Vec::new(),
        parts: Vec::new(),
    };
    let t = crate::ingest::ingest_one(&input, &Default::default()).map_err(|e| e.to_string())?;
    if t.events.is_empty() {
        return Err("no events".into());
    }
    for code in ["truncated", "table_unreadable", "changed_while_read"] {
        if let Some(d) = t.diagnostics.get(code) {
            return Err(format!(
                "{code}: {}",
                d.examples.first().map_or("", String::as_str)
            ));
        }
    }
    Ok(())
}

fn check_rank(dir: &Path, export: Export) -> RankCheck {
    let out = dir.join("ASCEND_PROFILER_OUTPUT");
    let mut outputs = Vec::new();
    let mut problems = Vec::new();
    let mut missing_kd = false;
    if export != Export::Text {
        match newest_db(&out) {
            None => problems.push("no ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_*.db".into()),
            Some(db) if non_empty(&db).is_none() => {
                problems.push(format!("{} is empty", db.display()))
            }
            Some(db) => match readable(&db, crate::ingest::detect::InputFormat::AscendDb) {
                Ok(()) => outputs.push(db.display().to_string()),
                Err(e) => problems.push(format!("{}: {e}", db.display())),
            },
        }
    }
    if export != Export::Db {
        for f in ["trace_view.json", "kernel_details.csv"] {
            let p = out.join(f);
            if non_empty(&p).is_some() {
                let read = match f {
                    "trace_view.json" => {
                        readable(&p, crate::ingest::detect::InputFormat::ChromeJson)
                    }
                    _ => Ok(()),
                };
                match read {
                    Ok(()) => outputs.push(p.display().to_string()),
                    Err(e) => problems.push(format!("{}: {e}", p.display())),
                }
            } else {
                missing_kd |= f == "kernel_details.csv";
                problems.push(format!("no non-empty ASCEND_PROFILER_OUTPUT/{f}"));
            }
        }
    }
    let status = if problems.is_empty() {
        RankStatus::Ok
    } else if missing_kd && problems.len() == 1 {
        RankStatus::MissingKernelDetails
    } else {
        RankStatus::Partial
    };
    RankCheck {
        dir: dir.display().to_string(),
        rank: crate::ingest::rank::profiler_info_rank(dir).unwrap_or(-1),
        status,
        outputs,
        problems,
        superseded_by: None,
    }
}

pub fn verify(root: &Path, expected: Option<u32>, export: Export) -> Result<Verify, CollectError> {
    let dirs = rank_dirs(root)?;
    if dirs.is_empty() {
        return Err(CollectError::NoRanks(root.display().to_string()));
    }
    let mut ranks: Vec<RankCheck> = dirs.iter().map(|d| check_rank(d, export)).collect();
    let mut gates_failed = Vec::new();
    if expected.is_some_and(|n| n as usize != ranks.len()) {
        gates_failed.push("rank_count_mismatch");
    }
    if ranks.iter().any(|r| r.status != RankStatus::Ok) {
        gates_failed.push("rank_not_ok");
    }
    let mut claimed: Vec<i32> = ranks.iter().map(|r| r.rank).filter(|&r| r >= 0).collect();
    claimed.sort_unstable();
    if claimed.windows(2).any(|w| w[0] == w[1]) {
        gates_failed.push("duplicate_rank");
        mark_superseded(root, &mut ranks);
    }
    Ok(Verify {
        schema_version: super::SCHEMA_VERSION,
        root: root.display().to_string(),
        export,
        expected_output_kind: if export == Export::Db { "db" } else { "csv" },
        expected_ranks: expected,
        rank_count: ranks.len() as u32,
        ranks,
        status: if gates_failed.is_empty() {
            Outcome::Ok
        } else {
            Outcome::Failed
        },
        gates_failed,
    })
}
