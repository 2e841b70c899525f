//! The efficiency sections: per device, the families' FLOPs, bytes, achieved throughput, MFU,
//! roofline classes and time lost, then the op classes losing the most time.

use super::{Section, dev, pct, sec};
use crate::contract::{DeviceEfficiency, EfficiencyStatus, FamilyRow, OpRow, Peaks};
use crate::render::human_ns;
use crate::report::Report;

/// Op rows shown per device (JSON lists more).
const OP_ROWS: usize = 15;

pub(super) fn efficiency(r: &Report, out: &mut Vec<Section>) {
    for e in &r.analyses.efficiency {
        families(e, out);
        if !e.ops.is_empty() {
            ops(e, out);
        }
    }
}

/// `38.2%`, or `-` when not estimated.
fn opt_pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |m| pct(m * 100.0))
}

/// A FLOP / byte count with an SI prefix (`12.3 G`).
pub fn si(v: f64) -> String {
    for (d, p) in [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if v >= d {
            return format!("{:.2} {p}", v / d);
        }
    }
    format!("{v:.0}")
}

/// The roofline classes' shares of a family's time: `compute 62%, memory 38%`.
fn classes(f: &FamilyRow) -> String {
    let t = f.time_ns.max(1) as f64;
    let parts: Vec<String> = [
        ("compute", f.compute_ns),
        ("memory", f.memory_ns),
        ("latency", f.latency_ns),
        ("unknown", f.unknown_ns),
    ]
    .iter()
    .filter(|(_, ns)| *ns > 0)
    .map(|(n, ns)| format!("{n} {:.0}%", *ns as f64 * 100.0 / t))
    .collect();
    parts.join(", ")
}

