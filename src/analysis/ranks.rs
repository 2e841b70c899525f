//! Rank anomalies of a multi-rank input (issue 6, first part): which ranks are present, which
//! are missing (against `--expected-ranks`, else the largest world size a file states), which
//! hold no device events at all (a CPU-only rank file), and which ranks' time windows do not
//! overlap the others' (a rank captured at another moment). Per rank: files, device and host
//! events, time window.

use crate::model::Tables;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize)]
pub struct RankRow {
    pub rank: i32,
    pub files: Vec<String>,
    pub device_events: u64,
    pub host_events: u64,
    /// First start and last end over all of the rank's events, ns; None without events.
    pub window_start_ns: Option<i64>,
    pub window_end_ns: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Ranks {
    /// Where the expected count came from: `--expected-ranks`, `world_size` or `none`.
    pub expected_source: &'static str,
    pub expected: Option<u32>,
    pub present: Vec<i32>,
    /// Ranks 0..expected that have no file.
    pub missing: Vec<i32>,
    /// Ranks with files but no device events.
    pub cpu_only: Vec<i32>,
    /// Ranks whose window overlaps no other rank's window (only with two or more ranks).
    pub disjoint: Vec<i32>,
    /// Files whose rank is unknown (-1).
    pub unknown_rank_files: Vec<String>,
    pub rows: Vec<RankRow>,
}

pub fn compute(t: &Tables, expected: Option<u32>) -> Ranks {
    let mut rows: BTreeMap<i32, RankRow> = BTreeMap::new();
    let mut unknown = Vec::new();
    for f in 0..t.files.len() {
        let r = t.files.rank[f];
        if r < 0 {
            unknown.push(t.files.path[f].clone());
            continue;
        }
        rows.entry(r)
            .or_insert_with(|| RankRow {
                rank: r,
                files: Vec::new(),
                device_events: 0,
                host_events: 0,
                window_start_ns: None,
                window_end_ns: None,
            })
            .files
            .push(t.files.path[f].clone());
    }
    // Row and side per thread, so the event loop does no joins or map lookups.
    let mut rows: Vec<RankRow> = rows.into_values().collect();
    let row_of: Vec<Option<usize>> = (0..t.threads.len())
        .map(|th| {
            let r = t.files.rank[t.process_file(t.threads.process[th]).idx()];
            rows.binary_search_by_key(&r, |x| x.rank).ok()
        })
        .collect();
    let device_side: Vec<bool> = (0..t.threads.len())
        .map(|th| t.processes.role[t.threads.process[th].idx()].is_device())
        .collect();
    for i in 0..t.events.len() {
        let th = t.events.thread[i].idx();
        let Some(row) = row_of[th].map(|k| &mut rows[k]) else {
            continue;
        };
        if device_side[th] {
            row.device_events += 1;
        } else {
            row.host_events += 1;
        }
        let (s, e) = (t.events.ts_ns[i], t.events.end_ns(i));
        row.window_start_ns = Some(row.window_start_ns.map_or(s, |w| w.min(s)));
        row.window_end_ns = Some(row.window_end_ns.map_or(e, |w| w.max(e)));
    }
    let world = t.files.world_size.iter().copied().filter(|&w| w > 0).max();
    let (expected_source, expected) = match (expected, world) {
        (Some(n), _) => ("--expected-ranks", Some(n)),
        (None, Some(w)) => ("world_size", Some(w as u32)),
        (None, None) => ("none", None),
    };
    let present: Vec<i32> = rows.iter().map(|r| r.rank).collect();
    let missing = expected.map_or_else(Vec::new, |n| {
        (0..n as i32)
            .filter(|r| present.binary_search(r).is_err())
            .collect()
    });
    let cpu_only = rows
        .iter()
        .filter(|r| r.device_events == 0)
        .map(|r| r.rank)
        .collect();
    let windows: Vec<(i32, i64, i64)> = rows
        .iter()
        .filter_map(|r| Some((r.rank, r.window_start_ns?, r.window_end_ns?)))
        .collect();
    let disjoint = if windows.len() < 2 {
        Vec::new()
    } else {
        windows
            .iter()
            .filter(|&&(r, s, e)| {
                !windows
                    .iter()
                    .any(|&(q, s2, e2)| q != r && s < e2 && s2 < e)
            })
            .map(|w| w.0)
            .collect()
    };
    Ranks {
        expected_source,
        expected,
        present,
        missing,
        cpu_only,
        disjoint,
        unknown_rank_files: unknown,
        rows,
    }
}
