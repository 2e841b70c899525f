//! The rank of an input file from its path, when nothing inside the file says it (shared by the
//! Chrome-trace and db readers).

use std::path::Path;

/// A torch_npu root's `profiler_info_<rank>.json` beside `ASCEND_PROFILER_OUTPUT/` (what
/// msprof-analyze uses too), or a rank file name (`lmdeploy_profile_<rank>`, `rank<N>`, `rank-<N>`,
/// `rank_<N>`, `msprof_<N>`, `ascend_pytorch_profiler_<N>.db`, `worker<N>.<ts>.pt.trace.json`).
pub fn rank_from_path(path: &str) -> Option<i32> {
    let p = Path::new(path);
    let parent = p.parent()?;
    if parent
        .file_name()
        .is_some_and(|n| n == "ASCEND_PROFILER_OUTPUT")
        && let Some(r) = parent.parent().and_then(profiler_info_rank)
    {
        return Some(r);
    }
    let stem = p.file_name()?.to_str()?;
    let stem = stem
        .trim_end_matches(".gz")
        .trim_end_matches(".json")
        .trim_end_matches(".db");
    // TensorBoard-plugin naming `<worker>.<timestamp>.pt.trace.json`: the worker is the stem.
    let stem = match stem.strip_suffix(".pt.trace") {
        Some(s) => s.split('.').next().unwrap_or(s),
        None => stem.strip_suffix(".trace").unwrap_or(stem),
    };
    let digits_at = stem.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (prefix, digits) = stem.split_at(digits_at);
    let known = [
        "lmdeploy_profile_",
        "ascend_pytorch_profiler_",
        "rank",
        "rank-",
        "rank_",
        "msprof_",
        "worker",
    ];
    if !digits.is_empty() && known.contains(&prefix) {
        return digits.parse().ok();
    }
    // Graph capture traces and serving traces name the rank after other words: vLLM
    // `graph_capture_rank_<N>`, SGLang `<runner>_bs_<bs>_rank<N>`, `cuda_graph_capture-<runner>-TP-<N>`,
    // `<time>-TP-<N>` (tensor-parallel rank).
    let tails = ["_rank", "_rank_", "_rank-", "-TP-"];
    if !digits.is_empty() && tails.iter().any(|t| prefix.ends_with(t)) {
        return digits.parse().ok();
    }
    p.ancestors()
        .find(|d| {
            d.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("PROF_"))
        })
        .and_then(prof_rank)
}

/// The rank of a CANN msprof capture folder `PROF_*`: `rank_id` of its
/// `device_<n>/info.json.<n>` (-1 there means not distributed: unknown).
pub fn prof_rank(prof: &Path) -> Option<i32> {
    let v = prof_info(prof)?;
    let r = v["rank_id"]
        .as_i64()
        .or_else(|| v["rank_id"].as_str()?.trim().parse().ok())?;
    (r >= 0).then_some(r as i32)
}

/// The first readable `device_<n>/info.json.<n>` of a `PROF_*` folder, parsed.
fn prof_info(prof: &Path) -> Option<serde_json::Value> {
    for dev in std::fs::read_dir(prof).ok()?.flatten() {
        let name = dev.file_name();
        let Some(n) = name.to_str().and_then(|n| n.strip_prefix("device_")) else {
            continue;
        };
        let info = dev.path().join(format!("info.json.{n}"));
        let Ok(text) = super::source::read_regular(&info, 16 << 20) else {
            continue;
        };
        return serde_json::from_slice(&text).ok();
    }
    None
}

/// The host of a CANN msprof capture folder `PROF_*` from a `device_<n>/info.json.<n>`:
/// `hostUid` when written, else `hostname` and `mac` (captures of one host share its clock).
pub fn prof_host(prof: &Path) -> Option<String> {
    let v = prof_info(prof)?;
    let text_of = |k: &str| match &v[k] {
        serde_json::Value::String(s) if !s.is_empty() && s != "NA" => Some(s.clone()),
        serde_json::Value::Number(x) => Some(x.to_string()),
        _ => None,
    };
    if let Some(uid) = text_of("hostUid") {
        return Some(uid);
    }
    Some(format!(
        "{}/{}",
        text_of("hostname")?,
        text_of("mac").unwrap_or_default()
    ))
}

/// The keys of the `profiler_metadata.json` beside a torch_npu text export's
/// `ASCEND_PROFILER_OUTPUT/` that become meta rows (the db carries them in META_DATA), each as
/// JSON text: `parallel_group_info` (communicator groups), `distributed_args` (the job's parallel
/// sizes, rank and world size), `pp_info` (microbatches, pipeline schedule), `ENV_VARIABLES` (the
/// environment torch_npu recorded, read by the advisor); why not, when the file is there but
/// cannot be read (`ingest::profiler_metadata::read`).
pub fn profiler_metadata(path: &str) -> Result<Vec<(&'static str, String)>, String> {
    let find = || -> Option<std::path::PathBuf> {
        let out = Path::new(path).parent()?;
        if out.file_name()? != "ASCEND_PROFILER_OUTPUT" {
            return None;
        }
        Some(out.parent()?.join("profiler_metadata.json"))
    };
    match find() {
        Some(meta) => super::profiler_metadata::read(&meta),
        None => Ok(Vec::new()),
    }
}

