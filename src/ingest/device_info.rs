//! The device facts a CANN capture records in `PROF_*/device_<n>/info.json.<n>`: each
//! `DeviceInfo` entry's `ai_core_num` and `aic_frequency` (MHz), what msprof-analyze's
//! operator_mfu recipe computes the chip's peak from (chip_peak_flops.py: AI cores × frequency ×
//! ops per cycle). Found for every input format: a legacy `PROF_*` capture holds its input, a
//! torch_npu rank folder (the parent of `ASCEND_PROFILER_OUTPUT/`) keeps its raw `PROF_*` folders
//! unless the export simplified them away. Written as meta rows `device_info.<id>.ai_core_num`
//! and `device_info.<id>.aic_frequency`, as written.

use super::builder::TablesBuilder;
use crate::model::FileId;
use std::path::{Path, PathBuf};

/// The `PROF_*` folders that describe the capture of `input`: the one it lies in, else those
/// beside its `ASCEND_PROFILER_OUTPUT/` (at most 16).
fn prof_folders(input: &str) -> Vec<PathBuf> {
    if let Some(p) = super::rank::prof_folder(input) {
        return vec![p.to_path_buf()];
    }
    let Some(out) = Path::new(input)
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "ASCEND_PROFILER_OUTPUT"))
    else {
        return Vec::new();
    };
    let Some(Ok(rd)) = out.parent().map(std::fs::read_dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("PROF_"))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    found.truncate(16);
    found
}

/// (device id, ai_core_num, aic_frequency) of every `DeviceInfo` entry of one `info.json.<n>`.
fn entries(v: &serde_json::Value) -> Vec<(i64, String, String)> {
    let text = |x: &serde_json::Value| match x {
        serde_json::Value::String(s) => s.trim().to_string(),
        serde_json::Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    let Some(list) = v.get("DeviceInfo").and_then(|d| d.as_array()) else {
        return Vec::new();
    };
    list.iter()
        .take(64)
        .filter_map(|d| {
            let id = d.get("id").and_then(|i| i.as_i64())?;
            Some((id, text(&d["ai_core_num"]), text(&d["aic_frequency"])))
        })
        .collect()
}

/// Adds `file`'s device facts from the `info.json.<n>` files of its capture (once per key).
pub fn ingest(input: &str, file: FileId, b: &mut TablesBuilder) {
    for prof in prof_folders(input) {
        let Ok(rd) = std::fs::read_dir(&prof) else {
            continue;
        };
        for dev in rd.flatten().take(64) {
            let name = dev.file_name();
            let Some(n) = name.to_str().and_then(|n| n.strip_prefix("device_")) else {
                continue;
            };
            let info = dev.path().join(format!("info.json.{n}"));
            let Ok(bytes) = super::source::read_regular(&info, 16 << 20) else {
                continue;
            };
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                continue;
            };
            for (id, cores, freq) in entries(&v) {
                for (what, value) in [("ai_core_num", cores), ("aic_frequency", freq)] {
                    let key = format!("device_info.{id}.{what}");
                    if !value.is_empty() && !b.has_meta(file, &key) {
                        b.add_meta(file, &key, &value);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_of_the_real_legacy_info_json() {
        // ../shared/samples/ascend-msprof-legacy/PROF_…/device_0/info.json.0 (real, CANN ~6.x):
        // DeviceInfo[0] has "ai_core_num": 32 and "aic_frequency": "1000".
        let path = "../shared/samples/ascend-msprof-legacy/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/info.json.0";
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        assert_eq!(entries(&v), vec![(0, "32".into(), "1000".into())]);
    }
}
