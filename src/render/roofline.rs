//! The HTML report's roofline charts (docs/html-report.md): per device with estimated work, one
//! log-log SVG of achieved TFLOPS against arithmetic intensity (FLOPs per byte), a dot per op
//! class with FLOPs (area by its time, colour by family), under the device's roofs: the memory
//! roof (intensity × bandwidth) and a compute roof per dtype with a known peak. Without peaks the
//! dots are drawn alone and the chart says which roof is not estimated.

use crate::contract::{DeviceEfficiency, EfficiencyStatus, Family};
use crate::registry::Analyses;

const W: f64 = 1000.0;
const H: f64 = 360.0;
/// Left and bottom margins for the axis labels.
const ML: f64 = 60.0;
const MB: f64 = 30.0;

fn colour(f: Family) -> &'static str {
    match f {
        Family::Matmul => "#4e79a7",
        Family::Attention => "#e15759",
        Family::Conv => "#59a14f",
        Family::Elementwise => "#f28e2b",
        Family::Norm => "#b07aa1",
        Family::DataMovement => "#9c755f",
    }
}

/// Log-scale axis from 10^lo to 10^hi.
struct Log {
    lo: f64,
    hi: f64,
    from: f64,
    len: f64,
    flip: bool,
}

impl Log {
    fn at(&self, v: f64) -> f64 {
        let f = (v.max(1e-12).log10() - self.lo) / (self.hi - self.lo);
        if self.flip {
            self.from + self.len * (1.0 - f)
        } else {
            self.from + self.len * f
        }
    }
}

/// Decades that hold every value (at least one).
fn decades(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    if lo > hi {
        return (0.0, 1.0);
    }
    let (lo, hi) = (lo.log10().floor(), hi.log10().ceil());
    (lo, if hi > lo { hi } else { lo + 1.0 })
}

fn tick(e: f64) -> String {
    let v = 10f64.powf(e);
    if (0.001..100_000.0).contains(&v) {
        format!("{}", (v * 1000.0).round() / 1000.0)
    } else {
        format!("1e{e}")
    }
}

/// The charts of every device with FLOPs; `esc` escapes text for HTML (the page's escaper).
pub fn charts(a: &Analyses, esc: fn(&str) -> String) -> String {
    a.efficiency
        .iter()
        .filter(|d| d.status == EfficiencyStatus::Estimated && d.ops.iter().any(|o| o.flops > 0))
        .map(|d| chart(d, esc))
        .collect()
}

