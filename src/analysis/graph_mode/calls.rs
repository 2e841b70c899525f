//! The host side of graph mode in one file: graph launches, launches and capture calls (one pass
//! over the events), the capture windows with the launches each recorded, and the ops around a
//! host call on its OS thread (host op, `nn.Module`, Python frame).

use super::extract::{ANY, COPY, KERNEL, Label, NO_NAME, Recorded, SET, Strings, Token};
use crate::analysis::devices::iv;
use crate::analysis::host_calls::{Call, capture_windows, classify};
use crate::analysis::intervals::Iv;
use crate::model::hash::FxHashMap;
use crate::model::{Category, FileId, StrId, Tables, ThreadId};

/// The host calls of one file that graph mode reads, in time order.
#[derive(Default)]
pub struct HostCalls {
    pub graph_launches: Vec<u32>,
    pub launches: Vec<u32>,
    pub captures: Vec<(usize, Call)>,
    pub span: Option<(i64, i64)>,
}

/// Graph launches, launches and capture calls of every file, one pass over the events (each
/// thread's file looked up once, none for a device-side thread).
pub fn host_calls(t: &Tables) -> Vec<HostCalls> {
    let mut out: Vec<HostCalls> = (0..t.files.len()).map(|_| HostCalls::default()).collect();
    let mut memo: FxHashMap<StrId, Call> = FxHashMap::default();
    const DEVICE: usize = usize::MAX;
    let file_of_thread: Vec<usize> = (0..t.threads.len() as u32)
        .map(ThreadId)
        .map(|th| {
            if t.thread_is_device_side(th) {
                DEVICE
            } else {
                t.thread_file(th).idx()
            }
        })
        .collect();
    for i in 0..t.events.len() {
        let c = t.events.category[i];
        if c.is_device() || c == Category::VendorOverlap {
            continue;
        }
        let f = file_of_thread[t.events.thread[i].idx()];
        if f == DEVICE {
            continue;
        }
        let h = &mut out[f];
        let (s, e) = (t.events.ts_ns[i], t.events.end_ns(i));
        h.span = Some(h.span.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
        if c != Category::HostOp {
            continue;
        }
        let name = t.events.name[i];
        match *memo.entry(name).or_insert_with(|| classify(t.str(name))) {
            Call::GraphLaunch => h.graph_launches.push(i as u32),
            Call::Launch => h.launches.push(i as u32),
            c @ (Call::CaptureBegin | Call::CaptureEnd) => h.captures.push((i, c)),
            Call::Other => {}
        }
    }
    for h in &mut out {
        h.graph_launches
            .sort_by_key(|&i| (t.events.ts_ns[i as usize], i));
        h.launches.sort_by_key(|&i| (t.events.ts_ns[i as usize], i));
    }
    out
}

/// The file's capture windows, the launches recorded in each, the ops that issued them (names,
/// for `captured_ops`) and each window as [`Recorded`] launches (tokens, labels, connection ids).
pub struct Captures {
    pub windows: Vec<Iv>,
    pub launches: Vec<Vec<u32>>,
    pub ops: Vec<Vec<String>>,
    pub recorded: Vec<Recorded>,
}

pub fn captures_of(t: &Tables, f: usize, hc: &HostCalls, nf: usize, s: &mut Strings) -> Captures {
    let mut spans = vec![None; nf];
    spans[f] = hc.span;
    // (start, end, the begin call's graph id and process).
    let mut windows: Vec<(i64, i64)> = capture_windows(t, &hc.captures, &spans)
        .into_values()
        .flatten()
        .filter(|w| w.file == f)
        .map(|w| (w.start, w.end))
        .collect();
    windows.sort_unstable();
    // Launches by start: each window takes the ones inside it (a binary search, not a scan).
    let launches: Vec<Vec<u32>> = windows
        .iter()
        .map(|&(ws, we)| {
            let from = hc
                .launches
                .partition_point(|&l| t.events.ts_ns[l as usize] < ws);
            hc.launches[from..]
                .iter()
                .copied()
                .take_while(|&l| t.events.ts_ns[l as usize] <= we)
                .filter(|&l| iv(t, l).1 <= we)
                .collect()
        })
        .collect();
    let all: Vec<u32> = launches.iter().flatten().copied().collect();
    let labels = labels(t, &all, s);
    let names: Vec<String> = labels.iter().map(|l| s.get(l.op).to_string()).collect();
    let begins: Vec<(i64, i64, u32)> = hc
        .captures
        .iter()
        .filter(|c| c.1 == Call::CaptureBegin)
        .map(|&(i, _)| (t.events.ts_ns[i], t.events.graph_id.at(i), i as u32))
        .collect();
    let mut k = 0;
    let mut ops = Vec::with_capacity(windows.len());
    let mut recorded = Vec::with_capacity(windows.len());
    for (w, ls) in windows.iter().zip(&launches) {
        ops.push(names[k..k + ls.len()].to_vec());
        let begin = begins.iter().find(|b| b.0 == w.0);
        recorded.push(Recorded {
            start_ns: w.0,
            end_ns: w.1,
            pid: begin.map_or(-1, |b| pid(t, b.2)),
            graph: begin.map_or(-1, |b| b.1),
            tokens: ls.iter().map(|&l| launch_token(t, l, s)).collect(),
            labels: labels[k..k + ls.len()].to_vec(),
            conns: ls
                .iter()
                .map(|&l| t.events.connection_id.at(l as usize))
                .collect(),
        });
        k += ls.len();
    }
    Captures {
        windows,
        launches,
        ops,
        recorded,
    }
}

/// The OS process id of event `i`'s process (-1 when its pid is not a number).
pub fn pid(t: &Tables, i: u32) -> i64 {
    t.processes.pid[t.event_process(i as usize).idx()]
}

/// A launch call as a token: its kind from the API (`Node@launch` launches any kind), its
/// kernel from `events.launched` (HIP `args.kernel`, Ascend `item_id`; none on CUDA).
pub fn launch_token(t: &Tables, l: u32, s: &mut Strings) -> Token {
    let name = t.str(t.events.name[l as usize]);
    let kind = if name == "Node@launch" {
        ANY
    } else if name.contains("Memset") {
        SET
    } else if name.contains("Memcpy") {
        COPY
    } else {
        KERNEL
    };
    let k = t.events.launched.at(l as usize);
    Token {
        kind,
        name: if k == StrId::EMPTY {
            NO_NAME
        } else {
            s.of(t, k)
        },
    }
}

/// A device event as a token: copies and sets by their category and name, else a kernel.
pub fn device_token(t: &Tables, i: u32, s: &mut Strings) -> Token {
    let name = t.str(t.events.name[i as usize]);
    let kind = if t.events.category[i as usize] == Category::DataMovement {
        if name.contains("Memset") || t.str(t.events.cat.at(i as usize)) == "gpu_memset" {
            SET
        } else {
            COPY
        }
    } else {
        KERNEL
    };
    Token {
        kind,
        name: s.of(t, t.events.name[i as usize]),
    }
}

/// The ops around each call: [`enclosing_ops`] as the op, the innermost `nn.Module` frame and
/// the innermost Python frame outside torch.
pub fn labels(t: &Tables, calls: &[u32], s: &mut Strings) -> Vec<Label> {
    let ops = enclosing_ops(t, calls);
    let modules = enclosing_of(t, calls, Category::PythonFunction, is_module);
    let frames = enclosing_of(t, calls, Category::PythonFunction, is_user_frame);
    let name = |o: Option<u32>, s: &mut Strings| {
        o.map_or(NO_NAME, |i| s.opt(t.str(t.events.name[i as usize])))
    };
    ops.iter()
        .zip(modules.into_iter().zip(frames))
        .map(|(op, (m, f))| Label {
            op: s.opt(op),
            module: name(m, s),
            frame: name(f, s),
        })
        .collect()
}

/// A Kineto `nn.Module: <Name>_<n>` frame.
fn is_module(n: &str) -> bool {
    n.starts_with("nn.Module: ")
}

/// A Python frame of the user's code: not a module marker, a built-in (`<built-in method …>`)
/// or a file of torch itself (`torch/nn/modules/linear.py(125): forward`).
fn is_user_frame(n: &str) -> bool {
    !is_module(n) && !n.starts_with('<') && !n.starts_with("torch/") && !n.contains("/torch/")
}

/// The innermost host op enclosing each call on its OS thread (same file and tid: torch_npu
/// writes a thread's framework ops and its CANN calls under two processes), not itself a
/// launch, replay or capture call, nor a `key=value` serving marker (`decode_actual_batch_size=4`
/// names a batch, not an op); the innermost Python frame when no op encloses it; by name, empty
/// when none.
pub fn enclosing_ops(t: &Tables, calls: &[u32]) -> Vec<String> {
    let op = |n: &str| classify(n) == Call::Other && !n.contains('=');
    let mut out: Vec<String> = enclosing_of(t, calls, Category::HostOp, op)
        .into_iter()
        .map(|o| o.map_or(String::new(), |i| t.str(t.events.name[i as usize]).into()))
        .collect();
    let missing: Vec<usize> = (0..calls.len()).filter(|&k| out[k].is_empty()).collect();
    if !missing.is_empty() {
        let sub: Vec<u32> = missing.iter().map(|&k| calls[k]).collect();
        let frames = enclosing_of(t, &sub, Category::PythonFunction, |_| true);
        for (k, f) in missing.into_iter().zip(frames) {
            if let Some(i) = f {
                out[k] = t.str(t.events.name[i as usize]).into();
            }
        }
    }
    out
}

/// An op's (start, end, event row).
type Open = (i64, i64, u32);

/// The innermost event of `category` whose name passes `keep` enclosing each call on its OS
/// thread (file and tid). The calls' (file, tid) keys are numbered once, and each thread of the
/// tables gets its key's number up front, so the pass over every event looks up a thread's
/// number, not a map; no calls, no pass.
fn enclosing_of(
    t: &Tables,
    calls: &[u32],
    category: Category,
    keep: impl Fn(&str) -> bool,
) -> Vec<Option<u32>> {
    let mut out = vec![None; calls.len()];
    if calls.is_empty() {
        return out;
    }
    let key = |th: ThreadId| (t.thread_file(th), t.threads.tid[th.idx()]);
    let mut group: FxHashMap<(FileId, i64), u32> = FxHashMap::default();
    let mut by_thread: Vec<Vec<usize>> = Vec::new();
    for (k, &c) in calls.iter().enumerate() {
        let g = *group
            .entry(key(t.events.thread[c as usize]))
            .or_insert_with(|| {
                by_thread.push(Vec::new());
                by_thread.len() as u32 - 1
            });
        by_thread[g as usize].push(k);
    }
    // Each thread's group; none for device-side threads or (file, tid)s without calls.
    const NONE: u32 = u32::MAX;
    let thread_group: Vec<u32> = (0..t.threads.len() as u32)
        .map(ThreadId)
        .map(|th| {
            if t.thread_is_device_side(th) {
                NONE
            } else {
                group.get(&key(th)).copied().unwrap_or(NONE)
            }
        })
        .collect();
    let mut ops: Vec<Vec<Open>> = vec![Vec::new(); by_thread.len()];
    let mut memo: FxHashMap<StrId, bool> = FxHashMap::default();
    for i in 0..t.events.len() {
        if t.events.category[i] != category {
            continue;
        }
        let g = thread_group[t.events.thread[i].idx()];
        if g == NONE {
            continue;
        }
        let name = t.events.name[i];
        if *memo.entry(name).or_insert_with(|| keep(t.str(name))) {
            let (s, e) = iv(t, i as u32);
            ops[g as usize].push((s, e, i as u32));
        }
    }
    for (mut ks, mut v) in by_thread.into_iter().zip(ops) {
        // By start, outer (longer) first; a stack sweep keeps the ops open at each call.
        v.sort_by_key(|x| (x.0, std::cmp::Reverse(x.1)));
        ks.sort_by_key(|&k| t.events.ts_ns[calls[k] as usize]);
        let mut stack: Vec<Open> = Vec::new();
        let mut j = 0;
        for k in ks {
            let (cs, ce) = iv(t, calls[k]);
            while j < v.len() && v[j].0 <= cs {
                while stack.last().is_some_and(|o| o.1 < v[j].0) {
                    stack.pop();
                }
                stack.push(v[j]);
                j += 1;
            }
            while stack.last().is_some_and(|o| o.1 < ce) {
                stack.pop();
            }
            out[k] = stack.last().map(|o| o.2);
        }
    }
    out
}
