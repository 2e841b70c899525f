//! What the operator rules share: the Ascend files of a run, each file's op_metrics rows, its
//! collective-op time (part of the total op time msprof-analyze divides by), shapes as shown.

use crate::analysis::devices::Device;
use crate::model::{FileId, ProcessRole, Tables};

/// The files with an Ascend device (in file order, once each).
pub fn ascend_files(t: &Tables, devices: &[Device]) -> Vec<FileId> {
    let mut out: Vec<FileId> = devices
        .iter()
        .filter(|d| t.processes.role[d.process.idx()] == ProcessRole::AscendHardware)
        .map(|d| d.file)
        .collect();
    out.dedup();
    out
}

/// The op_metrics rows of `file`.
pub fn rows(t: &Tables, file: FileId) -> Vec<usize> {
    (0..t.op_metrics.len())
        .filter(|&i| t.op_metrics.file[i] == file)
        .collect()
}

/// The file's collective ops' time, ns (the HCCL rows msprof-analyze's op list holds beside the
/// compute tasks).
pub fn comm_ns(t: &Tables, devices: &[Device], file: FileId) -> i64 {
    crate::units::sum_ns(
        devices
            .iter()
            .filter(|d| d.file == file)
            .flat_map(|d| d.comm_ops.iter())
            .map(|&i| t.events.dur_ns.at(i as usize)),
    )
}

/// A shape or dtype cell without the quotes kernel_details.csv wraps it in, cut after 60
/// characters (a fused foreach operator lists every tensor it touches).
pub fn shown(s: &str) -> String {
    let s = s.trim_matches('"');
    match s.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// A duration for people, in the largest unit it reaches (`units::human_duration`).
pub fn duration(ns: i64) -> String {
    crate::units::human_duration(ns as f64)
}
