//! Host calls as graph mode, the evidence and the bubbles see them: launches (kernels, copies,
//! sets), graph replays (`cudaGraphLaunch`, `hipGraphLaunch`, `aclmdlRIExecuteAsync`),
//! stream-capture windows (`cudaStreamBeginCapture` .. `cudaStreamEndCapture` on one thread;
//! Ascend `aclmdlRICaptureBegin` .. `aclmdlRICaptureEnd` in one process), the calls that block
//! the host until device work completes (`blocks_host`), and which events are the host's
//! (`is_host_event`: what a file's host window spans). Names and sources:
//! docs/formats/graph-mode.md, docs/analyses/bubbles.md.

use crate::model::hash::FxHashMap;
use crate::model::{Category, Tables};

/// What a host call is to the evidence.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Other,
    /// Launches device work that carries its link id.
    Launch,
    /// Replays a graph.
    GraphLaunch,
    CaptureBegin,
    CaptureEnd,
}

/// The API name without the Ascend level prefix (`AscendCL@aclmdlRICaptureBegin`).
pub fn api(name: &str) -> &str {
    name.rsplit('@').next().unwrap_or(name)
}

pub fn classify(name: &str) -> Call {
    if name == "Node@launch" {
        return Call::Launch;
    }
    let a = api(name);
    match a {
        "cudaGraphLaunch"
        | "hipGraphLaunch"
        | "cuGraphLaunch"
        | "aclmdlRIExecuteAsync"
        | "aclmdlRIExecute" => return Call::GraphLaunch,
        "aclmdlRICaptureBegin" => return Call::CaptureBegin,
        "aclmdlRICaptureEnd" => return Call::CaptureEnd,
        _ => {}
    }
    let runtime = a.starts_with("cuda") || a.starts_with("hip") || a.starts_with("cu");
    if !runtime {
        return Call::Other;
    }
    if [
        "cudaStreamBeginCapture",
        "hipStreamBeginCapture",
        "cuStreamBeginCapture",
    ]
    .iter()
    .any(|p| a.starts_with(p))
    {
        return Call::CaptureBegin;
    }
    if [
        "cudaStreamEndCapture",
        "hipStreamEndCapture",
        "cuStreamEndCapture",
    ]
    .iter()
    .any(|p| a.starts_with(p))
    {
        return Call::CaptureEnd;
    }
    let launches = a.contains("LaunchKernel")
        || a.contains("LaunchCooperativeKernel")
        || a.contains("Memcpy")
        || a.contains("Memset");
    if launches && !a.contains("HostFunc") {
        Call::Launch
    } else {
        Call::Other
    }
}

/// True for the Ascend spelling: captures bind a stream, and launches may come from the task
/// queue's thread, so its windows hold for the whole process.
pub fn process_wide(name: &str) -> bool {
    api(name).starts_with("aclmdlRI")
}

/// A capture window: its file and time span.
pub struct Window {
    pub file: usize,
    pub start: i64,
    pub end: i64,
}

/// The scope a capture call binds: (true, process) for Ascend, (false, thread) otherwise.
pub type ScopeKey = (bool, u32);

pub fn scope_of(t: &Tables, i: usize, process_wide: bool) -> ScopeKey {
    if process_wide {
        (true, t.event_process(i).0)
    } else {
        (false, t.events.thread[i].0)
    }
}

/// Begin..end pairs per scope, by start: each begin closes at the first end after it in the
/// same scope (an end without a begin is ignored; a begin without an end runs to the file's
/// last host event).
pub fn capture_windows(
    t: &Tables,
    calls: &[(usize, Call)],
    host_span: &[Option<(i64, i64)>],
) -> FxHashMap<ScopeKey, Vec<Window>> {
    let mut by_scope: FxHashMap<ScopeKey, Vec<(i64, i64, Call, usize)>> = FxHashMap::default();
    for &(i, c) in calls {
        let key = scope_of(t, i, process_wide(t.str(t.events.name[i])));
        by_scope
            .entry(key)
            .or_default()
            .push((t.events.ts_ns[i], t.events.end_ns(i), c, i));
    }
    let mut out: FxHashMap<ScopeKey, Vec<Window>> = FxHashMap::default();
    for (key, mut v) in by_scope {
        v.sort_by_key(|x| (x.0, x.1));
        let mut open: Option<(i64, usize)> = None;
        let mut ws = Vec::new();
        for (s, e, c, i) in v {
            match (c, open) {
                (Call::CaptureBegin, None) => open = Some((s, t.event_file(i).idx())),
                (Call::CaptureEnd, Some((b, f))) => {
                    ws.push(Window {
                        file: f,
                        start: b,
                        end: e,
                    });
                    open = None;
                }
                _ => {}
            }
        }
        if let Some((b, f)) = open {
            ws.push(Window {
                file: f,
                start: b,
                end: i64::MAX,
            });
        }
        out.insert(key, ws);
    }
    for ws in out.values_mut() {
        for w in ws.iter_mut().filter(|w| w.end == i64::MAX) {
            w.end = host_span[w.file].map_or(w.start, |s| s.1.max(w.start));
        }
    }
    out
}

