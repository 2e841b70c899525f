//! The progress lines of the collection commands: one JSON object per line on stderr
//! (`{"t": <UTC time>, "event": ..., "detail": ...}`), shared by `collect case`, `collect msprof`
//! and the manifest's knowledge matching, so none of them imports another for it.

use serde_json::json;

/// `YYYYmmddTHHMMSSZ` now.
pub fn now() -> String {
    super::archive::compact_utc(std::time::SystemTime::now())
}

/// One progress line on stderr.
pub fn progress(event: &str, detail: serde_json::Value) {
    eprintln!("{}", json!({"t": now(), "event": event, "detail": detail}));
}
