//! Sums per op class, family, step and no-model op type, and the figures derived from them:
//! achieved throughput, MFU, arithmetic intensity, roofline class and time lost. Units: peaks in
//! TFLOPS = 10^3 FLOPs per ns, bandwidth in GB/s = 1 byte per ns.

use crate::contract::Family;
use crate::contract::{
    FamilyRow, LATENCY_NS, NoModelRow, OpRow, PMU_TOLERANCE, Roofline, StepEfficiency,
};

/// One op class's sums on one device.
pub struct OpAcc {
    pub op: String,
    pub family: Family,
    pub dtype: String,
    pub shape: String,
    /// The dtype's compute peak, TFLOPS.
    pub peak: Option<f64>,
    pub calls: u64,
    pub time_ns: i64,
    pub flops: u64,
    pub bytes: u64,
    pub caveats: Vec<String>,
    /// The FLOPs and bytes are upper bounds (`Work::upper_bound`).
    pub upper_bound: bool,
    /// Σ aic_mac_ratio × task time and Σ task time of the PMU rows matched to this class.
    pub pmu: (f64, f64),
    /// Σ seconds the FLOPs need on the cores the tasks used at the cube's rate, and the task
    /// time those tasks took, ns (Ascend, when the per-cycle figure and clock are known).
    pub cube: (f64, i64),
}

impl OpAcc {
    pub fn new(
        op: String,
        family: Family,
        dtype: String,
        shape: String,
        peak: Option<f64>,
    ) -> OpAcc {
        OpAcc {
            op,
            family,
            dtype,
            shape,
            peak,
            calls: 0,
            time_ns: 0,
            flops: 0,
            bytes: 0,
            caveats: Vec::new(),
            upper_bound: false,
            pmu: (0.0, 0.0),
            cube: (0.0, 0),
        }
    }

    /// One call's ideal time on the roofline, ns; None when a roof it needs is unknown.
    pub fn ideal_ns(&self, flops: u64, bytes: u64, gbps: Option<f64>) -> Option<f64> {
        let mem = bytes as f64 / gbps?;
        if flops == 0 {
            return Some(mem);
        }
        Some((flops as f64 / (self.peak? * 1e3)).max(mem))
    }

    pub fn finish(mut self, gbps: Option<f64>) -> OpRow {
        let t = self.time_ns.max(1) as f64;
        let achieved_tflops = self.flops as f64 / t / 1e3;
        let mfu = (self.flops > 0)
            .then_some(self.peak)
            .flatten()
            .map(|p| achieved_tflops / p);
        let calls = self.calls.max(1);
        let ideal = self.ideal_ns(self.flops / calls, self.bytes / calls, gbps);
        let roofline = match ideal {
            None => Roofline::Unknown,
            Some(i) if i < LATENCY_NS as f64 => Roofline::Latency,
            Some(_) if self.flops > 0 && self.compute_bound(gbps) => Roofline::Compute,
            Some(_) => Roofline::Memory,
        };
        let time_lost_ns = ideal.map(|i| {
            (self.time_ns as f64 - i * self.calls as f64)
                .max(0.0)
                .round() as i64
        });
        if self.upper_bound && mfu.is_some_and(|m| m > 1.0) {
            self.caveats.push("the upper bound is above the dtype's peak: the real KV lengths are shorter than the bound".into());
        } else if mfu.is_some_and(|m| m > 1.0) {
            self.caveats.push("above the dtype's peak: the FLOPs model or the peak does not fit this op (fp32 run on TF32 tensor cores?)".into());
        }
        let pmu_mac_ratio = (self.pmu.1 > 0.0).then(|| self.pmu.0 / self.pmu.1);
        let flops_cube_busy = (self.cube.1 > 0).then(|| self.cube.0 * 1e9 / self.cube.1 as f64);
        if let (Some(p), Some(f)) = (pmu_mac_ratio, flops_cube_busy)
            && pmu_disagrees(p, f, self.upper_bound)
        {
            self.caveats.push(format!(
                "PMU aic_mac_ratio {p:.2} vs FLOPs-based cube busy {f:.2} (beyond ±{PMU_TOLERANCE}): the FLOPs model or the cube's per-cycle figure does not fit this kernel"
            ));
        }
        OpRow {
            op: self.op,
            family: self.family,
            dtype: self.dtype,
            shape: self.shape,
            calls: self.calls,
            time_ns: self.time_ns,
            flops: self.flops,
            bytes: self.bytes,
            achieved_tflops,
            achieved_gbps: self.bytes as f64 / t,
            mfu,
            intensity: (self.bytes > 0).then(|| self.flops as f64 / self.bytes as f64),
            roofline,
            time_lost_ns,
            pmu_mac_ratio,
            flops_cube_busy,
            caveats: self.caveats,
            upper_bound: self.upper_bound,
        }
    }

    /// Intensity at or above the ridge point (peak / bandwidth).
    fn compute_bound(&self, gbps: Option<f64>) -> bool {
        match (self.peak, gbps) {
            (Some(p), Some(b)) if self.bytes > 0 => {
                self.flops as f64 / self.bytes as f64 >= p * 1e3 / b
            }
            (Some(_), _) => true,
            _ => false,
        }
    }
}

