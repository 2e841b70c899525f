//! `profscope export PATH --perfetto OUT.json`: a Chrome-trace JSON (array form) that the
//! Perfetto UI and trace_processor open, from any input profscope reads (db-only runs too).
//! Files are written one after another as they are read (pipeline::export drives it); each rank's processes become separate
//! processes named `rank R · <process>` (sorted by rank), so ranks sit side by side. A window
//! keeps the events overlapping it: `--window A..B` (offsets with a unit, from each file's first
//! event) or `--step N` (the file's Nth step: ProfilerStep#N, else the Nth forward scope).
//! Derived tracks are added per file in a `rank R · profscope` process: `bubbles` (device idle
//! gaps with their cause and neighbours), `steps` (step / forward-scope spans). Times keep
//! nanosecond precision (µs with three decimals) relative to an origin written in each process's
//! labels (`t0 = <ns>`) and in the summary.

use crate::analysis::{bubbles, devices};
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
    /// Steps the file holds (what `--step` can pick from).
    pub steps_in_file: u64,
    /// From the file's first event to its last event's end, ns (what `--window` offsets span).
    pub span_ns: i64,
    /// True when `--ranks` left this file out (nothing of it written).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub left_out: bool,
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

/// Writes files one after another into one Chrome-trace JSON array: [`PerfettoWriter::file`] per
/// file read (in input order), [`PerfettoWriter::failed`] per file that could not be read.
pub struct PerfettoWriter<'o, W: Write> {
    o: &'o PerfettoOpts,
    out: W,
    first: bool,
    /// The first file's origin, shared by every file on the same clock.
    global_origin: Option<i64>,
    files: Vec<FileExport>,
}

/// Where one file's events go: its pid block, label and clock origin.
struct Placement {
    base: i64,
    dpid: i64,
    label: String,
    sort: i64,
    origin: i64,
}

impl<'o, W: Write> PerfettoWriter<'o, W> {
    pub fn new(o: &'o PerfettoOpts, mut out: W) -> std::io::Result<Self> {
        out.write_all(b"[\n")?;
        Ok(PerfettoWriter {
            o,
            out,
            first: true,
            global_origin: None,
            files: Vec::new(),
        })
    }

