//! Rank anomalies of a multi-rank input: which ranks are present, which are missing (against
//! `--expected-ranks`, else the largest world size a file states), which hold no device events
//! at all (a CPU-only rank file), which were kept as the vendor's summaries only, which were cut
//! short (a rank that died mid-dump), which could
//! not be read at all, which are far larger than the others (a profiler that kept capturing),
//! and which ranks' time windows do not overlap the others' (a rank captured at another moment).
//! Per rank: files, bytes, device and host events, time window.
//!
//! Two steps, so a root can be reduced file by file: [`facts`] per set of tables (one row per
//! file), [`combine`] over the facts of every file.

pub use crate::contract::ranks::*;
use crate::model::{ProcessRole, Tables};
use std::collections::BTreeMap;

/// The clock of a file format: torch_npu / CANN exports (db, trace_view.json, msprof json, kernel
/// CSVs) share the host's realtime ns; a Kineto / lmdeploy trace (JSON object) has its own.
fn clock(format: &str) -> &'static str {
    match format {
        "ascend_db" | "chrome_json_array" | "kernel_csv" => "ascend",
        "chrome_json_object" => "kineto",
        _ => "unknown",
    }
}

/// The ranks whose window (on its clock, moved by the rank's corrected clock offset) overlaps
/// no other rank's window on the same clock.
fn disjoint(rows: &[RankRow]) -> Vec<i32> {
    let windows: Vec<(i32, &str, i64, i64)> = rows
        .iter()
        .filter_map(|r| {
            Some((
                r.rank,
                r.window_clock?,
                r.window_start_ns? - r.clock_offset_ns,
                r.window_end_ns? - r.clock_offset_ns,
            ))
        })
        .collect();
    windows
        .iter()
        .filter(|&&(r, fmt, s, e)| {
            let peers = windows.iter().filter(|w| w.0 != r && w.1 == fmt);
            peers.clone().count() > 0 && !peers.clone().any(|w| s < w.3 && w.2 < e)
        })
        .map(|w| w.0)
        .collect()
}

/// Takes the clock offsets cross_rank corrected (per cohort format, rank, ns) into the rows
/// and compares the windows again: a rank whose clock was off is not disjoint once corrected.
pub fn apply_clock_offsets(r: &mut Ranks, offsets: &[(&str, i32, i64)]) {
    if offsets.is_empty() {
        return;
    }
    for row in &mut r.rows {
        let at = offsets
            .iter()
            .find(|o| o.1 == row.rank && Some(clock(o.0)) == row.window_clock);
        if let Some(o) = at {
            row.clock_offset_ns = o.2;
        }
    }
    r.disjoint = disjoint(&r.rows);
}

/// Clocks by preference for a rank's window.
const CLOCK_ORDER: &[&str] = &["ascend", "kineto", "unknown"];

/// What one input file contributes to the rank picture.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FileFacts {
    pub path: String,
    /// -1 when unknown.
    pub rank: i32,
    /// -1 when unknown.
    pub world_size: i32,
    pub size_bytes: u64,
    /// File format (`files.format`): windows are compared on one clock only (see `clock`),
    /// because a Kineto trace and a torch_npu export of one rank can run on different clocks.
    #[serde(deserialize_with = "crate::static_names::name")]
    pub format: crate::static_names::Name,
    pub device_events: u64,
    pub host_events: u64,
    /// The vendor's Overlap Analysis rows (events or summed rows): derived, neither side.
    pub vendor_overlap_rows: u64,
    pub window: Option<(i64, i64)>,
    pub truncated: bool,
    /// Set when the file could not be read at all (then it has no events).
    pub error: Option<String>,
}

/// The file's world size: its header's (Kineto), else its `distributed_args` world_size
/// (profiler_metadata.json, the db's META_DATA); -1 unknown.
fn world_size(t: &Tables, f: usize) -> i32 {
    let w = t.files.world_size[f];
    if w > 0 {
        return w;
    }
    let stated = t
        .strings
        .lookup("distributed_args")
        .and_then(|k| t.meta.get(crate::model::FileId(f as u32), k))
        .and_then(|v| serde_json::from_str::<serde_json::Value>(t.str(v)).ok())
        .and_then(|v| v.get("world_size")?.as_i64());
    stated
        .filter(|&w| (1..=1 << 24).contains(&w))
        .map_or(-1, |w| w as i32)
}

pub fn compute(t: &Tables, expected: Option<u32>) -> Ranks {
    combine(&facts(t), expected)
}

