//! `profscope export PATH --perfetto OUT.json`: a Chrome-trace JSON (array form) that the
//! Perfetto UI and trace_processor open, from any input profscope reads (db-only runs too).
//! Files are read one at a time and written as they go; each rank's processes become separate
//! processes named `rank R · <process>` (sorted by rank), so ranks sit side by side. A window
//! keeps the events overlapping it: `--window A..B` (offsets with a unit, from each file's first
//! event) or `--step N` (the file's Nth step: ProfilerStep#N, else the Nth forward scope).
//! Derived tracks are added per file in a `rank R · profscope` process: `bubbles` (device idle
//! gaps with their cause and neighbours), `steps` (step / forward-scope spans). Times keep
//! nanosecond precision (µs with three decimals) relative to an origin written in each process's
//! labels (`t0 = <ns>`) and in the summary.

use crate::analysis::{bubbles, devices};
use crate::ingest::{Progress, detect::Input, ingest_one};
use crate::model::{Category, EventKind, Tables};
use serde_json::json;
use std::io::Write;

#[derive(Debug, Clone)]
pub enum Window {
    All,
    /// Offsets from the file's first event, ns.
    Offsets(i64, i64),
    /// The Nth step of each file (1-based for forward scopes; ProfilerStep#N by number).
    Step(u64),
}

