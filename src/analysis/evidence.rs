//! What each input file can support, measured before any conclusion is drawn from it
//! (docs/evidence.md): how many host launches have their device work in the trace, whether
//! launches were recorded into a graph during stream capture (recorded, not executed), how much
//! of the host's window the device events cover, and the vendor's own per-step numbers for the
//! self-audit. The thresholds that turn these signals into a verdict's reasons are here, in one
//! place; `report::verdict` applies them.

use super::devices::Device;
use super::host_calls::{Call, capture_windows, captured, classify};
pub use crate::contract::evidence::*;
use crate::model::hash::{FxHashMap, FxHashSet};
use crate::model::{Category, ProcessRole, StrId, Tables};

/// Launch coverage is judged on files with at least this many executed launches.
pub const MIN_LAUNCHES: u64 = 20;
/// Below this percent of executed launches with device work, the verdict is qualified.
pub const LAUNCH_COVERAGE_QUALIFIED_PCT: f64 = 90.0;
/// Below this percent, the verdict is withheld: most of the host's work has no device record.
pub const LAUNCH_COVERAGE_WITHHELD_PCT: f64 = 50.0;
/// When captured launches are at least this percent of all launches, the trace is a capture:
/// withheld. Any captured launch below it qualifies the verdict.
pub const CAPTURE_WITHHELD_PCT: f64 = 50.0;
/// A file whose device window is below this percent of its host window is a sliver: withheld.
pub const DEVICE_SLIVER_WITHHELD_PCT: f64 = 1.0;
/// Below this percent (and at or above the withheld one), qualified.
pub const DEVICE_SLIVER_QUALIFIED_PCT: f64 = 10.0;
/// Host windows shorter than this are too short to judge a sliver by (ns).
pub const DEVICE_SLIVER_MIN_HOST_WINDOW_NS: i64 = 1_000_000;
/// Host windows longer than this mix clocks (msprof_0.db's MSTX rows sit on another epoch):
/// the sliver is not judged (ns; one hour).
pub const DEVICE_SLIVER_MAX_HOST_WINDOW_NS: i64 = 3_600_000_000_000;
/// A verdict that rests on idle (idle-bound, host-bound) with more than this percent of its
/// idle unexplained (bubble cause `unknown`, or `host_blocked` on work outside the trace) is
/// qualified (`idle_unexplained`): the verdict says the device waited, not why.
pub const IDLE_UNEXPLAINED_QUALIFIED_PCT: f64 = 25.0;
/// When our computing time is below this percent of the vendor's step table's, the export holds
/// a fraction of the device work: withheld.
pub const EXPORT_COMPLETE_MIN_PCT: f64 = 50.0;

