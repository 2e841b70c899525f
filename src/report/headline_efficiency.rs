//! The headline's efficiency line: for the two families with FLOPs that take the most modelled
//! time over the run, how far from the peak they run (time-weighted MFU, else the achieved
//! TFLOPS when no peak is known), the time they lose to the roofline on the worst device, and
//! the roofline class that holds most of their time. Built from `analyses.efficiency` only.

use crate::contract::{DeviceEfficiency, EfficiencyStatus, Family};
use crate::registry::Analyses;

/// A family's sums over every device.
#[derive(Default)]
struct Sum {
    time_ns: i64,
    flops: f64,
    /// Time of the ops whose work is exact (not an upper bound).
    exact_ns: i64,
    mfu_weighted: f64,
    mfu_time_ns: i64,
    worst_lost_ns: Option<i64>,
    class_ns: [i64; 3],
}

fn sums(devices: &[DeviceEfficiency], family: Family) -> Sum {
    let mut s = Sum::default();
    for f in devices
        .iter()
        .flat_map(|d| &d.families)
        .filter(|f| f.family == family.as_str())
    {
        s.time_ns += f.time_ns;
        // Upper-bound work (inference attention's unrecorded KV lengths) is no measurement.
        s.flops += f.flops.saturating_sub(f.upper_bound_flops) as f64;
        s.exact_ns += f.time_ns - f.upper_bound_ns;
        if let Some(m) = f.mfu {
            s.mfu_weighted += m * f.mfu_time_ns as f64;
            s.mfu_time_ns += f.mfu_time_ns;
        }
        if f.unknown_ns < f.time_ns {
            s.worst_lost_ns = Some(s.worst_lost_ns.unwrap_or(0).max(f.time_lost_ns));
        }
        for (k, ns) in [f.compute_ns, f.memory_ns, f.latency_ns]
            .into_iter()
            .enumerate()
        {
            s.class_ns[k] += ns;
        }
    }
    s
}

/// `matmul: 38.2% of peak, 4.213 ms lost on the worst device, compute-bound; …`, or None when no
/// device's FLOPs were estimated.
pub fn line(a: &Analyses) -> Option<String> {
    let devices: Vec<DeviceEfficiency> = a
        .efficiency
        .iter()
        .filter(|d| d.status == EfficiencyStatus::Estimated)
        .cloned()
        .collect();
    let mut fams: Vec<(Family, Sum)> = [Family::Matmul, Family::Attention, Family::Conv]
        .into_iter()
        .map(|f| (f, sums(&devices, f)))
        .filter(|(_, s)| s.flops > 0.0)
        .collect();
    if fams.is_empty() {
        return None;
    }
    fams.sort_by_key(|f| std::cmp::Reverse(f.1.time_ns));
    let parts: Vec<String> = fams
        .iter()
        .take(2)
        .map(|(f, s)| {
            let mut p = if s.mfu_time_ns > 0 {
                format!(
                    "{f}: {:.1}% of peak",
                    s.mfu_weighted * 100.0 / s.mfu_time_ns as f64
                )
            } else {
                format!(
                    "{f}: {:.2} TFLOPS achieved (peak not estimated)",
                    s.flops / s.exact_ns.max(1) as f64 / 1e3
                )
            };
            if let Some(lost) = s.worst_lost_ns.filter(|&l| l > 0) {
                p += &format!(", {:.3} ms lost on the worst device", lost as f64 / 1e6);
            }
            let (k, ns) = (0..3)
                .map(|k| (k, s.class_ns[k]))
                .max_by_key(|x| x.1)
                .unwrap_or((0, 0));
            if ns * 2 > s.time_ns {
                p += &format!(", {}-bound", ["compute", "memory", "latency"][k]);
            }
            p
        })
        .collect();
    Some(format!("efficiency: {}", parts.join("; ")))
}