fn chart(d: &DeviceEfficiency, esc: fn(&str) -> String) -> String {
    let pts: Vec<_> = d
        .ops
        .iter()
        .filter(|o| o.flops > 0 && o.intensity.is_some() && !o.upper_bound)
        .collect();
    let bounds = d.ops.iter().filter(|o| o.upper_bound).count();
    let peaks: Vec<f64> = d.peaks.tflops.iter().map(|p| p.tflops).collect();
    let bw = d.peaks.gbps;
    let ridge = peaks.iter().cloned().fold(0.0, f64::max) * 1e3 / bw.unwrap_or(f64::INFINITY);
    let (xlo, xhi) = decades(pts.iter().filter_map(|o| o.intensity).chain([ridge]));
    let (ylo, yhi) = decades(
        pts.iter()
            .map(|o| o.achieved_tflops)
            .chain(peaks.iter().cloned()),
    );
    let x = Log {
        lo: xlo,
        hi: xhi,
        from: ML,
        len: W - ML - 10.0,
        flip: false,
    };
    let y = Log {
        lo: ylo,
        hi: yhi,
        from: 10.0,
        len: H - MB - 10.0,
        flip: true,
    };
    let title = format!(
        "Roofline: {} (achieved TFLOPS vs FLOPs per byte; dot area by time)",
        d.device.title()
    );
    let mut s = format!(
        "<div class=chart><div class=ct>{}</div><svg width='{W}' height='{H}' role='img' class=roofline>",
        esc(&title)
    );
    let (x0, y0) = (ML, H - MB);
    s += &format!(
        "<line x1='{x0}' y1='{y0}' x2='{}' y2='{y0}' class='ax'/>",
        W - 10.0
    );
    s += &format!("<line x1='{x0}' y1='10' x2='{x0}' y2='{y0}' class='ax'/>");
    for e in (xlo as i64)..=(xhi as i64) {
        let px = x.at(10f64.powf(e as f64));
        s += &format!(
            "<text x='{px:.1}' y='{}' text-anchor='middle'>{}</text>",
            H - 10.0,
            tick(e as f64)
        );
    }
    for e in (ylo as i64)..=(yhi as i64) {
        let py = y.at(10f64.powf(e as f64));
        s += &format!(
            "<text x='{}' y='{:.1}' text-anchor='end'>{}</text>",
            ML - 4.0,
            py + 4.0,
            tick(e as f64)
        );
    }
    for p in &d.peaks.tflops {
        // The compute roof, from the ridge (memory roof meets it) to the right edge.
        let start = bw.map_or(x.from, |b| x.at(p.tflops * 1e3 / b).max(x.from));
        let py = y.at(p.tflops);
        s += &format!(
            "<line x1='{start:.1}' y1='{py:.1}' x2='{}' y2='{py:.1}' class=roof><title>{} peak {:.1} TFLOPS</title></line><text x='{}' y='{:.1}' text-anchor='end'>{} {:.0}</text>",
            W - 10.0,
            esc(&p.dtype),
            p.tflops,
            W - 12.0,
            py - 3.0,
            esc(&p.dtype),
            p.tflops
        );
    }
    if let Some(b) = bw {
        let top = peaks.iter().cloned().fold(10f64.powf(yhi), f64::min);
        let (ia, ib) = (10f64.powf(xlo), top * 1e3 / b);
        s += &format!(
            "<line x1='{:.1}' y1='{:.1}' x2='{:.1}' y2='{:.1}' class=roof><title>memory roof {b:.0} GB/s</title></line>",
            x.at(ia),
            y.at(ia * b / 1e3),
            x.at(ib),
            y.at(ib * b / 1e3)
        );
    }
    let tmax = pts.iter().map(|o| o.time_ns).max().unwrap_or(1).max(1) as f64;
    for o in &pts {
        let r = 3.0 + 9.0 * (o.time_ns as f64 / tmax).sqrt();
        s += &format!(
            "<circle cx='{:.1}' cy='{:.1}' r='{r:.1}' fill='{}' fill-opacity='0.7'><title>{} {} {}: {:.2} TFLOPS at {:.1} FLOP/B, {} call(s)</title></circle>",
            x.at(o.intensity.unwrap_or(1.0)),
            y.at(o.achieved_tflops),
            colour(o.family),
            esc(&o.op),
            esc(&o.dtype),
            esc(&o.shape),
            o.achieved_tflops,
            o.intensity.unwrap_or(0.0),
            o.calls
        );
    }
    s += "</svg><div class=lg>";
    for f in Family::ALL
        .iter()
        .filter(|f| pts.iter().any(|o| o.family == **f))
    {
        s += &format!("<span><i style='background:{}'></i>{f}</span>", colour(*f));
    }
    if bounds > 0 {
        s += &format!("<span>{bounds} op class(es) with upper-bound work not drawn</span>");
    }
    if peaks.is_empty() {
        s += "<span>compute roof not estimated</span>";
    }
    if bw.is_none() {
        s += "<span>memory roof not estimated</span>";
    }
    s + "</div></div>"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_places_decades_evenly() {
        let x = Log {
            lo: 0.0,
            hi: 2.0,
            from: 0.0,
            len: 100.0,
            flip: false,
        };
        assert_eq!(x.at(1.0), 0.0);
        assert_eq!(x.at(10.0), 50.0);
        assert_eq!(x.at(100.0), 100.0);
        assert_eq!(decades([0.5, 30.0].into_iter()), (-1.0, 2.0));
        assert_eq!(decades(std::iter::empty()), (0.0, 1.0));
    }
}
