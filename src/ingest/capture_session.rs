//! Graph capture sessions read beside their replay sessions. The one-capture-per-rank rule
//! (`detect::select`) reads one torch_npu session per rank; an ACLGraph capture profiled apart
//! from its replays (SGLang `capture_traces/`, a capture session before the serving session) is
//! a second session of the same rank that holds what the replays lack: the ops that recorded
//! each graph. When a rank folder left out for another session of its rank recorded graph
//! captures and no replays while the session read instead replayed graphs (or the reverse), both
//! are read; graph mode then takes the capture as a companion of the replays, never summed with
//! them (docs/analyses/graph_mode.md). Every other case keeps the rule as it is.

use super::detect::{self, Input, InputFormat, Skipped};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Bytes of a JSON export scanned at most for graph calls (a capture session is small; a
/// replay session names its replay call early).
const MAX_SCAN: u64 = 4 << 30;

/// The torch_npu rank folder of `path`: the outermost ancestor up to `root` that holds a single
/// `profiler_info_<rank>.json`, with that rank.
fn session(path: &str, root: &Path) -> Option<(PathBuf, i32)> {
    let mut found = None;
    for d in Path::new(path).ancestors().skip(1) {
        if let Some(r) = super::rank::profiler_info_rank(d) {
            found = Some((d.to_path_buf(), r));
        }
        if d == root {
            break;
        }
    }
    found
}

/// What a session's best export holds: (graph captures, graph replays).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
struct GraphCalls {
    captures: bool,
    replays: bool,
}

const CAPTURE: &[u8] = b"aclmdlRICaptureBegin";
const REPLAY: &[u8] = b"aclmdlRIExecute";

fn calls_of(folder: &Path) -> GraphCalls {
    let Ok((found, _)) = detect::find_inputs(folder) else {
        return GraphCalls::default();
    };
    let (best, _) = detect::select(found, folder);
    let Some(input) = best.first() else {
        return GraphCalls::default();
    };
    match input.format {
        InputFormat::AscendDb => db_calls(&input.path),
        InputFormat::ChromeJson => json_calls(&input.path),
        InputFormat::KernelCsv | InputFormat::VendorSummary => GraphCalls::default(),
    }
}

/// A profiler db's string table names the calls its CANN_API rows make.
fn db_calls(path: &str) -> GraphCalls {
    let Ok(c) = super::ascend_db::open(path) else {
        return GraphCalls::default();
    };
    let has = |like: &str| {
        c.query_row(
            "SELECT 1 FROM STRING_IDS WHERE value LIKE ?1 LIMIT 1",
            [like],
            |_| Ok(()),
        )
        .is_ok()
    };
    GraphCalls {
        captures: has("aclmdlRICaptureBegin"),
        replays: has("aclmdlRIExecute%"),
    }
}

/// A JSON export scanned in 1 MiB blocks (gzip decoded on the way) until a replay call is
/// seen, or [`MAX_SCAN`] bytes.
fn json_calls(path: &str) -> GraphCalls {
    let Ok(file) = super::source::open_regular(Path::new(path), u64::MAX) else {
        return GraphCalls::default();
    };
    let mut r: Box<dyn Read> = if path.ends_with(".gz") {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut out = GraphCalls::default();
    let keep = CAPTURE.len().max(REPLAY.len());
    let mut buf = vec![0u8; 1 << 20];
    let mut carry = 0;
    let mut seen = 0u64;
    while let Ok(n) = r.read(&mut buf[carry..]) {
        if n == 0 {
            break;
        }
        let window = &buf[..carry + n];
        out.captures |= memchr::memmem::find(window, CAPTURE).is_some();
        out.replays |= memchr::memmem::find(window, REPLAY).is_some();
        seen += n as u64;
        if out.replays || seen >= MAX_SCAN {
            break;
        }
        carry = keep.min(window.len());
        let from = window.len() - carry;
        buf.copy_within(from..from + carry, 0);
    }
    out
}

/// Moves back into `kept` the best export of each rank folder left out for another session of
/// its rank when one of the two sessions is a graph capture (captures, no replays) and the other
/// replays graphs; their `skipped` entries go.
pub fn keep_capture_sessions(
    mut kept: Vec<Input>,
    mut skipped: Vec<Skipped>,
    root: &Path,
) -> (Vec<Input>, Vec<Skipped>) {
    let kept_sessions: BTreeMap<PathBuf, i32> =
        kept.iter().filter_map(|i| session(&i.path, root)).collect();
    let left: BTreeSet<(PathBuf, i32)> = skipped
        .iter()
        .filter_map(|s| session(&s.path, root))
        .filter(|s| !kept_sessions.contains_key(&s.0))
        .collect();
    if left.is_empty() {
        return (kept, skipped);
    }
    let mut memo: BTreeMap<PathBuf, GraphCalls> = BTreeMap::new();
    let mut calls = |f: &Path| *memo.entry(f.to_path_buf()).or_insert_with(|| calls_of(f));
    for (folder, rank) in left {
        let rivals: Vec<&PathBuf> = kept_sessions
            .iter()
            .filter(|x| *x.1 == rank)
            .map(|x| x.0)
            .collect();
        let [rival] = rivals.as_slice() else {
            continue;
        };
        let (a, b) = (calls(&folder), calls(rival));
        let capture_only = |x: GraphCalls| x.captures && !x.replays;
        if !((capture_only(a) && b.replays) || (capture_only(b) && a.replays)) {
            continue;
        }
        let Ok((found, _)) = detect::find_inputs(&folder) else {
            continue;
        };
        let (best, _) = detect::select(found, &folder);
        kept.extend(best);
        skipped.retain(|s| session(&s.path, root).is_none_or(|x| x.0 != folder));
    }
    kept.sort_by(|a, b| a.path.cmp(&b.path));
    (kept, skipped)
}