#[derive(Debug, Clone)]
pub struct PerfettoOpts {
    pub window: Window,
    pub ranks: Option<Vec<i32>>,
    /// Keep only device streams with these ids (host threads are kept).
    pub streams: Option<Vec<i32>>,
    pub min_gap_ns: i64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct FileExport {
    pub path: String,
    pub rank: i32,
    pub events_in: u64,
    pub events_written: u64,
    pub bubbles: u64,
    pub steps: u64,
    pub window_ns: Option<(i64, i64)>,
    /// Times in the file are µs after this instant (ns, the profile's clock).
    pub origin_ns: i64,
    pub error: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ExportSummary {
    pub out: String,
    pub bytes: u64,
    pub files: Vec<FileExport>,
    pub warnings: Vec<String>,
}

/// Perfetto UI's practical limit for JSON traces.
pub const UI_LIMIT: u64 = 2 << 30;

fn us(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

fn steps(t: &Tables) -> Vec<(usize, String)> {
    let ev = &t.events;
    let mut prof: Vec<(u64, usize)> = (0..ev.len())
        // Category Step: the CPU ProfilerStep#N only, not Kineto's GPU copy (both on the derived
        // steps track would overlap partially, and Perfetto would drop one).
        .filter(|&i| ev.kind[i] == EventKind::Complete && t.events.category[i] == Category::Step)
        .filter_map(|i| {
            Some((
                t.str(ev.name[i])
                    .strip_prefix("ProfilerStep#")?
                    .parse()
                    .ok()?,
                i,
            ))
        })
        .collect();
    if !prof.is_empty() {
        prof.sort();
        return prof
            .into_iter()
            .map(|(n, i)| (i, format!("ProfilerStep#{n}")))
            .collect();
    }
    let mut fwd: Vec<usize> = ["forward_eager", "forward_cudagraph", "forward"]
        .iter()
        .flat_map(|s| crate::analysis::phases::scopes(t, s))
        .collect();
    fwd.sort_by_key(|&i| ev.ts_ns[i]);
    fwd.into_iter()
        .enumerate()
        .map(|(k, i)| (i, format!("{} #{}", t.str(ev.name[i]), k + 1)))
        .collect()
}

fn window_of(t: &Tables, w: &Window, st: &[(usize, String)]) -> Option<(i64, i64)> {
    let ev = &t.events;
    match w {
        Window::All => None,
        Window::Offsets(a, b) => {
            let first = ev.ts_ns.iter().copied().min().unwrap_or(0);
            Some((first + a, first + b))
        }
        Window::Step(n) => {
            let pick = st
                .iter()
                .find(|(_, name)| name == &format!("ProfilerStep#{n}"))
                .or_else(|| {
                    if st.first().is_some_and(|s| s.1.starts_with("ProfilerStep#")) {
                        None
                    } else {
                        st.get((*n as usize).saturating_sub(1))
                    }
                });
            pick.map(|(i, _)| (ev.ts_ns[*i], ev.end_ns(*i)))
                .or(Some((i64::MAX, i64::MAX)))
        }
    }
}

/// Tid offset of overlap lanes: lane k of thread t is `t + 1 + k * LANE_TID`.
const LANE_TID: i64 = 1_000_000;

/// A lane per event such that, within a thread, the events of one lane nest strictly (disjoint
/// or contained), as Perfetto requires of complete events on one track: otherwise it drops
/// the overlapping ones. Partially overlapping events (real traces have them: async device
/// work, vendor overlap rows) move to `(overlap k)` lanes instead of being lost.
fn lanes(t: &Tables, kept: &[usize]) -> Vec<u32> {
    let ev = &t.events;
    let mut order: Vec<usize> = (0..kept.len()).collect();
    order.sort_by_key(|&k| {
        let i = kept[k];
        (
            ev.thread[i].idx(),
            ev.ts_ns[i],
            std::cmp::Reverse(ev.end_ns(i)),
        )
    });
    let mut out = vec![0u32; kept.len()];
    let mut stacks: Vec<Vec<i64>> = Vec::new();
    let mut cur_thread = usize::MAX;
    for k in order {
        let i = kept[k];
        if ev.thread[i].idx() != cur_thread {
            cur_thread = ev.thread[i].idx();
            stacks.clear();
        }
        let (ts, end) = (ev.ts_ns[i], ev.end_ns(i));
        if ev.kind[i] == EventKind::Instant {
            continue;
        }
        let mut placed = None;
        for (l, st) in stacks.iter_mut().enumerate() {
            while st.last().is_some_and(|&e| e <= ts) {
                st.pop();
            }
            if st.last().is_none_or(|&e| end <= e) {
                st.push(end);
                placed = Some(l);
                break;
            }
        }
        out[k] = match placed {
            Some(l) => l as u32,
            None => {
                stacks.push(vec![end]);
                (stacks.len() - 1) as u32
            }
        };
    }
    out
}

/// Writes every input; returns what was written per file. `out` receives a JSON array.
pub fn export(
    inputs: &[Input],
    o: &PerfettoOpts,
    out: &mut impl Write,
    progress: &Progress,
) -> std::io::Result<Vec<FileExport>> {
    out.write_all(b"[\n")?;
    let mut first = true;
    let mut emit = |out: &mut dyn Write, v: String| -> std::io::Result<()> {
        if !first {
            out.write_all(b",\n")?;
        }
        first = false;
        out.write_all(v.as_bytes())
    };
    let mut files = Vec::new();
    let mut global_origin: Option<i64> = None;
    for (fi, input) in inputs.iter().enumerate() {
        let t = match ingest_one(input, progress) {
            Ok(t) => t,
            Err(e) => {
                files.push(FileExport {
                    path: input.path.clone(),
                    rank: -1,
                    events_in: 0,
                    events_written: 0,
                    bubbles: 0,
                    steps: 0,
                    window_ns: None,
                    origin_ns: 0,
                    error: Some(e.to_string()),
                });
                continue;
            }
        };
        let rank = t.files.rank.first().copied().unwrap_or(-1);
        if o.ranks.as_ref().is_some_and(|r| !r.contains(&rank)) {
            continue;
        }
        // Chrome JSON times are µs doubles: near 1.7e15 µs (epoch ns clocks) a double resolves
        // only 0.25 µs, which turns nested ns-precise events into overlapping ones. So times are
        // written relative to an origin: the first file's first second, shared by every file on
        // the same clock (within a day of it) so ranks stay aligned; a file on another clock
        // gets its own.
        let first_ts = t.events.ts_ns.iter().copied().min().unwrap_or(0);
        let own = first_ts.div_euclid(1_000_000_000) * 1_000_000_000;
        let origin = match global_origin {
            Some(g) if (first_ts - g).abs() < 86_400_000_000_000 => g,
            Some(_) => own,
            None => *global_origin.insert(own),
        };
        let ts_us = |ns: i64| us(ns - origin);
        let st = steps(&t);
        let win = window_of(&t, &o.window, &st);
        let keep = |ts: i64, end: i64| win.is_none_or(|(a, b)| end >= a && ts <= b);
        let base = (fi as i64 + 1) * 1_000_000;
        let label = if rank >= 0 {
            format!("rank {rank}")
        } else {
            format!("file {fi}")
        };
        let sort = if rank >= 0 {
            rank as i64
        } else {
            10_000 + fi as i64
        };
        // Processes and threads as metadata.
        for p in 0..t.processes.pid.len() {
            let pid = base + p as i64;
            let name = format!(
                "{label} · {}",
                t.process_label(crate::model::ProcessId(p as u32))
            );
            emit(out, json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": name}}).to_string())?;
            emit(out, json!({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0, "args": {"sort_index": sort * 100 + p as i64}}).to_string())?;
            emit(out, json!({"name": "process_labels", "ph": "M", "pid": pid, "tid": 0, "args": {"labels": format!("t0 = {origin} ns")}}).to_string())?;
        }
        for th in 0..t.threads.tid.len() {
            let tid_ = crate::model::ThreadId(th as u32);
            let pid = base + t.threads.process[th].0 as i64;
            emit(out, json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": th as i64 + 1, "args": {"name": t.thread_label(tid_)}}).to_string())?;
        }
        let ev = &t.events;
        let mut written = 0u64;
        let kept: Vec<usize> = (0..ev.len())
            .filter(|&i| keep(ev.ts_ns[i], ev.end_ns(i)))
            .filter(|&i| {
                o.streams.as_ref().is_none_or(|s| {
                    !ev.category[i].is_device() || ev.stream[i] < 0 || s.contains(&ev.stream[i])
                })
            })
            .collect();
        let lanes = lanes(&t, &kept);
        let mut named: std::collections::HashSet<(usize, u32)> = Default::default();
        for (k, &i) in kept.iter().enumerate() {
            let (ts, lane) = (ev.ts_ns[i], lanes[k]);
            let th = ev.thread[i];
            let pid = base + t.threads.process[th.idx()].0 as i64;
            let tid = th.idx() as i64 + 1 + lane as i64 * LANE_TID;
            if lane > 0 && named.insert((th.idx(), lane)) {
                let name = format!("{} (overlap {lane})", t.thread_label(th));
                emit(out, json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}).to_string())?;
            }
            let mut e = json!({"name": t.str(ev.name[i]), "pid": pid, "tid": tid, "ts": serde_json::Value::String(String::new())});
            let cat = t.str(ev.cat[i]);
            if !cat.is_empty() {
                e["cat"] = cat.into();
            }
            match ev.kind[i] {
                EventKind::Complete => {
                    e["ph"] = "X".into();
                    e["dur"] = serde_json::Value::String(String::new());
                }
                EventKind::Instant => {
                    e["ph"] = "i".into();
                    e["s"] = "t".into();
                }
            }
            let tt = t.str(ev.task_type[i]);
            if !tt.is_empty() {
                e["args"] = json!({"Task Type": tt});
            }
            // ts / dur as exact decimal µs (raw numbers, not strings).
            let mut s = e.to_string();
            s = s.replacen("\"ts\":\"\"", &format!("\"ts\":{}", ts_us(ts)), 1);
            s = s.replacen("\"dur\":\"\"", &format!("\"dur\":{}", us(ev.dur_ns[i])), 1);
            emit(out, s)?;
            written += 1;
        }
        // Derived tracks.
        let dpid = base + 999_999;
        emit(out, json!({"name": "process_name", "ph": "M", "pid": dpid, "tid": 0, "args": {"name": format!("{label} · profscope")}}).to_string())?;
        emit(out, json!({"name": "process_sort_index", "ph": "M", "pid": dpid, "tid": 0, "args": {"sort_index": sort * 100 + 99}}).to_string())?;
        emit(out, json!({"name": "thread_name", "ph": "M", "pid": dpid, "tid": 1, "args": {"name": "bubbles"}}).to_string())?;
        emit(out, json!({"name": "thread_name", "ph": "M", "pid": dpid, "tid": 2, "args": {"name": "steps"}}).to_string())?;
        let devs = devices::devices(&t);
        let bo = bubbles::BubbleOpts {
            min_gap_ns: o.min_gap_ns,
            top_n: usize::MAX,
        };
        let mut nb = 0u64;
        for d in bubbles::compute(&t, &devs, &bo) {
            for g in &d.largest {
                if !keep(g.start_ns, g.end_ns) {
                    continue;
                }
                let n = |x: &Option<bubbles::Neighbour>| x.as_ref().map(|x| x.name.clone());
                let e = json!({"name": format!("bubble: {}", g.cause.as_str()), "ph": "X", "pid": dpid, "tid": 1, "cat": "profscope.bubble",
                    "args": {"cause": g.cause.as_str(), "device": d.device.device_id, "process": d.device.process, "dur_ns": g.dur_ns, "before": n(&g.before), "after": n(&g.after), "evidence": n(&g.evidence)}});
                let s = e.to_string().replacen(
                    "\"ph\":\"X\"",
                    &format!(
                        "\"ph\":\"X\",\"ts\":{},\"dur\":{}",
                        ts_us(g.start_ns),
                        us(g.dur_ns)
                    ),
                    1,
                );
                emit(out, s)?;
                nb += 1;
            }
        }
        let mut ns = 0u64;
        for (i, name) in &st {
            let (ts, end) = (ev.ts_ns[*i], ev.end_ns(*i));
            if !keep(ts, end) {
                continue;
            }
            let e =
                json!({"name": name, "ph": "X", "pid": dpid, "tid": 2, "cat": "profscope.step"});
            emit(
                out,
                e.to_string().replacen(
                    "\"ph\":\"X\"",
                    &format!("\"ph\":\"X\",\"ts\":{},\"dur\":{}", ts_us(ts), us(end - ts)),
                    1,
                ),
            )?;
            ns += 1;
        }
        files.push(FileExport {
            path: input.path.clone(),
            rank,
            events_in: ev.len() as u64,
            events_written: written,
            bubbles: nb,
            steps: ns,
            window_ns: win,
            origin_ns: origin,
            error: None,
        });
    }
    out.write_all(b"\n]\n")?;
    Ok(files)
}
