//! Collective-op depth of a CSV-only text export (no trace_view.json, so no HCCL plane tasks):
//! the vendor's own per-op split from communication.json beside kernel_details.csv (read into
//! the `reference` table, one row per cell: text columns `step`, `kind`, `op`; numbers under
//! `Communication Time Info/…` and `Communication Bandwidth Info/<link>/…`). The numbers are
//! CANN's (docs/analyses/communication_ops.md), marked `source: communication.json` so a reader
//! knows they were not recomputed; the link matrix stays empty.

use super::communication_ops::{BANDS, totals};
use super::devices::Device;
pub use crate::contract::communication_ops::*;
use crate::model::files::SourceFormat;
use crate::model::{StrId, Tables};
use std::collections::BTreeMap;

/// One op record of communication.json: its text keys and numeric cells.
#[derive(Default)]
struct Record<'a> {
    step: &'a str,
    op: &'a str,
    cells: BTreeMap<&'a str, f64>,
}

fn ms(x: Option<&f64>) -> i64 {
    x.map_or(0, |v| (v * 1e6).round() as i64)
}

/// The ops of every device of a CSV-only export (kernel_details.csv) from its file's
/// communication.json.
pub fn compute(t: &Tables, devices: &[Device], top_n: usize) -> Vec<DeviceCommOps> {
    devices
        .iter()
        .filter(|d| t.files.format[d.file.idx()] == Some(SourceFormat::KernelCsv))
        .filter_map(|d| from_communication_json(t, d, top_n))
        .collect()
}

/// The device's ops from its file's communication.json; None when the file has none.
fn from_communication_json(t: &Tables, d: &Device, top_n: usize) -> Option<DeviceCommOps> {
    let r = &t.reference;
    let mut records: BTreeMap<(StrId, u32), Record<'_>> = BTreeMap::new();
    for k in 0..r.len() {
        if r.file[k] != d.file {
            continue;
        }
        let table = t.str(r.table[k]);
        if !table.starts_with("communication") || table.starts_with("communication_matrix") {
            continue;
        }
        let e = records.entry((r.table[k], r.row[k])).or_default();
        match t.str(r.column[k]) {
            "step" => e.step = t.str(r.text[k]),
            "op" => e.op = t.str(r.text[k]),
            col if r.number[k].is_finite() => {
                e.cells.insert(col, r.number[k]);
            }
            _ => {}
        }
    }
    let mut ops: Vec<CommOp> = records
        .into_values()
        .filter(|x| !x.op.is_empty() && x.op != "Total Op Info")
        .map(|x| op_of(&x))
        .collect();
    if ops.is_empty() {
        return None;
    }
    ops.sort_by_key(|o| o.start_ns);
    let (by_step, total) = totals(ops.iter());
    let n = ops.len() as u64;
    let mut slowest = ops;
    slowest.sort_by(|x, y| {
        let e = |o: &CommOp| o.times.map_or(0, |t| t.elapsed_ns);
        e(y).cmp(&e(x)).then(x.start_ns.cmp(&y.start_ns))
    });
    slowest.truncate(top_n);
    Some(DeviceCommOps {
        device: d.evidence.clone(),
        source: Some("communication.json".into()),
        ops_total: n,
        plane_tasks: 0,
        ops_without_tasks: 0,
        ops_with_rdma: 0,
        slowest,
        steps: by_step,
        total,
        matrix: Vec::new(),
    })
}

fn op_of(x: &Record<'_>) -> CommOp {
    let c = |k: &str| x.cells.get(format!("Communication Time Info/{k}").as_str());
    let times = OpTimes {
        elapsed_ns: ms(c("Elapse Time(ms)")),
        transit_ns: ms(c("Transit Time(ms)")),
        wait_ns: ms(c("Wait Time(ms)")),
        synchronization_ns: ms(c("Synchronization Time(ms)")),
        idle_ns: ms(c("Idle Time(ms)")),
    };
    let bandwidth = BANDS
        .into_iter()
        .map(|link| {
            let prefix = format!("Communication Bandwidth Info/{link}/");
            let b = |k: &str| x.cells.get(format!("{prefix}{k}").as_str());
            let dist = format!("{prefix}Size Distribution/");
            // `Size Distribution/<MB>/0` = count, `/1` = time (ms).
            let mut sizes: BTreeMap<i64, (u64, i64)> = BTreeMap::new();
            for (k, v) in x.cells.range(dist.as_str()..) {
                let Some(rest) = k.strip_prefix(dist.as_str()) else {
                    break;
                };
                let Some((mb, idx)) = rest.rsplit_once('/') else {
                    continue;
                };
                let Ok(mb) = mb.parse::<f64>() else {
                    continue;
                };
                let e = sizes.entry((mb * 1e6).round() as i64).or_default();
                match idx {
                    "0" => e.0 = *v as u64,
                    "1" => e.1 = ms(Some(v)),
                    _ => {}
                }
            }
            Band {
                link,
                size_bytes: b("Transit Size(MB)").map_or(0, |v| (v * 1e6).round() as i64),
                time_ns: ms(b("Transit Time(ms)")),
                bandwidth_gb_s: b("Bandwidth(GB/s)").copied().unwrap_or(0.0),
                large_packet_ratio: b("Large Packet Ratio").copied().unwrap_or(0.0),
                sizes: if link == LinkType::Sdma {
                    Vec::new()
                } else {
                    sizes.into_iter().map(|(s, (n, ns))| (s, n, ns)).collect()
                },
            }
        })
        .collect();
    let step: String = x.step.chars().filter(char::is_ascii_digit).collect();
    CommOp {
        name: x.op.split('@').next().unwrap_or(x.op).to_string(),
        step: step.parse().ok(),
        start_ns: c("Start Timestamp(us)").map_or(0, |v| (v * 1e3).round() as i64),
        wait_ratio: Some(times.wait_ratio()),
        synchronization_ratio: Some(times.synchronization_ratio()),
        times: Some(times),
        master_plane: None,
        plane_tasks: 0,
        bandwidth,
    }
}
