//! The report contract of `analysis::efficiency`: how well each device's compute time is used
//! (FLOPs, bytes, achieved throughput, MFU, roofline class and time lost per operator), serialized
//! into the JSON report (docs/json-output.md, docs/analyses/efficiency.md). The computation lives
//! in `analysis/efficiency/`.

use super::devices::DeviceRef;
use crate::model::closed_set::closed_set;
use serde::{Deserialize, Serialize};

closed_set! {
    /// The operator family an op's work model belongs to.
    pub enum Family {
        /// Matrix multiplications (MatMul*, BatchMatMul*, quantized / grouped matmuls;
        /// aten::mm / addmm / bmm / baddbmm / matmul / linear / _scaled_mm).
        Matmul = "matmul",
        /// Attention (FlashAttentionScore(+Grad), IncreFlashAttention, PromptFlashAttention,
        /// FusedInferAttentionScore, ATB PagedAttention; scaled_dot_product_attention and flash
        /// ops).
        Attention = "attention",
        /// Convolutions (Conv2D and its backprops; aten::convolution).
        Conv = "conv",
        /// Elementwise ops: bytes only.
        Elementwise = "elementwise",
        /// Normalizations, softmax and reductions: bytes only.
        Norm = "norm",
        /// Layout changes and copies (TransData, Transpose, Concat, Gather, copy_): bytes only.
        DataMovement = "data_movement",
    }
}

closed_set! {
    /// What limits an op on the roofline.
    #[derive(Default)]
    pub enum Roofline {
        /// Arithmetic intensity at or above the ridge point (peak / bandwidth).
        Compute = "compute",
        /// Arithmetic intensity below the ridge point.
        Memory = "memory",
        /// So little work per call that even at the roofline a call would take under
        /// [`LATENCY_NS`]: fixed costs (launch, pipeline fill) dominate, not the chip's roofs.
        Latency = "latency",
        /// A roof the class needs is not known (no peak or no bandwidth for the dtype).
        #[default]
        Unknown = "unknown",
    }
}

closed_set! {
    /// Where a device's peaks come from.
    #[derive(Default)]
    pub enum PeakSource {
        /// Computed from the capture's own chip facts (Ascend: AI cores × AI Core clock × cube
        /// ops per cycle).
        Capture = "capture",
        /// A row of profscope's chip table (vendor datasheet), matched by the device's name.
        Table = "table",
        /// `--peak-tflops` / `--peak-gbps`.
        Override = "override",
        /// None known: every figure that needs a peak says "not estimated".
        #[default]
        None = "none",
    }
}

closed_set! {
    /// Whether a device's work could be modelled at all.
    pub enum EfficiencyStatus {
        /// Some compute tasks have a FLOPs / bytes model.
        Estimated = "estimated",
        /// The capture records no shapes for this device's tasks (Ascend: no kernel details;
        /// Kineto: no `Input Dims`, i.e. `record_shapes` was off).
        NoShapes = "no_shapes",
        /// Shapes exist but no task has a model (every op is `no_model`).
        NoModel = "no_model",
    }
}

/// Ideal time per call below which an op is [`Roofline::Latency`]-bound, ns.
pub const LATENCY_NS: i64 = 5_000;

/// PMU and FLOPs-based cube busy fractions further apart than this (absolute) get a caveat.
pub const PMU_TOLERANCE: f64 = 0.2;

/// The peak of one dtype.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DtypePeak {
    /// `fp16`, `bf16`, `fp32`, `tf32`, `fp8`, `int8`.
    pub dtype: String,
    /// Dense peak, 10^12 FLOP/s (ops/s for int8).
    pub tflops: f64,
    /// How the figure was obtained and where it comes from (URL or vendor source file).
    pub basis: String,
}

/// A device's peaks and where they come from.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Peaks {
    /// The chip as the capture names it (NPU_INFO, Kineto `deviceProperties.name`); empty when
    /// the capture names none.
    pub chip: String,
    /// The chip-table row used (empty when none matched).
    pub table_row: String,
    /// Capture, table, override or none; for the compute peaks.
    pub source: PeakSource,
    /// Ascend: AI (cube) cores and the AI Core clock the capture records; -1 / NaN unknown.
    pub ai_cores: i64,
    pub clock_mhz: f64,
    /// Dense compute peak per dtype (only the dtypes that have one).
    pub tflops: Vec<DtypePeak>,
    /// Peak memory (HBM) bandwidth, 10^9 B/s; None when unknown.
    pub gbps: Option<f64>,
    pub gbps_basis: String,
    /// Why a peak is not estimated (one line each; empty when every peak is known).
    pub not_estimated: Vec<String>,
}

