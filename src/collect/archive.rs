//! `collect archive ROOT --to DIR`: after every rank verified ok, copy each rank's
//! `ASCEND_PROFILER_OUTPUT/` plus `profiler_info_*.json` and `profiler_metadata.json` into
//! `<DIR>/<tag>_<YYYYmmddTHHMMSSZ>/<rank folder name>/`, so the archive is itself a valid
//! profiling root. Sources are only read. A copy failure is recorded (`archive_error`, the rank's
//! `archived_path` null) and never turns a verified run into a failed one.

use super::verify::{Export, Verify, verify};
use super::{CollectError, Outcome};
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, Serialize)]
pub struct ArchivedRank {
    pub dir: String,
    pub archived_path: Option<String>,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Archive {
    pub schema_version: &'static str,
    pub verify: Verify,
    pub archive_dir: Option<String>,
    pub archived: bool,
    pub archive_error: Option<String>,
    pub ranks: Vec<ArchivedRank>,
    /// The verify status: archiving never changes it.
    pub status: Outcome,
}

/// `YYYYmmddTHHMMSSZ` of a time (UTC), without a date library (days → civil date, H. Hinnant).
pub fn compact_utc(t: std::time::SystemTime) -> String {
    let s = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (days, rem) = (s.div_euclid(86_400), s.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<u64> {
    std::fs::create_dir_all(to)?;
    let mut bytes = 0;
    for e in std::fs::read_dir(from)? {
        let p = e?.path();
        let dest = to.join(p.file_name().expect("entries have names"));
        if p.is_dir() {
            bytes += copy_tree(&p, &dest)?;
        } else {
            bytes += std::fs::copy(&p, &dest)?;
        }
    }
    Ok(bytes)
}

/// The files of one rank folder that make an archived rank.
fn copy_rank(dir: &Path, dest: &Path) -> std::io::Result<u64> {
    let mut bytes = copy_tree(
        &dir.join("ASCEND_PROFILER_OUTPUT"),
        &dest.join("ASCEND_PROFILER_OUTPUT"),
    )?;
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let keep = (name.starts_with("profiler_info_") && name.ends_with(".json"))
            || name == "profiler_metadata.json";
        if keep && p.is_file() {
            bytes += std::fs::copy(&p, dest.join(name))?;
        }
    }
    Ok(bytes)
}

pub fn archive(
    root: &Path,
    to: &Path,
    tag: &str,
    expected: Option<u32>,
    export: Export,
) -> Result<Archive, CollectError> {
    if !super::valid_tag(tag) {
        return Err(CollectError::BadTag(tag.to_string()));
    }
    // An archive inside the root would add a copy of every rank to the root itself.
    let footprint = crate::ingest::footprint::Footprint::of(&[root.to_path_buf()]);
    if let Some(why) = footprint.clash(to, true) {
        return Err(CollectError::OutputOnInput(why));
    }
    let v = verify(root, expected, export)?;
    let status = v.status;
    let mut ranks: Vec<ArchivedRank> = v
        .ranks
        .iter()
        .map(|r| ArchivedRank {
            dir: r.dir.clone(),
            archived_path: None,
            bytes: 0,
        })
        .collect();
    if status != Outcome::Ok {
        return Ok(Archive {
            schema_version: super::SCHEMA_VERSION,
            verify: v,
            archive_dir: None,
            archived: false,
            archive_error: Some("not archived: the root did not verify".into()),
            ranks,
            status,
        });
    }
    let dir = to.join(format!(
        "{tag}_{}",
        compact_utc(std::time::SystemTime::now())
    ));
    let mut error = None;
    for r in &mut ranks {
        let src = Path::new(&r.dir);
        let dest = dir.join(src.file_name().expect("rank folders have names"));
        match copy_rank(src, &dest) {
            Ok(b) => {
                r.archived_path = Some(dest.display().to_string());
                r.bytes = b;
            }
            Err(e) => {
                error.get_or_insert_with(|| format!("{}: {e}", dest.display()));
            }
        }
    }
    Ok(Archive {
        schema_version: super::SCHEMA_VERSION,
        verify: v,
        archived: error.is_none(),
        archive_dir: Some(dir.display().to_string()),
        archive_error: error,
        ranks,
        status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_utc_known_instants() {
        let at = |s: u64| compact_utc(std::time::UNIX_EPOCH + std::time::Duration::from_secs(s));
        assert_eq!(at(0), "19700101T000000Z");
        // 2026-11-30 23:16:27 UTC (`date -u -d @1796080587`).
        assert_eq!(at(1_796_080_587), "20261130T231627Z");
        // 2024-02-29 12:00:00 UTC, a leap day.
        assert_eq!(at(1_709_208_000), "20240229T120000Z");
    }
}