/// The rank of the torch_npu rank folder holding `path` (`<folder>/ASCEND_PROFILER_OUTPUT/<file>`),
/// from its single `profiler_info_<rank>.json`.
pub fn profiler_info_rank_of(path: &str) -> Option<i32> {
    let out = Path::new(path).parent()?;
    if out.file_name()? != "ASCEND_PROFILER_OUTPUT" {
        return None;
    }
    profiler_info_rank(out.parent()?)
}

/// The `PROF_*` folder a file lies in, if any.
pub fn prof_folder(path: &str) -> Option<&Path> {
    Path::new(path).ancestors().find(|d| {
        d.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("PROF_"))
    })
}

/// The device id of a file inside a legacy CANN capture's `PROF_*/device_<n>/` folder (CANN
/// names the folder by the device it profiled), from the path alone.
pub fn prof_device_from_path(path: &str) -> Option<i32> {
    Path::new(path).ancestors().find_map(|d| {
        let n = d.file_name()?.to_str()?.strip_prefix("device_")?;
        let parent = d.parent()?.file_name()?.to_str()?;
        if parent.starts_with("PROF_") {
            n.parse().ok()
        } else {
            None
        }
    })
}

/// The rank in the name of the single `profiler_info_<rank>.json` of a torch_npu root.
pub fn profiler_info_rank(root: &Path) -> Option<i32> {
    let mut found = None;
    for entry in std::fs::read_dir(root).ok()?.flatten() {
        let name = entry.file_name();
        let name = name.to_str()?;
        if let Some(r) = name
            .strip_prefix("profiler_info_")
            .and_then(|s| s.strip_suffix(".json"))
        {
            if found.is_some() {
                return None; // several: ambiguous
            }
            found = r.parse().ok();
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_file_names() {
        assert_eq!(rank_from_path("/x/lmdeploy_profile_3.json.gz"), Some(3));
        assert_eq!(rank_from_path("/x/rank-12.json"), Some(12));
        assert_eq!(rank_from_path("/x/trace.json"), None);
        // vLLM and SGLang graph capture traces, SGLang serving traces.
        assert_eq!(
            rank_from_path("/t/capture_traces/graph_capture_rank_3.1785501977123.pt.trace.json.gz"),
            Some(3)
        );
        assert_eq!(
            rank_from_path("/t/capture_traces/bs_24_rank1.json.gz"),
            Some(1)
        );
        assert_eq!(
            rank_from_path("/t/graph_capture_profile/DecodeCudaGraphRunner_bs_8_rank2.json.gz"),
            Some(2)
        );
        assert_eq!(
            rank_from_path("/t/cuda_graph_capture-DecodeCudaGraphRunner-TP-3.json.gz"),
            Some(3)
        );
        assert_eq!(
            rank_from_path("/t/1785501977.9713538-TP-0.trace.json.gz"),
            Some(0)
        );
        assert_eq!(rank_from_path("/t/bs_24.json.gz"), None);
        assert_eq!(rank_from_path("/x/model_7.json"), None);
        assert_eq!(rank_from_path("/x/ascend_pytorch_profiler_5.db"), Some(5));
        assert_eq!(
            rank_from_path("/x/worker0.1700000000123.pt.trace.json.gz"),
            Some(0)
        );
        assert_eq!(
            rank_from_path("/x/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"),
            Some(34)
        );
        assert_eq!(
            rank_from_path("/x/host_1234.1700000000.pt.trace.json"),
            None
        );
    }

    #[test]
    fn device_from_legacy_prof_folder() {
        assert_eq!(
            prof_device_from_path("/r/PROF_000001_2023_X/device_1/timeline/msprof_1_0_3.json"),
            Some(1)
        );
        assert_eq!(prof_device_from_path("/r/x/device_1/msprof_1.json"), None);
        assert_eq!(prof_device_from_path("/r/PROF_1/device_x/a.json"), None);
    }

    #[test]
    fn prof_folder_rank_from_device_info() {
        let dir = std::env::temp_dir().join(format!("profscope-prof-{}", std::process::id()));
        let prof = dir.join("PROF_000001_20250101120000123_ABCDEF");
        std::fs::create_dir_all(prof.join("device_3")).unwrap();
        std::fs::create_dir_all(prof.join("mindstudio_profiler_output")).unwrap();
        std::fs::write(
            prof.join("device_3/info.json.3"),
            r#"{"rank_id": 5, "hostUid": "x"}"#,
        )
        .unwrap();
        let f = prof.join("mindstudio_profiler_output/op_summary_20250101120000.csv");
        assert_eq!(rank_from_path(f.to_str().unwrap()), Some(5));
        std::fs::write(prof.join("device_3/info.json.3"), r#"{"rank_id": -1}"#).unwrap();
        assert_eq!(rank_from_path(f.to_str().unwrap()), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
