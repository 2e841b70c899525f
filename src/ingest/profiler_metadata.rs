//! Reading a torch_npu text export's `profiler_metadata.json` once it is found (finding it is
//! `rank::profiler_metadata`'s): the keys that become meta rows, or why the file cannot give
//! them. A file that is there but unreadable (a folder in its place, over the size cap, cut,
//! nested past the parser's depth, not an object) is a reason the reader turns into a
//! `metadata_unreadable` diagnostic, never a silent absence; a UTF-8 byte-order mark before the
//! JSON is skipped, as Python's `utf-8-sig` reads it. A leaf of `ingest`: the reader that
//! finds the file (`ingest::profiler_metadata`, for every format) writes the rows and the
//! diagnostic.

use std::path::Path;

/// The largest profiler_metadata.json read (real ones are a few KB: environment variables and
/// communicator groups).
pub const MAX_BYTES: u64 = 16 << 20;

/// The keys kept as meta rows, each as JSON text: `parallel_group_info` (communicator groups),
/// `distributed_args` and `pp_info` (the job's layout), `ENV_VARIABLES` (the environment
/// torch_npu recorded, read by the advisor).
const KEYS: [&str; 4] = [
    "parallel_group_info",
    "distributed_args",
    "pp_info",
    "ENV_VARIABLES",
];

/// The meta rows of the file at `meta`: none when there is no such file, the reason when it
/// is there but cannot be read.
pub fn read(meta: &Path) -> Result<Vec<(&'static str, String)>, String> {
    let text = match super::source::read_regular(meta, MAX_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", meta.display())),
    };
    parse(&text).map_err(|why| format!("{}: {why}", meta.display()))
}

/// The meta rows of a profiler_metadata.json's bytes, or why they cannot be read (the fuzz
/// target's entry).
pub fn parse(text: &[u8]) -> Result<Vec<(&'static str, String)>, String> {
    let body = text
        .strip_prefix(b"\xef\xbb\xbf".as_slice())
        .unwrap_or(text);
    let v: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("not JSON ({e})"))?;
    let serde_json::Value::Object(obj) = v else {
        return Err("not a JSON object".into());
    };
    Ok(KEYS
        .into_iter()
        .filter_map(|k| Some((k, obj.get(k)?.to_string())))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_for_what_cannot_be_read() {
        let dir = std::env::temp_dir().join(format!("profscope-meta-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("profiler_metadata.json");
        assert_eq!(read(&f).unwrap(), vec![]);
        std::fs::write(
            &f,
            b"\xef\xbb\xbf{\"ENV_VARIABLES\": {\"A\": \"1\"}, \"x\": 2}",
        )
        .unwrap();
        assert_eq!(
            read(&f).unwrap(),
            vec![("ENV_VARIABLES", "{\"A\":\"1\"}".into())]
        );
        std::fs::write(&f, b"{\"ENV_VARIABLES\": {\"A\"").unwrap();
        assert!(
            read(&f)
                .unwrap_err()
                .contains("not JSON (EOF while parsing")
        );
        std::fs::write(&f, "[".repeat(10_000)).unwrap();
        assert!(read(&f).unwrap_err().contains("recursion limit exceeded"));
        std::fs::write(&f, b"[1]").unwrap();
        assert!(read(&f).unwrap_err().ends_with("not a JSON object"));
        std::fs::remove_file(&f).unwrap();
        std::fs::create_dir(&f).unwrap();
        assert!(
            read(&f)
                .unwrap_err()
                .contains("not a regular file (a folder)")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
