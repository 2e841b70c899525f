//! The report contract of `analysis::evidence`: what each input file can support (launch
//! coverage, stream captures, how much of the host's window the device covered, the vendor's
//! step numbers in it), and the run's verdict with its status and reasons
//! (docs/evidence.md). The computation lives in `analysis/evidence.rs`.

use crate::model::closed_set::closed_set;
use serde::{Deserialize, Serialize};

/// What one input file holds as evidence.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FileEvidence {
    pub file: String,
    /// -1 when unknown.
    pub rank: i32,
    /// Host-side timed events (ops, runtime / CANN calls, annotations).
    pub host_events: u64,
    /// Device events (kernels, collectives, copies, waits) of device processes.
    pub device_events: u64,
    /// First start to last end of the host events, ns (0 without host events).
    pub host_window_ns: i64,
    /// First start to last end of the device events, ns (0 without device events).
    pub device_window_ns: i64,
    /// Host calls that launch device work: kernel launches (`cudaLaunchKernel`, `hipLaunchKernel`,
    /// Ascend `Node@launch`, ...), async copies and sets, graph launches (`cudaGraphLaunch`).
    pub launches: u64,
    /// First start to last end of the executed launches (not captured), ns: the window in which
    /// the host asked for device work.
    pub launch_window_ns: i64,
    /// Launches whose link id (Kineto correlation, Ascend connection id) is on a device event of
    /// the file.
    pub launches_with_device_work: u64,
    /// Graph replays issued from the host: `cudaGraphLaunch`, `hipGraphLaunch`,
    /// `aclmdlRIExecuteAsync` (counted within `launches` for Kineto only: an Ascend replay's
    /// tasks carry their capture-time connection ids).
    pub graph_launches: u64,
    /// Device events replayed from a graph: Kineto events carrying a graph launch's correlation
    /// id, Ascend tasks with a graph `Model Id` (analysis::graph_mode has the replays).
    pub replay_device_events: u64,
    /// Stream-capture windows: `cudaStreamBeginCapture` / `hipStreamBeginCapture` /
    /// `aclmdlRICaptureBegin` to the matching end call on the same thread (Ascend: process);
    /// a begin without an end runs to the end of the file.
    pub capture_windows: u64,
    /// Launches inside a capture window: recorded into a graph, never executed.
    pub captured_launches: u64,
    /// Time inside capture windows, ns.
    pub capture_ns: i64,
    /// The vendor's own per-step numbers in the input (analysis.db StepTraceTime,
    /// step_trace_time.csv), for the self-audit.
    pub vendor_steps: Vec<VendorStep>,
    /// Vendor step rows that repeat a step number already in `vendor_steps` (same source):
    /// folded, not compared again.
    #[serde(default)]
    pub vendor_steps_folded: u64,
    /// The vendor's collective totals per step (communication.json `Total Op Info` of the
    /// `collective` ops; analysis.db CommAnalyzerTime's collective rows summed per step), for
    /// the self-audit of the collective-op depth.
    pub vendor_collectives: Vec<VendorCollectives>,
}

/// communication.json's `Total Op Info` of one step's collective ops, in ns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VendorCollectives {
    /// `communication.json` or `analysis.db CommAnalyzerTime`.
    pub source: String,
    pub step: Option<i64>,
    pub elapsed_ns: i64,
    pub transit_ns: i64,
    pub wait_ns: i64,
}

/// One row of the vendor's step table, in ns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VendorStep {
    /// `analysis.db StepTraceTime` or `step_trace_time.csv`.
    pub source: String,
    /// The step number; None when the vendor wrote the whole capture as one row (empty Step).
    pub step: Option<i64>,
    pub computing_ns: i64,
    pub communication_ns: i64,
    pub communication_not_overlapped_ns: i64,
    pub free_ns: i64,
    /// Time in pipeline receives (`Bubble`: the step's `hcom_receive` ops, torch_npu's
    /// definition); 0 when the table has no such column.
    #[serde(default)]
    pub bubble_ns: i64,
}