/// Whether the PMU's cube ratio `p` and the FLOPs-based cube busy `f` disagree beyond
/// [`PMU_TOLERANCE`]; when `f` is an upper bound only a PMU ratio above it does.
pub fn pmu_disagrees(p: f64, f: f64, upper_bound: bool) -> bool {
    if upper_bound {
        p - f > PMU_TOLERANCE
    } else {
        (p - f).abs() > PMU_TOLERANCE
    }
}

/// Sums of op rows into a family row (`family` is its name; `all` for the device total).
pub fn family_row(family: &str, ops: &[&OpRow]) -> FamilyRow {
    let mut f = FamilyRow {
        family: family.to_string(),
        ..Default::default()
    };
    let mut compute_ideal = 0.0;
    for o in ops {
        f.calls += o.calls;
        f.time_ns += o.time_ns;
        f.flops = f.flops.saturating_add(o.flops);
        f.bytes = f.bytes.saturating_add(o.bytes);
        if o.upper_bound {
            f.upper_bound_ns += o.time_ns;
            f.upper_bound_flops = f.upper_bound_flops.saturating_add(o.flops);
        } else if let Some(m) = o.mfu {
            compute_ideal += m * o.time_ns as f64;
            f.mfu_time_ns += o.time_ns;
        }
        f.time_lost_ns += o.time_lost_ns.unwrap_or(0);
        match o.roofline {
            Roofline::Compute => f.compute_ns += o.time_ns,
            Roofline::Memory => f.memory_ns += o.time_ns,
            Roofline::Latency => f.latency_ns += o.time_ns,
            Roofline::Unknown => f.unknown_ns += o.time_ns,
        }
    }
    let t = f.time_ns.max(1) as f64;
    f.achieved_tflops = f.flops as f64 / t / 1e3;
    f.achieved_gbps = f.bytes as f64 / t;
    f.mfu = (f.mfu_time_ns > 0).then(|| compute_ideal / f.mfu_time_ns as f64);
    f
}

/// Tasks without a model under one name.
pub struct NoModelAcc {
    pub op: String,
    pub reason: &'static str,
    pub calls: u64,
    pub time_ns: i64,
}

impl NoModelAcc {
    pub fn finish(self) -> NoModelRow {
        NoModelRow {
            op: self.op,
            calls: self.calls,
            time_ns: self.time_ns,
            reason: self.reason.to_string(),
        }
    }
}

/// One step's sums.
#[derive(Default, Clone)]
pub struct StepAcc {
    pub time_ns: i64,
    pub flops: u64,
    /// Σ flops / peak (ns at the peak) and the time of the units that have a peak.
    pub at_peak_ns: f64,
    pub peak_time_ns: i64,
    /// Σ time − ideal of the units whose ideal is known, and whether any unit had one.
    pub lost_ns: f64,
    pub any_ideal: bool,
}

impl StepAcc {
    pub fn finish(&self, step: &str) -> StepEfficiency {
        StepEfficiency {
            step: step.to_string(),
            time_ns: self.time_ns,
            flops: self.flops,
            mfu: (self.peak_time_ns > 0).then(|| self.at_peak_ns / self.peak_time_ns as f64),
            time_lost_ns: self.any_ideal.then(|| self.lost_ns.max(0.0).round() as i64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(flops: u64, bytes: u64, time_ns: i64, calls: u64) -> OpAcc {
        let mut a = OpAcc::new(
            "MatMul".into(),
            Family::Matmul,
            "fp16".into(),
            String::new(),
            Some(100.0),
        );
        (a.flops, a.bytes, a.time_ns, a.calls) = (flops, bytes, time_ns, calls);
        a
    }

    #[test]
    fn roofline_by_hand() {
        // Peak 100 TFLOPS = 1e5 FLOPs/ns, 1000 GB/s = 1000 B/ns: ridge 100 FLOPs/byte.
        // 2e10 FLOPs, 1e8 bytes in 1 call of 400 µs: ideal max(200 µs, 100 µs) = 200 µs.
        let r = acc(20_000_000_000, 100_000_000, 400_000, 1).finish(Some(1000.0));
        assert_eq!(r.roofline, Roofline::Compute);
        assert_eq!(r.time_lost_ns, Some(200_000));
        assert!((r.mfu.unwrap() - 0.5).abs() < 1e-12);
        assert!((r.achieved_tflops - 50.0).abs() < 1e-9);
        // Intensity 10 < 100: memory-bound; ideal = 1e9 B / 1000 B/ns = 1 ms of 2 ms.
        let r = acc(10_000_000_000, 1_000_000_000, 2_000_000, 1).finish(Some(1000.0));
        assert_eq!(
            (r.roofline, r.time_lost_ns),
            (Roofline::Memory, Some(1_000_000))
        );
        // A call whose ideal is under 5 µs is latency-bound.
        let r = acc(2_000_000, 1_000, 20_000, 1).finish(Some(1000.0));
        assert_eq!(r.roofline, Roofline::Latency);
        // No bandwidth: no class, no time lost, MFU still known.
        let r = acc(20_000_000_000, 100_000_000, 400_000, 1).finish(None);
        assert_eq!((r.roofline, r.time_lost_ns), (Roofline::Unknown, None));
        assert!(r.mfu.is_some());
    }
}
