//! The collective-ops sections: per-device collective depth and the slowest links.

use super::{Section, dev, sec};
use crate::contract::{BandwidthRank, LinkType};
use crate::render::{human_bytes, human_ns};
use crate::report::Report;

/// Per device: the slowest collective ops with their time split, the totals per link type; then
/// the slowest off-chip links of the run and the slow-rank verdict.
pub(super) fn communication_ops(r: &Report, out: &mut Vec<Section>) {
    let c = &r.analyses.communication_ops;
    for d in &c.devices {
        let mut s = collective_ops(d);
        if let Some(src) = &d.source {
            s.notes.push(format!(
                "from the vendor's {src} (a CSV-only export has no HCCL plane tasks to recompute them from)"
            ));
        }
        out.push(s);
    }
    out.extend(slowest_links(c));
}

/// One device's slowest collective ops with their time split, and its totals per link type.
fn collective_ops(d: &crate::contract::DeviceCommOps) -> Section {
    let mut s = sec(
        format!("Collective ops: {}", dev(&d.device)),
        vec![
            "op",
            "step",
            "elapsed",
            "transit",
            "wait (before first transit)",
            "idle",
            "wait ratio",
            "main link",
        ],
    );
    if d.ops_without_tasks == d.ops_total {
        s.notes.push(format!(
            "{} collective ops, none with HCCL plane task details (Level0 captures write placeholders): transit / wait / idle unknown",
            d.ops_total
        ));
        return s;
    }
    for o in d.slowest.iter().filter(|o| o.times.is_some()) {
        let Some(x) = o.times else { continue };
        let link = o
            .bandwidth
            .iter()
            .filter(|b| b.link != LinkType::Sdma && b.time_ns > 0)
            .max_by_key(|b| b.size_bytes)
            .map_or("-".into(), |b| {
                format!("{} {:.2} GB/s", b.link, b.bandwidth_gb_s)
            });
        s.rows.push(vec![
            o.name.clone(),
            o.step.map_or("-".into(), |n| n.to_string()),
            human_ns(x.elapsed_ns),
            human_ns(x.transit_ns),
            format!(
                "{} ({})",
                human_ns(x.wait_ns),
                human_ns(x.synchronization_ns)
            ),
            human_ns(x.idle_ns),
            o.wait_ratio.map_or("-".into(), |r| format!("{r:.4}")),
            link,
        ]);
    }
    let t = &d.total;
    let x = &t.times;
    s.notes.push(format!(
        "{} of {} ops ({} slowest listed): elapsed {}, transit {}, wait {} (of it before the first transit {}), idle {}; wait ratio {:.4} = wait / (wait + transit)",
        t.ops,
        d.ops_total,
        s.rows.len(),
        human_ns(x.elapsed_ns),
        human_ns(x.transit_ns),
        human_ns(x.wait_ns),
        human_ns(x.synchronization_ns),
        human_ns(x.idle_ns),
        t.wait_ratio
    ));
    let links: Vec<String> = t
        .bandwidth
        .iter()
        .filter(|b| b.time_ns > 0)
        .map(|b| {
            format!(
                "{} {} in {} = {:.2} GB/s ({:.0}% large packets)",
                b.link,
                human_bytes(b.size_bytes.max(0) as u64),
                human_ns(b.time_ns),
                b.bandwidth_gb_s,
                b.large_packet_ratio * 100.0
            )
        })
        .collect();
    if !links.is_empty() {
        s.notes.push(format!("per link type: {}", links.join("; ")));
    }
    if d.ops_without_tasks > 0 {
        s.notes.push(format!(
            "{} ops without plane task details are left out of the totals",
            d.ops_without_tasks
        ));
    }
    if d.ops_with_rdma > 0 {
        s.notes.push(format!(
            "{} ops move data over RDMA: their send groups are read by CANN's five-task rule, not yet checked against a real RDMA capture",
            d.ops_with_rdma
        ));
    }
    s
}

/// The slowest off-chip links of the run and the slow-rank verdict.
fn slowest_links(c: &crate::contract::CommunicationOps) -> Option<Section> {
    let mut links: Vec<(i32, &crate::contract::MatrixCell)> = c
        .devices
        .iter()
        .flat_map(|d| {
            d.matrix
                .iter()
                .filter(|m| m.rank_by_bandwidth == BandwidthRank::Total && m.transport != "LOCAL")
                .map(move |m| (d.device.rank, m))
        })
        .collect();
    if links.is_empty() {
        return None;
    }
    links.sort_by(|a, b| a.1.bandwidth_gb_s.total_cmp(&b.1.bandwidth_gb_s));
    let n = links.len();
    let mut l = sec(
        "Slowest links (src rank → dst rank, all ops of a type)",
        vec!["link", "op type", "transport", "bytes", "time", "bandwidth"],
    );
    for (_, m) in links.iter().take(10) {
        l.rows.push(vec![
            format!("{} → {}", m.src_rank, m.dst_rank),
            m.op_type.clone(),
            m.transport.clone(),
            human_bytes(m.size_bytes.max(0) as u64),
            human_ns(m.time_ns),
            format!("{:.2} GB/s", m.bandwidth_gb_s),
        ]);
    }
    if n > l.rows.len() {
        l.notes.push(format!(
            "{} of {n} off-chip links listed, slowest first",
            l.rows.len()
        ));
    }
    if let Some(m) = c.summary.median_link_gb_s {
        l.notes.push(format!(
            "median bandwidth of the slowest link's transport: {m:.2} GB/s"
        ));
    }
    let ratios: Vec<String> = c
        .summary
        .wait_ratios
        .iter()
        .map(|(k, v)| format!("rank {k} {v:.4}"))
        .collect();
    if !ratios.is_empty() {
        l.notes.push(match c.summary.slow_rank {
            Some(k) => format!(
                "slow rank: {k}; it waited least in its collectives, so the others waited for it (wait ratios: {})",
                ratios.join(", ")
            ),
            None => format!(
                "no slow rank: wait ratios within {} of each other, or fewer than {} collectives on a rank ({})",
                crate::contract::SLOW_RANK_MARGIN,
                crate::contract::SLOW_RANK_MIN_OPS,
                ratios.join(", ")
            ),
        });
    }
    Some(l)
}
