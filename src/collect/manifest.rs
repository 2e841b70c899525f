//! The collection manifest: one JSON object describing a profiling case end to end (what was
//! asked, what each step returned, which gates failed, where the outputs are). Printed on stdout
//! and written to `<runs dir>/<UTC time>_<tag>/manifest.json`; `profscope analyze MANIFEST` reads
//! its profile. Schema: docs/collect-manifest.schema.json (`MANIFEST_SCHEMA_VERSION`).

use serde::{Deserialize, Serialize};

pub const MANIFEST_SCHEMA_VERSION: &str = "1.0.0";

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Workload {
    /// `text` or `vl` (an image part in each request).
    pub request_kind: String,
    /// Approximate: the prompt is this many words.
    pub prompt_tokens: u64,
    pub output_tokens: u64,
    pub total_requests: u64,
    pub concurrency: u64,
    pub success_threshold: f64,
    pub followup_output_tokens: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Serve {
    pub url: String,
    pub start_cmd: Option<String>,
    pub stop_cmd: Option<String>,
    /// We started the service, so we stop it.
    pub started_by_us: bool,
    pub ready_after_s: Option<f64>,
    /// How the service was stopped: `stop_cmd`, `terminated`, `killed`, `not_started_by_us`,
    /// `already_exited`, or null when it was never started.
    pub stop_result: Option<String>,
}

/// One control request (`/start_profile`, `/stop_profile`, the follow-up).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Call {
    pub ok: bool,
    pub http_status: Option<u16>,
    pub wall_s: f64,
    /// Response body (first 500 bytes) or the transport error.
    pub detail: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Benchmark {
    pub total: u64,
    pub ok: u64,
    pub failed: u64,
    pub wall_s: f64,
    pub latency_ms_p50: Option<f64>,
    pub latency_ms_p90: Option<f64>,
    pub latency_ms_max: Option<f64>,
    /// Sum of `usage.completion_tokens` over successful responses.
    pub completion_tokens: u64,
    /// Up to 5 failures (status or transport error).
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct WorkloadStatus {
    /// `ok` or `failed`.
    pub status: String,
    pub bench_total: u64,
    pub bench_ok: u64,
    pub bench_success_rate: f64,
    pub bench_threshold: f64,
    pub followup_ok: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct ProfileDir {
    pub path: String,
    pub outputs: Vec<String>,
    /// The rank's analyse step: `ok`, `failed`, `timeout`, `spawn_failed`, `skipped`; then its
    /// verify status (`ok`, `partial`, `missing_kernel_details`).
    pub analysis_status: String,
    pub verify_status: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct ManifestError {
    /// `preflight`, `serve_start`, `health`, `start_profile`, `workload`, `stop_profile`,
    /// `analyse`, `verify`.
    pub stage: String,
    pub message: String,
    /// Gates that failed (`service_never_ready`, `start_profile_failed`, `workload_below_threshold`,
    /// `followup_failed`, `stop_profile_failed`, `analyse_failed`, `rank_count_mismatch`,
    /// `rank_not_ok`, ...).
    pub gates: Vec<String>,
    /// Known-failure signatures that match (`--knowledge`), best first.
    #[serde(default)]
    pub knowledge_matches: Vec<super::knowledge::KnowledgeMatch>,
}

impl ManifestError {
    /// Attaches the best known-failure matches of `dir` (a no-op without one).
    pub fn match_knowledge(&mut self, dir: Option<&std::path::Path>) {
        if let Some(d) = dir {
            let (entries, errors) = super::knowledge::load(d);
            for e in errors {
                super::progress::progress("knowledge_unreadable", serde_json::json!({"error": e}));
            }
            self.knowledge_matches = super::knowledge::best(&entries, &self.message, &self.gates);
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Manifest {
    pub schema_version: String,
    pub kind: String,
    pub tag: String,
    pub started_at: String,
    pub completed_at: Option<String>,
    pub failed_at: Option<String>,
    pub model: Option<String>,
    pub served_model_name: String,
    pub tp: u32,
    pub dp: u32,
    pub mode: String,
    pub workload: Workload,
    pub expected_ranks: u32,
    pub serve: Serve,
    pub start_profile: Option<Call>,
    pub stop_profile: Option<Call>,
    pub benchmark_results: Option<Benchmark>,
    pub followup_result: Option<Call>,
    pub workload_status: Option<WorkloadStatus>,
    pub remote_profile_root: String,
    pub remote_profile_dirs: Vec<ProfileDir>,
    pub rank_count: u32,
    /// `ok`, `failed`, `skipped`, or null when the run stopped before it.
    pub analysis_status: Option<String>,
    pub expected_output_kind: String,
    pub analyse_wall_s: Option<f64>,
    pub analyse_parallelism: Option<usize>,
    pub archive_dir: Option<String>,
    pub archived: bool,
    pub archive_error: Option<String>,
    /// `ok` or `failed`.
    pub status: String,
    pub error: Option<ManifestError>,
}

impl Manifest {
    /// The profile this manifest points at: the archive when there is one, else the profiler
    /// root.
    pub fn profile_root(&self) -> &str {
        match (&self.archive_dir, self.archived) {
            (Some(a), true) => a,
            _ => &self.remote_profile_root,
        }
    }
}

/// Reads `path` as a `collect case` manifest if it is one.
pub fn read(path: &std::path::Path) -> Option<Manifest> {
    let v = json_object(path)?;
    if v["kind"] != "profscope_collect_manifest" {
        return None;
    }
    serde_json::from_value(v).ok()
}

/// For a `collect case` or `collect msprof` manifest: (kind, status, the profile it points at).
pub fn profile_of(path: &std::path::Path) -> Option<(String, String, String)> {
    let v = json_object(path)?;
    let status = v["status"].as_str().unwrap_or("").to_string();
    match v["kind"].as_str()? {
        "profscope_collect_manifest" => {
            let m: Manifest = serde_json::from_value(v).ok()?;
            Some((m.kind.clone(), status, m.profile_root().to_string()))
        }
        "profscope_msprof_manifest" => Some((
            "profscope_msprof_manifest".into(),
            status,
            v["output_dir"].as_str()?.to_string(),
        )),
        _ => None,
    }
}

fn json_object(path: &std::path::Path) -> Option<serde_json::Value> {
    if path.extension().is_none_or(|e| e != "json") {
        return None;
    }
    let bytes = crate::ingest::source::read_regular(path, 16 << 20).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    v.is_object().then_some(v)
}

/// Writes a manifest as `<runs dir>/<started_at>_<tag>/manifest.json`; returns the path.
pub fn write_to(
    m: &impl Serialize,
    runs_dir: &std::path::Path,
    started_at: &str,
    tag: &str,
) -> std::io::Result<std::path::PathBuf> {
    let dir = runs_dir.join(format!("{started_at}_{tag}"));
    std::fs::create_dir_all(&dir)?;
    let p = dir.join("manifest.json");
    std::fs::write(&p, serde_json::to_string_pretty(m)? + "\n")?;
    Ok(p)
}
