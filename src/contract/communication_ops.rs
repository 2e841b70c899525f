//! The report contract of `analysis::communication_ops`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/communication_ops.rs`.

use super::*;
use crate::model::closed_set::closed_set;
use serde::{Deserialize, Serialize};

/// How much lower (absolute) a rank's wait ratio must be than every other's to call it slow.
pub const SLOW_RANK_MARGIN: f64 = 0.1;
/// The slow rank by wait ratio is named only when every rank has at least this many collective
/// ops: a ratio over two or three ops is one accident, not a pattern.
pub const SLOW_RANK_MIN_OPS: u64 = 5;

closed_set! {
    /// A link type bytes are counted under.
    pub enum LinkType {
        Rdma = "RDMA",
        Hccs = "HCCS",
        Pcie = "PCIE",
        /// The sum of the on-node links (HCCS + PCIE + SIO + other).
        Sdma = "SDMA",
        Sio = "SIO",
    }
}

closed_set! {
    /// Which op of a link-matrix group a cell shows: by bandwidth over the ops of one type and
    /// link, the fastest, the middle one, the three slowest, or all of them.
    pub enum BandwidthRank {
        Top1 = "top1",
        Middle = "middle",
        Bottom1 = "bottom1",
        Bottom2 = "bottom2",
        Bottom3 = "bottom3",
        Total = "total",
    }
}

/// Time split of one op (or a sum of ops) on its master plane.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct OpTimes {
    pub elapsed_ns: i64,
    pub transit_ns: i64,
    pub wait_ns: i64,
    /// Waits before the first transit (waiting for the peers to arrive).
    pub synchronization_ns: i64,
    /// elapsed − transit − wait.
    pub idle_ns: i64,
}

/// Bytes and time moved over one link type.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Band {
    pub link: LinkType,
    pub size_bytes: i64,
    pub time_ns: i64,
    /// Decimal GB/s (MB / ms); 0 when no time.
    pub bandwidth_gb_s: f64,
    /// Share of packets above the large-packet size (32 MB on SDMA links, 0.5 MB on RDMA).
    pub large_packet_ratio: f64,
    /// Per packet size: (size bytes, count, total time ns), by size. Empty for SDMA (a sum).
    pub sizes: Vec<(i64, u64, i64)>,
}

/// One collective op on one rank.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommOp {
    pub name: String,
    /// Step number of the host step the op started in; None when the file has no steps.
    pub step: Option<i64>,
    pub start_ns: i64,
    /// The time split (always present: ops without plane tasks are only counted).
    pub times: Option<OpTimes>,
    pub wait_ratio: Option<f64>,
    pub synchronization_ratio: Option<f64>,
    /// The plane the time split was read from.
    pub master_plane: Option<i32>,
    pub plane_tasks: u64,
    /// Per link type, the five of [`BANDS`] in order.
    pub bandwidth: Vec<Band>,
}

/// Sums over the ops of one step (the vendor's "Total Op Info").
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepTotal {
    pub step: Option<i64>,
    pub ops: u64,
    pub times: OpTimes,
    pub wait_ratio: f64,
    pub synchronization_ratio: f64,
    pub bandwidth: Vec<Band>,
}

/// One cell of the link matrix.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MatrixCell {
    /// The step, or None for a capture without steps or with more than top N steps (the cells
    /// then rank the ops of the whole capture).
    pub step: Option<i64>,
    /// Op type in lower case (`allreduce`).
    pub op_type: String,
    pub rank_by_bandwidth: BandwidthRank,
    /// The op, for all but `total`.
    pub op: Option<String>,
    pub src_rank: i64,
    pub dst_rank: i64,
    /// LOCAL (on chip), HCCS, PCIE, SIO, RDMA, ...
    pub transport: String,
    pub size_bytes: i64,
    pub time_ns: i64,
    pub bandwidth_gb_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeviceCommOps {
    pub device: DeviceRef,
    /// Where the numbers come from when not recomputed from HCCL plane tasks:
    /// `communication.json` (the vendor's split, for a CSV-only text export); null otherwise.
    pub source: Option<String>,
    /// Collective ops of the device's file.
    pub ops_total: u64,
    /// HCCL plane tasks matched to those ops.
    pub plane_tasks: u64,
    /// Ops without plane tasks with details (Level0 captures write placeholders): times unknown.
    pub ops_without_tasks: u64,
    /// Ops with RDMA tasks, whose grouping rule is not checked on a real capture yet.
    pub ops_with_rdma: u64,
    /// The slowest ops with plane tasks by elapsed time, at most top N.
    pub slowest: Vec<CommOp>,
    pub steps: Vec<StepTotal>,
    /// Over every op with plane tasks.
    pub total: StepTotal,
    pub matrix: Vec<MatrixCell>,
}

/// Run-level verdicts over the devices.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CommOpsSummary {
    /// Per rank, the wait ratio of all its collectives: (rank, wait / (wait + transit)).
    pub wait_ratios: Vec<(i32, f64)>,
    /// The rank the others wait for: its wait ratio is at least [`SLOW_RANK_MARGIN`] below every
    /// other rank's, every rank having at least [`SLOW_RANK_MIN_OPS`] collectives. None with one
    /// rank, fewer ops, or when ranks wait alike.
    pub slow_rank: Option<i32>,
    /// The off-chip link with the lowest bandwidth over all its transfers, and its rank.
    pub slow_link: Option<MatrixCell>,
    pub slow_link_rank: Option<i32>,
    /// Median bandwidth of the off-chip links of the same transport, for scale.
    pub median_link_gb_s: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CommunicationOps {
    pub devices: Vec<DeviceCommOps>,
    pub summary: CommOpsSummary,
}