/// True for a host-side event: neither a device task nor the vendor's overlap rows, nor on a
/// device process. A file's host window is the first start to the last end of these.
pub fn is_host_event(t: &Tables, i: usize) -> bool {
    let c = t.events.category[i];
    !(c.is_device() || c == Category::VendorOverlap || t.event_is_device_side(i))
}

/// True for a host API call that returns only when device work has completed (the CUDA / HIP
/// runtime and driver, Ascend CANN `aclrt*`, level prefix `AscendCL@` dropped): stream, device,
/// context and event synchronisation (`cudaStreamSynchronize`, `hipDeviceSynchronize`,
/// `cuCtxSynchronize`, `aclrtSynchronizeStreamWithTimeout`, …), synchronous copies (`cudaMemcpy`,
/// `cudaMemcpy2D`, `hipMemcpyWithStream`, `cuMemcpyDtoH_v2`, `aclrtMemcpy`: a `Memcpy` without
/// `Async`), frees that synchronise the device (`cudaFree`, `hipFree`, `cuMemFree`), and
/// `cudaStreamWaitEvent` / `hipStreamWaitEvent` / `aclrtStreamWaitEvent` (asynchronous by
/// contract, listed so a call that does hold the host is not missed). Queries
/// (`cudaStreamQuery`, `cudaEventQuery`) poll and return at once: not listed.
pub fn blocks_host(name: &str) -> bool {
    let a = api(name);
    if !is_runtime_api(a) || a.contains("Async") {
        return false;
    }
    a.contains("Synchronize")
        || a.contains("Memcpy")
        || a.contains("StreamWaitEvent")
        || a.ends_with("Free")
        || a.contains("Free_")
}

/// True for a CUDA / HIP runtime or driver call or an Ascend `aclrt*` call (level prefix
/// dropped): `cudaLaunchKernel`, `cuCtxSynchronize`, `hipMemcpyWithStream`,
/// `AscendCL@aclrtMemcpy`; not `aten::copy_` nor `cudnn*`.
pub fn is_runtime_api(name: &str) -> bool {
    let a = api(name);
    ["cuda", "cu", "hip", "aclrt"].iter().any(|p| {
        a.len() > p.len() && a.starts_with(p) && a.as_bytes()[p.len()].is_ascii_uppercase()
    })
}

/// True when launch `i` lies inside a capture window of its thread or process.
pub fn captured(t: &Tables, windows: &FxHashMap<ScopeKey, Vec<Window>>, i: usize) -> bool {
    let (s, e) = (t.events.ts_ns[i], t.events.end_ns(i));
    [true, false].iter().any(|&wide| {
        windows.get(&scope_of(t, i, wide)).is_some_and(|ws| {
            // A scope's windows are disjoint and by start (paired in time order): the one
            // that could hold the launch is the last starting at or before it.
            let k = ws.partition_point(|w| w.start <= s);
            k > 0 && e <= ws[k - 1].end
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the issue 58 list, as the shared real traces spell them (Kineto
    /// `cuda_runtime` / `cuda_driver`, torch_npu `AscendCL@` CANN rows), and look-alikes that do
    /// not block.
    #[test]
    fn blocking_calls_are_named_by_their_api() {
        for name in [
            "cudaStreamSynchronize",
            "cudaDeviceSynchronize",
            "cudaEventSynchronize",
            "cudaStreamWaitEvent",
            "cudaMemcpy",
            "cudaMemcpy2D",
            "cudaFree",
            "cuCtxSynchronize",
            "cuMemcpyDtoH_v2",
            "cuMemFree_v2",
            "hipMemcpyWithStream",
            "hipDeviceSynchronize",
            "hipStreamSynchronize",
            "AscendCL@aclrtSynchronizeStreamWithTimeout",
            "AscendCL@aclrtSynchronizeDevice",
            "aclrtSynchronizeEvent",
            "AscendCL@aclrtMemcpy",
        ] {
            assert!(blocks_host(name), "{name}");
        }
        for name in [
            "cudaMemcpyAsync",
            "hipMemcpyAsync",
            "AscendCL@aclrtMemcpyAsync",
            "cudaFreeAsync",
            "cudaStreamQuery",
            "cudaEventQuery",
            "cudaLaunchKernel",
            "cudaFreeHost",
            "aten::copy_",
            "aten::item",
            "cudnnConvolutionForward",
            "Memcpy HtoD (Host -> Device)",
        ] {
            assert!(!blocks_host(name), "{name}");
        }
    }
}