/// One row per file of `t`.
pub fn facts(t: &Tables) -> Vec<FileFacts> {
    let mut out: Vec<FileFacts> = (0..t.files.len())
        .map(|f| FileFacts {
            path: t.files.path[f].clone(),
            rank: t.files.rank[f],
            world_size: world_size(t, f),
            size_bytes: t.files.size_bytes[f],
            format: t.files.format[f].map_or("unknown", |x| x.as_str()),
            device_events: 0,
            host_events: 0,
            vendor_overlap_rows: 0,
            window: None,
            truncated: t.files.truncated[f],
            error: None,
        })
        .collect();
    // File and side per thread, so the event loop does no joins.
    let file_of: Vec<usize> = (0..t.threads.len())
        .map(|th| t.process_file(t.threads.process[th]).idx())
        .collect();
    let role: Vec<ProcessRole> = (0..t.threads.len())
        .map(|th| t.processes.role[t.threads.process[th].idx()])
        .collect();
    let v = &t.vendor_overlap;
    for r in 0..v.len() {
        out[v.file[r].idx()].vendor_overlap_rows += v.rows[r];
    }
    for i in 0..t.events.len() {
        let th = t.events.thread[i].idx();
        let row = &mut out[file_of[th]];
        match role[th] {
            ProcessRole::OverlapAnalysis => {
                row.vendor_overlap_rows += 1;
                continue;
            }
            r if r.is_device() => row.device_events += 1,
            _ => row.host_events += 1,
        }
        let (s, e) = (t.events.ts_ns[i], t.events.end_ns(i));
        row.window = Some(row.window.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
    }
    out
}

/// The rank picture of a run from the facts of all its files.
pub fn combine(files: &[FileFacts], expected: Option<u32>) -> Ranks {
    let mut rows: BTreeMap<i32, RankRow> = BTreeMap::new();
    let mut unknown = Vec::new();
    let mut failed = Vec::new();
    let mut truncated = Vec::new();
    for f in files {
        if let Some(e) = &f.error {
            failed.push(FailedInput {
                file: f.path.clone(),
                rank: f.rank,
                error: e.clone(),
            });
            continue;
        }
        if f.rank < 0 {
            unknown.push(f.path.clone());
            continue;
        }
        if f.truncated {
            truncated.push(f.rank);
        }
        let row = rows.entry(f.rank).or_insert_with(|| RankRow {
            rank: f.rank,
            files: Vec::new(),
            size_bytes: 0,
            device_events: 0,
            host_events: 0,
            vendor_overlap_rows: 0,
            window_start_ns: None,
            window_end_ns: None,
            window_clock: None,
            clock_offset_ns: 0,
        });
        row.files.push(f.path.clone());
        row.size_bytes += f.size_bytes;
        row.device_events += f.device_events;
        row.host_events += f.host_events;
        row.vendor_overlap_rows += f.vendor_overlap_rows;
        let Some((s, e)) = f.window else {
            continue;
        };
        let order = |c: &str| CLOCK_ORDER.iter().position(|&x| x == c).unwrap_or(99);
        let c = clock(f.format);
        match row.window_clock {
            Some(w) if w == c => {
                row.window_start_ns = row.window_start_ns.map(|x| x.min(s));
                row.window_end_ns = row.window_end_ns.map(|x| x.max(e));
            }
            Some(w) if order(w) <= order(c) => {}
            _ => {
                row.window_clock = Some(c);
                row.window_start_ns = Some(s);
                row.window_end_ns = Some(e);
            }
        }
    }
    truncated.sort_unstable();
    truncated.dedup();
    let rows: Vec<RankRow> = rows.into_values().collect();
    let world = files.iter().map(|f| f.world_size).filter(|&w| w > 0).max();
    let (expected_source, expected) = match (expected, world) {
        (Some(n), _) => (ExpectedSource::Option, Some(n)),
        (None, Some(w)) => (ExpectedSource::WorldSize, Some(w as u32)),
        (None, None) => (ExpectedSource::None, None),
    };
    let present: Vec<i32> = rows.iter().map(|r| r.rank).collect();
    let missing = expected.map_or_else(Vec::new, |n| {
        (0..n as i32)
            .filter(|r| present.binary_search(r).is_err())
            .collect()
    });
    let summary_rank = |r: i32| {
        files
            .iter()
            .filter(|f| f.rank == r && f.error.is_none())
            .all(|f| f.format == "vendor_summary")
    };
    let summary_only: Vec<i32> = rows
        .iter()
        .filter(|r| r.device_events == 0 && summary_rank(r.rank))
        .map(|r| r.rank)
        .collect();
    let cpu_only = rows
        .iter()
        .filter(|r| r.device_events == 0 && !summary_only.contains(&r.rank))
        .map(|r| r.rank)
        .collect();
    let oversized = if rows.len() < 3 {
        Vec::new()
    } else {
        let mut sizes: Vec<u64> = rows.iter().map(|r| r.size_bytes).collect();
        sizes.sort_unstable();
        let median = sizes[sizes.len() / 2];
        rows.iter()
            .filter(|r| median > 0 && r.size_bytes >= OVERSIZED_FACTOR * median)
            .map(|r| r.rank)
            .collect()
    };
    let disjoint = disjoint(&rows);
    Ranks {
        expected_source,
        expected,
        present,
        missing,
        cpu_only,
        summary_only,
        truncated,
        oversized,
        disjoint,
        failed,
        unknown_rank_files: unknown,
        rows,
        companions: Vec::new(),
    }
}