/// The evidence of every file of `t`.
pub fn facts(t: &Tables, devices: &[Device]) -> Vec<FileEvidence> {
    let nf = t.files.len();
    let mut out: Vec<FileEvidence> = (0..nf)
        .map(|f| FileEvidence {
            file: t.files.path[f].clone(),
            rank: t.files.rank[f],
            ..FileEvidence::default()
        })
        .collect();
    // Device side: counts, windows and the link ids the device events carry.
    let mut dev_span: Vec<Option<(i64, i64)>> = vec![None; nf];
    let mut correlations: Vec<FxHashSet<i64>> = vec![FxHashSet::default(); nf];
    let mut connections: Vec<FxHashSet<i64>> = vec![FxHashSet::default(); nf];
    for d in devices {
        let f = d.file.idx();
        let kineto = t.processes.role[d.process.idx()] == ProcessRole::KinetoDevice;
        out[f].device_events += d.events.len() as u64;
        for &i in &d.events {
            let i = i as usize;
            out[f].replay_device_events += (t.events.graph_id.at(i) >= 0) as u64;
            widen(&mut dev_span[f], t.events.ts_ns[i], t.events.end_ns(i));
            let (set, id) = if kineto {
                (&mut correlations[f], t.events.correlation_id.at(i))
            } else {
                (&mut connections[f], t.events.connection_id.at(i))
            };
            if id >= 0 {
                set.insert(id);
            }
        }
    }
    // Host side: windows, launches and capture calls.
    let mut host_span: Vec<Option<(i64, i64)>> = vec![None; nf];
    let mut memo: FxHashMap<StrId, Call> = FxHashMap::default();
    let mut launches: Vec<usize> = Vec::new();
    let mut captures: Vec<(usize, Call)> = Vec::new();
    for i in 0..t.events.len() {
        if !super::host_calls::is_host_event(t, i) {
            continue;
        }
        let f = t.event_file(i).idx();
        out[f].host_events += 1;
        widen(&mut host_span[f], t.events.ts_ns[i], t.events.end_ns(i));
        if t.events.category[i] != Category::HostOp {
            continue;
        }
        let name = t.events.name[i];
        let call = *memo.entry(name).or_insert_with(|| classify(t.str(name)));
        match call {
            Call::Other => {}
            Call::Launch | Call::GraphLaunch => launches.push(i),
            Call::CaptureBegin | Call::CaptureEnd => captures.push((i, call)),
        }
    }
    let windows = capture_windows(t, &captures, &host_span);
    for w in windows.values().flatten() {
        out[w.file].capture_windows += 1;
        out[w.file].capture_ns += w.end - w.start;
    }
    let mut launch_span: Vec<Option<(i64, i64)>> = vec![None; nf];
    let mut graph_correlations: Vec<FxHashSet<i64>> = vec![FxHashSet::default(); nf];
    for &i in &launches {
        let f = t.event_file(i).idx();
        let graph = memo[&t.events.name[i]] == Call::GraphLaunch;
        let ascend = t.str(t.events.name[i]).contains('@');
        if graph {
            out[f].graph_launches += 1;
            let c = t.events.correlation_id.at(i);
            if c >= 0 && !ascend {
                graph_correlations[f].insert(c);
            }
            if ascend {
                continue;
            }
        }
        out[f].launches += 1;
        let corr = t.events.correlation_id.at(i);
        let conn = t.events.connection_id.at(i);
        if (corr >= 0 && correlations[f].contains(&corr))
            || (conn >= 0 && connections[f].contains(&conn))
        {
            out[f].launches_with_device_work += 1;
        }
        if !windows.is_empty() && captured(t, &windows, i) {
            out[f].captured_launches += 1;
        } else {
            widen(&mut launch_span[f], t.events.ts_ns[i], t.events.end_ns(i));
        }
    }
    for d in devices {
        let f = d.file.idx();
        if graph_correlations[f].is_empty() {
            continue;
        }
        for &i in &d.events {
            let c = t.events.correlation_id.at(i as usize);
            out[f].replay_device_events += graph_correlations[f].contains(&c) as u64;
        }
    }
    for f in 0..nf {
        out[f].host_window_ns = host_span[f].map_or(0, |s| s.1 - s.0);
        out[f].device_window_ns = dev_span[f].map_or(0, |s| s.1 - s.0);
        out[f].launch_window_ns = launch_span[f].map_or(0, |s| s.1 - s.0);
        (out[f].vendor_steps, out[f].vendor_steps_folded) = vendor_steps(t, f);
        out[f].vendor_collectives = vendor_collectives(t, f);
    }
    out
}

fn widen(span: &mut Option<(i64, i64)>, s: i64, e: i64) {
    *span = Some(match *span {
        None => (s, e),
        Some((a, b)) => (a.min(s), b.max(e)),
    });
}

