//! The rank of an input file from its path, when nothing inside the file says it (shared by the
//! Chrome-trace and db readers).

use std::path::Path;

/// A torch_npu root's `profiler_info_<rank>.json` beside `ASCEND_PROFILER_OUTPUT/` (what
/// msprof-analyze uses too), or a rank file name (`lmdeploy_profile_<rank>`, `rank<N>`, `rank-<N>`,
/// `rank_<N>`, `msprof_<N>`, `ascend_pytorch_profiler_<N>.db`).
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
    let digits_at = stem.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (prefix, digits) = stem.split_at(digits_at);
    let known = [
        "lmdeploy_profile_",
        "ascend_pytorch_profiler_",
        "rank",
        "rank-",
        "rank_",
        "msprof_",
    ];
    if !digits.is_empty() && known.contains(&prefix) {
        return digits.parse().ok();
    }
    None
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
        assert_eq!(rank_from_path("/x/model_7.json"), None);
        assert_eq!(rank_from_path("/x/ascend_pytorch_profiler_5.db"), Some(5));
    }
}