/// One operator class: (op, dtype, shape class) on one device.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpRow {
    /// Op type (Ascend `MatMulV2`) or aten op (`aten::addmm`).
    pub op: String,
    pub family: Family,
    /// The dtype the work is charged to (`fp16`, `bf16`, `fp32`, `int8`, ...).
    pub dtype: String,
    /// The dims the model used (`M=32 N=4096 K=4096`, `B=2 H=32 Sq=4096 Skv=4096 D=128 causal`);
    /// bytes-only ops: the input shapes as written.
    pub shape: String,
    /// Tasks (Ascend) or op instances (Kineto, whose kernels' times are summed).
    pub calls: u64,
    /// Device time of those tasks / kernels, ns.
    pub time_ns: i64,
    /// FLOPs over all calls (0 for bytes-only families).
    pub flops: u64,
    /// Bytes moved over all calls: every input read once, every output written once.
    pub bytes: u64,
    pub achieved_tflops: f64,
    pub achieved_gbps: f64,
    /// achieved_tflops / the dtype's peak; None when the dtype has no peak or the op no FLOPs.
    pub mfu: Option<f64>,
    /// FLOPs per byte; None when bytes are 0.
    pub intensity: Option<f64>,
    pub roofline: Roofline,
    /// time × (1 − achieved / attainable), attainable = min(peak, intensity × bandwidth): the
    /// time above the roofline (time − max(flops / peak, bytes / bandwidth)), ns; None when a
    /// roof it needs is unknown.
    pub time_lost_ns: Option<i64>,
    /// Ascend: the PMU's time-weighted `aic_mac_ratio` over these tasks (op_metrics), when
    /// measured.
    pub pmu_mac_ratio: Option<f64>,
    /// Ascend: the cube busy fraction the FLOPs imply on the cores the tasks used (FLOPs ÷
    /// (time × min(block dim, AI cores) × cube ops per cycle × clock)); None without a per-cycle
    /// figure for the dtype or a clock.
    pub flops_cube_busy: Option<f64>,
    /// What the figures assume or where they disagree (padded channels, unknown causal mask,
    /// PMU disagreement, above the dtype's peak).
    pub caveats: Vec<String>,
    /// The work model could only bound the work from above (a KV length, causal flag or block
    /// table the capture does not record was taken at its largest): `flops`, `bytes`,
    /// `achieved_tflops`, `achieved_gbps`, `mfu` and `intensity` are upper bounds and
    /// `time_lost_ns` a lower bound, not measurements; the family's `mfu` leaves the row out.
    #[serde(default)]
    pub upper_bound: bool,
}

impl OpRow {
    /// `≤ ` before the row's achieved throughput and MFU when they are upper bounds, else empty.
    pub fn at_most(&self) -> &'static str {
        if self.upper_bound { "≤ " } else { "" }
    }
}

/// Sums over one family (or over the device).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FamilyRow {
    pub family: String,
    pub calls: u64,
    pub time_ns: i64,
    pub flops: u64,
    pub bytes: u64,
    pub achieved_tflops: f64,
    pub achieved_gbps: f64,
    /// Time-weighted MFU over the family's ops that have a peak and exact work (not
    /// [`OpRow::upper_bound`]): Σ flops / peak ÷ Σ time of those ops; None when none has.
    pub mfu: Option<f64>,
    /// The time `mfu` is weighted over, ns.
    pub mfu_time_ns: i64,
    /// Σ time_lost_ns of the ops that have one, ns.
    pub time_lost_ns: i64,
    /// Time and FLOPs of the member ops whose work is only an upper bound
    /// ([`OpRow::upper_bound`]): counted in `time_ns` and `flops`, left out of `mfu`.
    #[serde(default)]
    pub upper_bound_ns: i64,
    #[serde(default)]
    pub upper_bound_flops: u64,
    /// Time by roofline class, ns: compute, memory, latency, unknown.
    pub compute_ns: i64,
    pub memory_ns: i64,
    pub latency_ns: i64,
    pub unknown_ns: i64,
}

/// Tasks without a work model, by op type.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NoModelRow {
    /// Op type (Ascend), the enclosing aten op (Kineto), else the kernel name.
    pub op: String,
    pub calls: u64,
    pub time_ns: i64,
    /// Why (no shapes recorded, no model for this op type, shapes the model cannot read).
    pub reason: String,
}

/// One step's efficiency on one device.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepEfficiency {
    /// `ProfilerStep#N`, `Iteration N` or the forward scope (cross_rank's step windows).
    pub step: String,
    /// Modelled compute time in the step, ns.
    pub time_ns: i64,
    pub flops: u64,
    /// Time-weighted MFU of the step's modelled ops that have a peak and exact work (`flops`
    /// and `time_ns` include the upper-bound ops).
    pub mfu: Option<f64>,
    /// Σ time − roofline time of the step's ops whose roofline time is known, ns; None when none
    /// is.
    pub time_lost_ns: Option<i64>,
}

/// How the PMU's cube ratios compare with the FLOPs-based figure on a device.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PmuCheck {
    /// Op rows with both a PMU `aic_mac_ratio` and a FLOPs-based cube busy fraction.
    pub compared: u64,
    /// Of those, further apart than [`PMU_TOLERANCE`].
    pub disagree: u64,
    /// Op rows with a PMU ratio but no FLOPs-based figure (no per-cycle peak for the dtype).
    pub pmu_only: u64,
}

/// One device's efficiency.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeviceEfficiency {
    pub device: DeviceRef,
    pub status: EfficiencyStatus,
    pub peaks: Peaks,
    /// Compute tasks (kernels) of the device and their time, ns: the denominator of shares.
    pub tasks: u64,
    pub time_ns: i64,
    /// Of which with a work model.
    pub modeled_tasks: u64,
    pub modeled_time_ns: i64,
    /// Sums over the modelled ops (family `all`).
    pub total: FamilyRow,
    pub families: Vec<FamilyRow>,
    /// Op rows by time lost, then time (the first [`OPS_LISTED`]; `ops_total` counts all).
    pub ops: Vec<OpRow>,
    pub ops_total: u64,
    /// Op types without a model, by time (the first [`OPS_LISTED`]; `no_model_total` counts all).
    pub no_model: Vec<NoModelRow>,
    pub no_model_total: u64,
    /// Per step (empty without step windows).
    pub steps: Vec<StepEfficiency>,
    pub pmu: PmuCheck,
}

/// Op and no-model rows listed per device.
pub const OPS_LISTED: usize = 100;