    fn emit(&mut self, v: &str) -> std::io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        self.out.write_all(v.as_bytes())
    }

    /// A file that could not be read: listed with its error, nothing written.
    pub fn failed(&mut self, path: &str, error: String) {
        self.files.push(FileExport {
            path: path.to_string(),
            rank: -1,
            events_in: 0,
            events_written: 0,
            bubbles: 0,
            steps: 0,
            window_ns: None,
            origin_ns: 0,
            error: Some(error),
            steps_in_file: 0,
            span_ns: 0,
            left_out: false,
        });
    }

    /// The `fi`-th input's tables: its processes, threads and kept events, then the derived
    /// tracks (skipped whole when `--ranks` leaves its rank out).
    pub fn file(&mut self, fi: usize, path: &str, t: &Tables) -> std::io::Result<()> {
        let rank = t.files.rank.first().copied().unwrap_or(-1);
        let st = steps(t);
        let first = t.events.ts_ns.iter().copied().min().unwrap_or(0);
        let last = (0..t.events.len())
            .map(|i| t.events.end_ns(i))
            .max()
            .unwrap_or(first);
        let span_ns = last.saturating_sub(first);
        if self.o.ranks.as_ref().is_some_and(|r| !r.contains(&rank)) {
            self.files.push(FileExport {
                path: path.to_string(),
                rank,
                events_in: t.events.len() as u64,
                events_written: 0,
                bubbles: 0,
                steps: 0,
                window_ns: None,
                origin_ns: 0,
                error: None,
                steps_in_file: st.len() as u64,
                span_ns,
                left_out: true,
            });
            return Ok(());
        }
        let at = self.placement(fi, rank, t);
        let win = window_of(t, &self.o.window, &st);
        self.metadata(&at, t)?;
        let written = self.events(&at, t, win)?;
        let (bubbles, steps) = self.derived(&at, t, win, &st)?;
        self.files.push(FileExport {
            path: path.to_string(),
            rank,
            events_in: t.events.len() as u64,
            events_written: written,
            bubbles,
            steps,
            window_ns: win,
            origin_ns: at.origin,
            error: None,
            steps_in_file: st.len() as u64,
            span_ns,
            left_out: false,
        });
        Ok(())
    }

    /// Closes the array; the output and what was written per file.
    pub fn finish(mut self) -> std::io::Result<(W, Vec<FileExport>)> {
        self.out.write_all(b"\n]\n")?;
        Ok((self.out, self.files))
    }

    fn placement(&mut self, fi: usize, rank: i32, t: &Tables) -> Placement {
        // Chrome JSON times are µs doubles: near 1.7e15 µs (epoch ns clocks) a double resolves
        // only 0.25 µs, which turns nested ns-precise events into overlapping ones. So times are
        // written relative to an origin: the first file's first second, shared by every file on
        // the same clock (within a day of it) so ranks stay aligned; a file on another clock
        // gets its own.
        let first_ts = t.events.ts_ns.iter().copied().min().unwrap_or(0);
        let own = first_ts.div_euclid(1_000_000_000) * 1_000_000_000;
        let origin = match self.global_origin {
            Some(g) if (first_ts - g).abs() < 86_400_000_000_000 => g,
            Some(_) => own,
            None => *self.global_origin.insert(own),
        };
        let base = (fi as i64 + 1) * 1_000_000;
        let (label, sort) = if rank >= 0 {
            (format!("rank {rank}"), rank as i64)
        } else {
            (format!("file {fi}"), 10_000 + fi as i64)
        };
        Placement {
            base,
            dpid: base + 999_999,
            label,
            sort,
            origin,
        }
    }

    /// Processes and threads as metadata.
    fn metadata(&mut self, at: &Placement, t: &Tables) -> std::io::Result<()> {
        let (base, sort, origin) = (at.base, at.sort, at.origin);
        for p in 0..t.processes.pid.len() {
            let pid = base + p as i64;
            let name = format!(
                "{} · {}",
                at.label,
                t.process_label(crate::model::ProcessId(p as u32))
            );
            self.emit(&json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": name}}).to_string())?;
            self.emit(&json!({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0, "args": {"sort_index": sort * 100 + p as i64}}).to_string())?;
            self.emit(&json!({"name": "process_labels", "ph": "M", "pid": pid, "tid": 0, "args": {"labels": format!("t0 = {origin} ns")}}).to_string())?;
        }
        for th in 0..t.threads.tid.len() {
            let tid_ = crate::model::ThreadId(th as u32);
            let pid = base + t.threads.process[th].0 as i64;
            self.emit(&json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": th as i64 + 1, "args": {"name": t.thread_label(tid_)}}).to_string())?;
        }
        Ok(())
    }

    /// The events inside the window (and on the kept streams), overlapping ones on extra lanes.
    fn events(
        &mut self,
        at: &Placement,
        t: &Tables,
        win: Option<(i64, i64)>,
    ) -> std::io::Result<u64> {
        let ev = &t.events;
        let keep = |ts: i64, end: i64| win.is_none_or(|(a, b)| end >= a && ts <= b);
        let kept: Vec<usize> = (0..ev.len())
            .filter(|&i| keep(ev.ts_ns[i], ev.end_ns(i)))
            .filter(|&i| {
                self.o.streams.as_ref().is_none_or(|s| {
                    !ev.category[i].is_device()
                        || ev.stream.at(i) < 0
                        || s.contains(&ev.stream.at(i))
                })
            })
            .collect();
        let lanes = lanes(t, &kept);
        let mut named: std::collections::HashSet<(usize, u32)> = Default::default();
        let mut written = 0u64;
        for (k, &i) in kept.iter().enumerate() {
            let (ts, lane) = (ev.ts_ns[i], lanes[k]);
            let th = ev.thread[i];
            let pid = at.base + t.threads.process[th.idx()].0 as i64;
            let tid = th.idx() as i64 + 1 + lane as i64 * LANE_TID;
            if lane > 0 && named.insert((th.idx(), lane)) {
                let name = format!("{} (overlap {lane})", t.thread_label(th));
                self.emit(&json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}).to_string())?;
            }
            let mut e = json!({"name": t.str(ev.name[i]), "pid": pid, "tid": tid, "ts": serde_json::Value::String(String::new())});
            let cat = t.str(ev.cat.at(i));
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
            let tt = t.str(ev.task_type.at(i));
            if !tt.is_empty() {
                e["args"] = json!({"Task Type": tt});
            }
            // ts / dur as exact decimal µs (raw numbers, not strings).
            let mut s = e.to_string();
            s = s.replacen("\"ts\":\"\"", &format!("\"ts\":{}", us(ts - at.origin)), 1);
            s = s.replacen(
                "\"dur\":\"\"",
                &format!("\"dur\":{}", us(ev.dur_ns.at(i))),
                1,
            );
            self.emit(&s)?;
            written += 1;
        }
        Ok(written)
    }

    /// The `rank R · profscope` process: bubbles and steps tracks. Returns how many of each.
    fn derived(
        &mut self,
        at: &Placement,
        t: &Tables,
        win: Option<(i64, i64)>,
        st: &[(usize, String)],
    ) -> std::io::Result<(u64, u64)> {
        let (dpid, origin) = (at.dpid, at.origin);
        let keep = |ts: i64, end: i64| win.is_none_or(|(a, b)| end >= a && ts <= b);
        let span = |ts: i64, dur: i64| {
            format!(
                "\"ph\":\"X\",\"ts\":{},\"dur\":{}",
                us(ts - origin),
                us(dur)
            )
        };
        self.emit(&json!({"name": "process_name", "ph": "M", "pid": dpid, "tid": 0, "args": {"name": format!("{} · profscope", at.label)}}).to_string())?;
        self.emit(&json!({"name": "process_sort_index", "ph": "M", "pid": dpid, "tid": 0, "args": {"sort_index": at.sort * 100 + 99}}).to_string())?;
        self.emit(&json!({"name": "thread_name", "ph": "M", "pid": dpid, "tid": 1, "args": {"name": "bubbles"}}).to_string())?;
        self.emit(&json!({"name": "thread_name", "ph": "M", "pid": dpid, "tid": 2, "args": {"name": "steps"}}).to_string())?;
        let devs = devices::devices(t);
        let bo = bubbles::BubbleOpts {
            min_gap_ns: self.o.min_gap_ns,
            top_n: usize::MAX,
        };
        let mut nb = 0u64;
        for d in bubbles::compute(t, &devs, &bo) {
            for g in &d.largest {
                if !keep(g.start_ns, g.end_ns) {
                    continue;
                }
                let n = |x: &Option<bubbles::Neighbour>| x.as_ref().map(|x| x.name.clone());
                let e = json!({"name": format!("bubble: {}", g.cause.as_str()), "ph": "X", "pid": dpid, "tid": 1, "cat": "profscope.bubble",
                    "args": {"cause": g.cause.as_str(), "device": d.device.device_id, "process": d.device.process, "dur_ns": g.dur_ns, "before": n(&g.before), "after": n(&g.after), "evidence": n(&g.evidence)}});
                let s = e
                    .to_string()
                    .replacen("\"ph\":\"X\"", &span(g.start_ns, g.dur_ns), 1);
                self.emit(&s)?;
                nb += 1;
            }
        }
        let ev = &t.events;
        let mut ns = 0u64;
        for (i, name) in st {
            let (ts, end) = (ev.ts_ns[*i], ev.end_ns(*i));
            if !keep(ts, end) {
                continue;
            }
            let e =
                json!({"name": name, "ph": "X", "pid": dpid, "tid": 2, "cat": "profscope.step"});
            self.emit(
                &e.to_string()
                    .replacen("\"ph\":\"X\"", &span(ts, end - ts), 1),
            )?;
            ns += 1;
        }
        Ok((nb, ns))
    }
}