/// One line on where the peaks come from, or why they are not estimated.
pub fn peaks_line(p: &Peaks) -> String {
    let chip = if p.chip.is_empty() {
        "chip unnamed".to_string()
    } else {
        p.chip.clone()
    };
    let compute = if p.tflops.is_empty() {
        "compute peak not estimated".to_string()
    } else {
        p.tflops
            .iter()
            .map(|d| format!("{} {:.1} TFLOPS", d.dtype, d.tflops))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let bw = p.gbps.map_or("bandwidth not estimated".to_string(), |g| {
        format!("{g:.0} GB/s")
    });
    let row = if p.table_row.is_empty() {
        String::new()
    } else {
        format!(" = {}", p.table_row)
    };
    format!("peaks ({}{row}, {}): {compute}; {bw}", chip, p.source)
}

fn families(e: &DeviceEfficiency, out: &mut Vec<Section>) {
    let mut s = sec(
        format!("Efficiency: {}", dev(&e.device)),
        vec![
            "family",
            "calls",
            "time",
            "% of compute",
            "FLOPs",
            "TFLOPS",
            "GB/s",
            "MFU",
            "roofline",
            "time lost",
        ],
    );
    let share = |ns: i64| pct(ns as f64 * 100.0 / e.time_ns.max(1) as f64);
    for f in e.families.iter().chain(std::iter::once(&e.total)) {
        s.rows.push(vec![
            f.family.clone(),
            f.calls.to_string(),
            human_ns(f.time_ns),
            share(f.time_ns),
            si(f.flops as f64),
            format!("{:.2}", f.achieved_tflops),
            format!("{:.1}", f.achieved_gbps),
            opt_pct(f.mfu),
            classes(f),
            if f.unknown_ns == f.time_ns {
                "-".into()
            } else {
                human_ns(f.time_lost_ns)
            },
        ]);
    }
    s.notes.push(match e.status {
        EfficiencyStatus::Estimated => format!(
            "{} of {} compute tasks ({} of {}) have a work model; MFU = achieved ÷ the dtype's peak, time-weighted",
            e.modeled_tasks,
            e.tasks,
            human_ns(e.modeled_time_ns),
            human_ns(e.time_ns)
        ),
        EfficiencyStatus::NoShapes => format!(
            "not estimated: the capture records no shapes for these {} compute tasks (Ascend: kernel details; PyTorch: record_shapes=True)",
            e.tasks
        ),
        EfficiencyStatus::NoModel => "not estimated: no compute task has a work model".into(),
    });
    s.notes.push(peaks_line(&e.peaks));
    for why in &e.peaks.not_estimated {
        s.notes.push(format!("not estimated: {why}"));
    }
    if e.pmu.compared + e.pmu.pmu_only > 0 {
        s.notes.push(format!(
            "PMU aic_mac_ratio beside {} op class(es): {} compared with the FLOPs-based cube busy, {} disagree beyond ±{}",
            e.pmu.compared + e.pmu.pmu_only,
            e.pmu.compared,
            e.pmu.disagree,
            crate::contract::PMU_TOLERANCE
        ));
    }
    let bound: Vec<String> = e
        .families
        .iter()
        .filter(|f| f.upper_bound_ns > 0)
        .map(|f| format!("{} {}", f.family, human_ns(f.upper_bound_ns)))
        .collect();
    if !bound.is_empty() {
        s.notes.push(format!(
            "upper bounds only ({}): KV lengths the capture does not record were taken at their largest; those ops' FLOPs are in the sums but not in MFU (their rows read ≤ / ≥)",
            bound.join(", ")
        ));
    }
    if let Some(n) = e.no_model.first() {
        s.notes.push(format!(
            "no model: {} op type(s), {} (largest: {} {}, {})",
            e.no_model_total,
            human_ns(e.no_model.iter().map(|n| n.time_ns).sum()),
            n.op,
            human_ns(n.time_ns),
            n.reason
        ));
    }
    out.push(s);
}

fn ops(e: &DeviceEfficiency, out: &mut Vec<Section>) {
    let mut s = sec(
        format!("Efficiency by op: {}", dev(&e.device)),
        vec![
            "op",
            "dtype",
            "shape",
            "calls",
            "time",
            "TFLOPS",
            "GB/s",
            "MFU",
            "FLOP/B",
            "roofline",
            "time lost",
            "PMU mac",
        ],
    );
    for o in e.ops.iter().take(OP_ROWS) {
        s.rows.push(op_row(o));
    }
    s.notes.push(format!(
        "{} op classes, by time lost then time; top {} shown; time lost = time − max(FLOPs ÷ peak, bytes ÷ bandwidth)",
        e.ops_total,
        s.rows.len()
    ));
    let caveats: Vec<&String> = e
        .ops
        .iter()
        .take(OP_ROWS)
        .flat_map(|o| &o.caveats)
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    for c in caveats
        .into_iter()
        .filter(|c| seen.insert(c.as_str()))
        .take(4)
    {
        s.notes.push(format!("caveat: {c}"));
    }
    out.push(s);
}

/// An op row; an upper-bound row's throughput and MFU read `≤ x`, its time lost `≥ y`.
fn op_row(o: &OpRow) -> Vec<String> {
    let le = o.at_most();
    let ge = if o.upper_bound { "≥ " } else { "" };
    vec![
        o.op.clone(),
        o.dtype.clone(),
        crate::diag::cap_text(&o.shape, 48).into_owned(),
        o.calls.to_string(),
        human_ns(o.time_ns),
        format!("{le}{:.2}", o.achieved_tflops),
        format!("{le}{:.1}", o.achieved_gbps),
        o.mfu
            .map_or("-".into(), |m| format!("{le}{}", pct(m * 100.0))),
        o.intensity.map_or("-".into(), |i| format!("{i:.1}")),
        o.roofline.to_string(),
        o.time_lost_ns
            .map_or("-".into(), |l| format!("{ge}{}", human_ns(l))),
        o.pmu_mac_ratio.map_or("-".into(), |p| format!("{p:.2}")),
    ]
}
