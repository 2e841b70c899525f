//! The report as titled tables of display strings, built once and formatted by both the terminal
//! and the Markdown renderer (so the two never drift apart).

use crate::report::Report;

pub use super::section::{Section, rel, sec};

mod advisor;
mod audits;
mod bubbles;
mod communication;
mod communication_ops;
mod composition;
mod cross_rank;
mod device_time;
mod diagnostics;
mod dispatch;
mod efficiency;
mod kernel_types;
mod layout;
mod op_types;
mod ranks;
mod step_sync;
mod summary;
mod top_events;
mod vendor_agreement;

/// Kernel families shown per device before one `other` row (JSON lists all).
const FAMILY_ROWS: usize = 10;

/// `1 step`, `2 steps`; `1 family`, `3 families`.
pub fn count_of(n: u64, one: &str) -> String {
    match (n, one.strip_suffix('y')) {
        (1, _) => format!("1 {one}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {one}s"),
    }
}

/// A share of compute-kernel time that can pass 100%: as a share below it, as a multiple above
/// (`11.5× compute-kernel time`, not `1146.84%`).
fn against_compute(p: f64) -> String {
    if p >= 100.0 {
        format!("{:.1}× compute-kernel time", p / 100.0)
    } else {
        format!("{p:.2}% of compute-kernel time")
    }
}

fn pct(p: f64) -> String {
    format!("{p:.2}%")
}

/// A device row's title: rank, device id and process when known; without a rank, the file name
/// too (rows of several unranked files must stay distinguishable).
fn dev(d: &crate::contract::DeviceRef) -> String {
    let mut s = d.title();
    if d.rank < 0 {
        let file = d.file.rsplit('/').next().unwrap_or(&d.file);
        s += &format!(" · {file}");
    }
    s
}

pub fn build(r: &Report) -> Vec<Section> {
    let mut out = Vec::new();
    // The answer first (the headline is printed above the sections), the inventory of what was
    // read (files, categories, streams) last.
    out.push(super::verdict::section(r));
    advisor::advisor(r, &mut out);
    ranks::ranks(r, &mut out);
    layout::layout(r, &mut out);
    cross_rank::cross_rank(r, &mut out);
    timeline(r, &mut out);
    super::graph_mode::sections(r, &mut out);
    kernels(r, &mut out);
    audits::audits(r, &mut out);
    summary::summary(r, &mut out);
    diagnostics::diagnostics(r, &mut out);
    out
}

fn timeline(r: &Report, out: &mut Vec<Section>) {
    device_time::device_time(r, out);
    vendor_agreement::vendor_agreement(r, out);
    kernel_types::kernel_types(r, out);
    bubbles::bubbles(r, out);
    dispatch::dispatch(r, out);
    communication_ops::communication_ops(r, out);
    step_sync::step_sync(r, out);
}

fn kernels(r: &Report, out: &mut Vec<Section>) {
    top_events::top_events(r, out);
    op_types::op_types(r, out);
    efficiency::efficiency(r, out);
    composition::composition(r, out);
    communication::communication(r, out);
}
