//! The report contract of `analysis::bubbles`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/bubbles.rs`.

use super::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One gap holding at least this percent of its device's window gets a headline line saying
/// what spanned it.
pub const DOMINANT_GAP_PCT: f64 = 50.0;

/// Capture edges of at least this percent of the capture (edges + device windows) get a
/// headline line.
pub const CAPTURE_EDGE_HEADLINE_PCT: f64 = 25.0;

crate::model::closed_set::closed_set! {
    /// Why a device was idle: the first rule that holds, in this order (docs/analyses/bubbles.md).
    pub enum Cause {
        UpdateStepContextSync = "update_step_context_sync",
        MtpWait = "mtp_wait",
        HostBlocked = "host_blocked",
        HostDispatch = "host_dispatch",
        WaitingForCollective = "waiting_for_collective",
        Synchronization = "synchronization",
        DataMovement = "data_movement",
        UnlistedWork = "unlisted_work",
        BetweenSteps = "between_steps",
        DeviceScheduling = "device_scheduling",
        Unknown = "unknown",
        /// Not a rule: the host window's edges outside the device window, reported apart
        /// (`DeviceBubbles::capture_edges`), never idle.
        CaptureEdge = "capture_edge",
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Neighbour {
    pub name: String,
    /// Device stream; -1 for a host event.
    pub stream: i32,
    pub ts_ns: i64,
    pub dur_ns: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Gap {
    pub start_ns: i64,
    pub end_ns: i64,
    pub dur_ns: i64,
    pub cause: Cause,
    /// The event that explains the gap: the wait, copy or late launch call, or the step that
    /// ended before it; None for `unknown` and replay-rule `host_dispatch`.
    pub evidence: Option<Neighbour>,
    pub before: Option<Neighbour>,
    pub after: Option<Neighbour>,
    /// The host call that launched the task ending the gap, when linked (see dispatch).
    pub launch: Option<Neighbour>,
    /// launch start − gap start: positive when the host was late.
    pub launch_lag_ns: Option<i64>,
    /// The PyTorch op above that launch call, when known.
    pub launch_op: Option<String>,
    /// For `host_blocked`: what the blocking call (`evidence`) waited for and the frames above
    /// it.
    pub host_block: Option<HostBlock>,
}

/// The synchronous host call that held the host during a gap.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostBlock {
    /// The device task the call waited for: of the kernel whose end opened the gap, the
    /// device's copies, waits and communication tasks in the gap and the tasks that start after
    /// it before the call returns, the one that ended last
    /// before the call returned, when the call returned within 100 µs of it
    /// (`analysis::bubbles::SYNC_RETURN_NS`). None: the call outlived every task of the device:
    /// it waited on work outside the trace (another device, another process, work the
    /// profiler did not record).
    pub waited_for: Option<Neighbour>,
    /// The frames above the call on its thread, innermost first (aten ops, Python functions,
    /// annotations, steps; at most 6): `aten::_local_scalar_dense`, `aten::item`, the Python line.
    pub frames: Vec<String>,
    /// How long the call held the host inside the gap, ns.
    pub overlap_ns: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HistogramBucket {
    /// `[lo_ns, hi_ns)`; hi_ns = -1 means unbounded.
    pub lo_ns: i64,
    pub hi_ns: i64,
    pub count: u64,
    pub total_ns: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CauseTotal {
    pub count: u64,
    pub total_ns: i64,
    pub pct_of_idle: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamIdle {
    pub stream: i32,
    pub tasks: u64,
    pub busy_ns: i64,
    /// Gaps ≥ min_gap between the stream's first and last task.
    pub idle_ns: i64,
    pub gaps: u64,
}

/// Idle inside one decode step: between the replay's first kernel and the end of its last burst
/// (main model and MTP heads). The update_step_context gap before the replay is between steps.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepIdle {
    pub step: u64,
    pub start_ns: i64,
    pub end_ns: i64,
    /// Gaps ≥ min_gap_ns inside the step.
    pub idle_ns: i64,
    pub idle_pct_of_step: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeviceBubbles {
    pub device: DeviceRef,
    pub min_gap_ns: i64,
    pub window_start_ns: i64,
    pub window_end_ns: i64,
    /// `window_end_ns − window_start_ns`, less the time between the pieces of a capture
    /// written in pieces (not observed).
    pub window_ns: i64,
    pub busy_ns: i64,
    /// Sum of gaps ≥ min_gap_ns.
    pub idle_ns: i64,
    /// idle_ns / window_ns, percent.
    pub idle_pct_of_window: f64,
    pub gaps: u64,
    pub histogram: Vec<HistogramBucket>,
    #[serde(deserialize_with = "crate::static_names::name_keys")]
    pub by_cause: BTreeMap<crate::static_names::Name, CauseTotal>,
    /// Idle with cause `unknown` (no evidence), and the share of idle with a named cause.
    pub unknown_ns: i64,
    pub named_pct_of_idle: f64,
    /// `host_blocked` idle whose call waited on work outside the trace (no task of the device
    /// completed before it returned).
    pub host_blocked_outside_ns: i64,
    /// Idle the trace does not explain: `unknown_ns + host_blocked_outside_ns` + the
    /// `unlisted_work` idle (tasks ran that the file does not list), and its share of idle (what
    /// the verdict's `idle_unexplained` reads).
    pub unexplained_ns: i64,
    pub unexplained_pct_of_idle: f64,
    pub largest: Vec<Gap>,
    /// The capture edges (cause `capture_edge`): the host window of the device's file before
    /// the device's first busy instant and after its last, at most one each (evidence: the host
    /// event that opens / closes the host window; the first edge's `launch` is the call that
    /// launched the first task). Not idle: outside `window_ns`, so outside the idle, the shares
    /// and the bound verdict.
    pub capture_edges: Vec<Gap>,
    /// Σ capture_edges[].dur_ns.
    pub capture_edge_ns: i64,
    pub streams: Vec<StreamIdle>,
    /// Per graph-mode decode step (empty without NOTIFY_WAIT / CAPTURE_RECORD steps).
    pub steps: Vec<StepIdle>,
    /// Σ steps[].idle_ns: idle inside steps; idle_ns minus this is idle between steps.
    pub idle_within_steps_ns: i64,
}