/// The normalized column name: lower case, letters and digits only
/// (`Communication(Not Overlapped)` and `communication_not_overlapped` are one name).
fn norm(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The vendor's step rows of file `f`: analysis.db `StepTraceTime` and the text export's
/// `step_trace_time*.csv` (not msprof-analyze's cluster file, whose rows are per rank), one per
/// (source, step number): a row repeating a step number already read is folded into the count
/// returned beside them (the first row of a step is compared; a file with 300,000 copies of
/// one step is one comparison, not 300,000).
fn vendor_steps(t: &Tables, f: usize) -> (Vec<VendorStep>, u64) {
    let r = &t.reference;
    // (table, row) → (step, [computing, communication, not overlapped, free], bubble) in µs.
    type Row = (Option<i64>, [f64; 4], f64);
    let mut rows: std::collections::BTreeMap<(StrId, u32), Row> = Default::default();
    for k in 0..r.len() {
        if r.file[k].idx() != f {
            continue;
        }
        let table = t.str(r.table[k]);
        if table != "StepTraceTime" && !table.starts_with("step_trace_time") {
            continue;
        }
        let e = rows
            .entry((r.table[k], r.row[k]))
            .or_insert((None, [f64::NAN; 4], 0.0));
        let n = r.number[k];
        match norm(t.str(r.column[k])).as_str() {
            "step" => {
                e.0 = if n.is_finite() {
                    Some(n as i64)
                } else {
                    let digits: String = t
                        .str(r.text[k])
                        .chars()
                        .filter(char::is_ascii_digit)
                        .collect();
                    digits.parse().ok()
                }
            }
            "computing" => e.1[0] = n,
            "communication" => e.1[1] = n,
            "communicationnotoverlapped" => e.1[2] = n,
            "free" => e.1[3] = n,
            "bubble" if n.is_finite() => e.2 = n,
            _ => {}
        }
    }
    let ns = |us: f64| (us * 1000.0).round() as i64;
    let mut seen = std::collections::HashSet::new();
    let mut folded = 0u64;
    let steps = rows
        .into_iter()
        .filter(|(_, (_, v, _))| v.iter().all(|x| x.is_finite()))
        .filter(|((table, _), (step, _, _))| {
            let first = seen.insert((*table, *step));
            folded += u64::from(!first);
            first
        })
        .map(|((table, _), (step, v, bubble))| VendorStep {
            source: match t.str(table) {
                "StepTraceTime" => "analysis.db StepTraceTime".to_string(),
                other => other.to_string(),
            },
            step,
            computing_ns: ns(v[0]),
            communication_ns: ns(v[1]),
            communication_not_overlapped_ns: ns(v[2]),
            free_ns: ns(v[3]),
            bubble_ns: ns(bubble),
        })
        .collect();
    (steps, folded)
}

/// The vendor's collective totals per step of file `f`: communication.json's `Total Op Info`
/// records of `collective` ops (not the matrix file, not msprof-analyze's cluster file), and
/// analysis.db CommAnalyzerTime's `collective` rows summed per step (ms → ns).
fn vendor_collectives(t: &Tables, f: usize) -> Vec<VendorCollectives> {
    let r = &t.reference;
    #[derive(Default)]
    struct Rec {
        db: bool,
        step: Option<i64>,
        collective: bool,
        total: bool,
        v: [f64; 3],
    }
    let mut recs: std::collections::BTreeMap<(StrId, u32), Rec> = Default::default();
    for k in 0..r.len() {
        if r.file[k].idx() != f {
            continue;
        }
        let table = t.str(r.table[k]);
        let db = table == "CommAnalyzerTime";
        let json = table.starts_with("communication") && !table.starts_with("communication_matrix");
        if !db && !json {
            continue;
        }
        let e = recs.entry((r.table[k], r.row[k])).or_insert(Rec {
            db,
            v: [f64::NAN; 3],
            ..Rec::default()
        });
        let text = t.str(r.text[k]);
        match t.str(r.column[k]) {
            "step" => {
                let d: String = text.chars().filter(char::is_ascii_digit).collect();
                e.step = d.parse().ok();
            }
            "kind" | "type" => e.collective = text == "collective",
            "op" => e.total = text == "Total Op Info",
            "Communication Time Info/Elapse Time(ms)" | "elapse_time" => e.v[0] = r.number[k],
            "Communication Time Info/Transit Time(ms)" | "transit_time" => e.v[1] = r.number[k],
            "Communication Time Info/Wait Time(ms)" | "wait_time" => e.v[2] = r.number[k],
            _ => {}
        }
    }
    // (source, step) → summed ms.
    let mut sums: std::collections::BTreeMap<(&str, Option<i64>), [f64; 3]> = Default::default();
    for x in recs.into_values() {
        if !x.collective || !x.v.iter().all(|v| v.is_finite()) || (!x.db && !x.total) {
            continue;
        }
        let source = if x.db {
            "analysis.db CommAnalyzerTime"
        } else {
            "communication.json"
        };
        let e = sums.entry((source, x.step)).or_insert([0.0; 3]);
        for (a, v) in e.iter_mut().zip(x.v) {
            *a += v;
        }
    }
    let ns = |ms: f64| (ms * 1e6).round() as i64;
    sums.into_iter()
        .map(|((source, step), v)| VendorCollectives {
            source: source.to_string(),
            step,
            elapsed_ns: ns(v[0]),
            transit_ns: ns(v[1]),
            wait_ns: ns(v[2]),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_classified_by_their_api_name() {
        for (name, want) in [
            ("cudaLaunchKernel", Call::Launch),
            ("cudaLaunchKernelExC", Call::Launch),
            ("cuLaunchKernelEx", Call::Launch),
            ("hipExtModuleLaunchKernel", Call::Launch),
            ("cudaMemcpyAsync", Call::Launch),
            ("hipMemsetAsync", Call::Launch),
            ("Node@launch", Call::Launch),
            ("cudaLaunchHostFunc", Call::Other),
            ("cudaGraphLaunch", Call::GraphLaunch),
            ("AscendCL@aclmdlRIExecuteAsync", Call::GraphLaunch),
            ("cudaStreamBeginCapture", Call::CaptureBegin),
            ("hipStreamBeginCapture", Call::CaptureBegin),
            ("AscendCL@aclmdlRICaptureBegin", Call::CaptureBegin),
            ("cudaStreamEndCapture", Call::CaptureEnd),
            ("AscendCL@aclmdlRICaptureEnd", Call::CaptureEnd),
            // Probes prove nothing: PyTorch calls them outside captures too.
            ("cudaStreamGetCaptureInfo", Call::Other),
            ("cudaStreamIsCapturing", Call::Other),
            ("AscendCL@aclmdlRICaptureGetInfo", Call::Other),
            ("aten::copy_", Call::Other),
        ] {
            assert!(classify(name) == want, "{name}");
        }
    }

    #[test]
    fn vendor_column_names_normalize_to_one_spelling() {
        assert_eq!(
            norm("Communication(Not Overlapped)"),
            norm("communication_not_overlapped")
        );
        assert_ne!(
            norm("Communication(Not Overlapped and Exclude Receive)"),
            norm("communication_not_overlapped")
        );
    }
}