closed_set! {
    /// How far a conclusion can be trusted.
    #[derive(Default)]
    pub enum Status {
        /// Every coverage signal passed.
        #[default]
        Confident = "confident",
        /// Stated, with the reasons that weaken it.
        Qualified = "qualified",
        /// Not stated: the input cannot support it.
        Withheld = "withheld",
    }
}

closed_set! {
    /// Why a verdict is qualified or withheld (a stable code; the detail is for people).
    pub enum ReasonCode {
        /// No device event in any input.
        NoDeviceActivity = "no_device_activity",
        /// Launches recorded into a graph during stream capture make up the trace.
        GraphCapture = "graph_capture",
        /// Some launches were recorded into a graph (a capture beside executed work).
        PartialGraphCapture = "partial_graph_capture",
        /// Too few host launches have their device work in the trace.
        LaunchCoverageLow = "launch_coverage_low",
        /// The device events cover a sliver of the host's window.
        DeviceSliver = "device_sliver",
        /// The vendor's own numbers in the input disagree with ours.
        VendorDisagreement = "vendor_disagreement",
        /// The export holds a fraction of the device work its own step table counts.
        ExportIncomplete = "export_incomplete",
        /// A verdict that rests on idle whose idle the trace mostly does not explain.
        IdleUnexplained = "idle_unexplained",
        /// A rank's file ended mid-event.
        TruncatedInput = "truncated_input",
        /// Ranks expected by the run are missing.
        MissingRanks = "missing_ranks",
        /// Ranks whose windows overlap no other rank's: their clocks cannot be compared.
        ClockDisjoint = "clock_disjoint",
        /// Ranks whose clocks cannot be tied to the reference rank's (too few shared
        /// collectives): arrival claims are not made.
        ClockUnverified = "clock_unverified",
    }
}

closed_set! {
    /// Which part of the report a reason weakens.
    pub enum Scope {
        /// The bound verdict, the bubble causes and everything after them.
        Run = "run",
        /// Claims about ranks (slowest, arrives latest, waited for).
        CrossRank = "cross_rank",
    }
}

/// One reason a verdict is not confident.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reason {
    pub code: ReasonCode,
    pub scope: Scope,
    /// `qualified` or `withheld`.
    pub effect: Status,
    /// In words a performance engineer reads, with the numbers.
    pub detail: String,
    /// Files, ranks or devices the reason rests on (at most a few, then `…`).
    pub evidence: Vec<String>,
}

/// The run's coverage signals, summed over its files.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Coverage {
    pub files: u64,
    pub device_events: u64,
    pub launches: u64,
    pub launches_with_device_work: u64,
    /// Percent of executed launches (launches − captured) with device work; None without
    /// launches.
    pub launch_coverage_pct: Option<f64>,
    pub graph_launches: u64,
    pub capture_windows: u64,
    pub captured_launches: u64,
    /// The smallest per-file device window as a percent of that file's host window (files
    /// with device events and a host window of 1 ms to 1 h); None when no file qualifies.
    pub min_device_window_pct_of_host: Option<f64>,
    /// Devices the self-audit checked against a vendor number, of all devices.
    pub vendor_devices_checked: u64,
    pub vendor_devices_total: u64,
    /// Ranks whose windows overlap no other rank's.
    pub ranks_disjoint: Vec<i32>,
}

/// The run's verdict: what it is, how sure, and why.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Verdict {
    /// The bound verdict and the bubble causes.
    pub status: Status,
    /// `compute-bound`, `communication-bound`, `idle-bound`, `host-bound` or `mixed`; None when
    /// withheld or without a device timeline.
    pub kind: Option<String>,
    /// The rule that decides `kind`.
    pub rule: String,
    /// Claims about ranks: at best `status`, withheld on disjoint clocks.
    pub cross_rank_status: Status,
    /// One line: the status and the first reason, the headline's first line when not confident.
    pub statement: String,
    pub reasons: Vec<Reason>,
    pub coverage: Coverage,
}
