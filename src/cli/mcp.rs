//! `profscope mcp`: a Model Context Protocol server over stdio (JSON-RPC 2.0, one message per
//! line), the small subset agents use: `initialize`, `notifications/initialized`, `ping`,
//! `tools/list`, `tools/call`. Tools: `analyze` (all analyses or some, per `only`), `memory`,
//! `diff`, `list_ranks`, `query` (needs the `sql` build). Every result is the JSON report
//! contract of the matching command, wrapped with `truncated` / `full_bytes` and bounded to
//! `max_bytes` (long arrays cut, never the headline or the per-rank rows; then whole analyses left
//! out, detail first; the cut paths listed); failures are tool results with
//! `isError: true` and a JSON `{"error": ...}`, never a crashed server.

use crate::pipeline::{self, RunOpts};
use crate::report::AnalyzeOpts;
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Protocol versions this server speaks (it answers with the client's when it knows it).
const VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];
const DEFAULT_MAX_BYTES: usize = 256 * 1024;

#[derive(clap::Args)]
pub struct McpArgs {}

fn tools() -> Value {
    let paths = json!({"type": "array", "items": {"type": "string"}, "description": "Profile files or folders (a collect manifest works too)."});
    let max = json!({"type": "integer", "description": "Bound on the result's JSON size (default 262144)."});
    json!([
        {"name": "analyze", "description": "Analyse Ascend / PyTorch profiles: device time, bubbles, communication, kernels, ranks, cross-rank steps. The JSON report contract (docs/json-output.md).",
         "inputSchema": {"type": "object", "properties": {"paths": paths, "only": {"type": "array", "items": {"type": "string", "enum": crate::report::analyses::ANALYSES}}, "phase": {"type": "string", "enum": ["prefill", "decode"]}, "max_bytes": max}, "required": ["paths"]}},
        {"name": "memory", "description": "HBM attribution per device from npu-smi, vLLM logs, safetensors and msprof module memory, with sources.",
         "inputSchema": {"type": "object", "properties": {"paths": paths, "tp": {"type": "integer"}, "dp": {"type": "integer"}, "expert_parallel": {"type": "boolean"}, "max_bytes": max}, "required": ["paths"]}},
        {"name": "diff", "description": "Compare two runs (saved reports or profiles) metric by metric, with optional thresholds (e.g. step_time>+3%).",
         "inputSchema": {"type": "object", "properties": {"base": {"type": "string"}, "new": {"type": "string"}, "fail_on": {"type": "string"}, "max_bytes": max}, "required": ["base", "new"]}},
        {"name": "list_ranks", "description": "The profiling inputs under paths, one per rank capture, with format, size and rank (no parsing).",
         "inputSchema": {"type": "object", "properties": {"paths": paths, "max_bytes": max}, "required": ["paths"]}},
        {"name": "query", "description": format!("Read-only SQL over the normalized tables: `events` (one row per event, denormalized) and `steps` (docs/query.md). Give `sql`, or `query`: one of {}. Rows are capped at `limit` (default {QUERY_DEFAULT_ROWS}, at most {QUERY_MAX_ROWS}); total_rows says how many there were. Needs a build with the cargo feature `sql`.", crate::query::named::NAMED.iter().map(|n| n.name).collect::<Vec<_>>().join(", ")),
         "inputSchema": {"type": "object", "properties": {"paths": paths, "sql": {"type": "string"}, "query": {"type": "string", "enum": crate::query::named::NAMED.iter().map(|n| n.name).collect::<Vec<_>>()}, "limit": {"type": "integer"}, "run": {"type": "string"}, "max_bytes": max}, "required": ["paths"]}},
    ])
}

/// Rows the `query` tool returns unless `limit` says otherwise, and its hard cap.
const QUERY_DEFAULT_ROWS: usize = 200;
const QUERY_MAX_ROWS: usize = 10_000;

#[cfg(not(feature = "sql"))]
fn query_tool(_: &Value) -> anyhow::Result<Value> {
    anyhow::bail!("{}", crate::query::NO_SQL_HINT)
}

#[cfg(feature = "sql")]
fn query_tool(args: &Value) -> anyhow::Result<Value> {
    let paths = strings(&args["paths"]);
    anyhow::ensure!(!paths.is_empty(), "`paths` is required");
    let (name, sql) = match (args["sql"].as_str(), args["query"].as_str()) {
        (Some(sql), None) => ("adhoc", sql),
        (None, Some(q)) => {
            let n = crate::query::named::find(q)
                .ok_or_else(|| anyhow::anyhow!("`{q}` is not a named query"))?;
            (n.name, n.sql)
        }
        _ => anyhow::bail!("give exactly one of `sql` and `query`"),
    };
    let limit = args["limit"]
        .as_u64()
        .map_or(QUERY_DEFAULT_ROWS, |l| l as usize)
        .min(QUERY_MAX_ROWS);
    let run = args["run"].as_str().map(str::to_string);
    let r = super::query::query_paths(&paths, name, sql, run, Some(limit))?;
    Ok(serde_json::to_value(&r)?)
}

/// Arrays an answer needs, never cut: the headline, the rank lists, the per-device lists of the
/// analyses (their detail inside is cut), each cross-rank cohort's per-rank rows and the
/// per-rank collective wait ratios.
fn protected(at: &str) -> bool {
    let per_device = at
        .strip_prefix("$.analyses.")
        .is_some_and(|rest| !rest.contains(['.', '[']));
    per_device
        || at == "$.headline"
        || at == "$.summary.ranks"
        || at.ends_with(".cross_rank.cohorts")
        || (at.contains(".cross_rank.cohorts[") && at.ends_with("].ranks"))
        || at.ends_with(".present")
        || at.ends_with(".wait_ratios")
}

/// Analyses left out, in this order, when cutting arrays is not enough: detail first, then the
/// per-device sections; what stays is the headline, the verdicts and the per-rank rows.
const DROP_ORDER: &[&str] = &[
    "composition",
    "op_types",
    "top_events",
    "kernel_types_complete_steps",
    "kernel_types",
    "communication_ops",
    "dispatch",
    "bubbles",
    "communication",
    "phases",
    "mtp",
    "step_sync",
    "batch_audit",
    "vendor_agreement",
    "device_time",
];

/// Cuts arrays longer than `n` to `n` items (protected ones only when `all`), recording the paths
/// cut.
fn cut(v: &mut Value, n: usize, at: &str, all: bool, cuts: &mut Vec<String>) {
    match v {
        Value::Array(a) => {
            if a.len() > n && (all || !protected(at)) {
                cuts.push(format!("{at} ({} of {})", n, a.len()));
                a.truncate(n);
            }
            for (i, x) in a.iter_mut().enumerate() {
                cut(x, n, &format!("{at}[{i}]"), all, cuts);
            }
        }
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                cut(x, n, &format!("{at}.{k}"), all, cuts);
            }
        }
        _ => {}
    }
}

/// The result wrapped and bounded to `max` bytes of JSON: long arrays are cut first (never the
/// headline or the per-rank rows); a report that still does not fit loses whole analyses in
/// [`DROP_ORDER`], each replaced by a line saying how to ask for it.
pub fn bounded(tool: &str, v: Value, max: usize) -> Value {
    let full = v.to_string().len();
    let wrap = |result: Value, cuts: Vec<String>| json!({"schema_version": crate::report::SCHEMA_VERSION, "tool": tool, "truncated": !cuts.is_empty(), "full_bytes": full, "cut": cuts.iter().take(20).collect::<Vec<_>>(), "result": result});
    if full <= max {
        return wrap(v, vec![]);
    }
    let fits = |w: &Value| w.to_string().len() <= max;
    for n in [100, 30, 10, 3, 1] {
        let mut x = v.clone();
        let mut cuts = Vec::new();
        cut(&mut x, n, "$", false, &mut cuts);
        let w = wrap(x, cuts);
        if fits(&w) {
            return w;
        }
    }
    if v["analyses"].is_object() {
        for k in 1..=DROP_ORDER.len() {
            let mut x = v.clone();
            let dropped = &DROP_ORDER[..k];
            for name in dropped {
                if let Some(a) = x["analyses"].get_mut(*name) {
                    *a = json!(format!(
                        "left out to fit max_bytes: call analyze with only [\"{name}\"]"
                    ));
                }
            }
            let mut cuts = vec![format!("$.analyses left out: {}", dropped.join(", "))];
            cut(&mut x, 0, "$", false, &mut cuts);
            let w = wrap(x, cuts);
            if fits(&w) {
                return w;
            }
        }
    }
    let mut x = v;
    let mut cuts = Vec::new();
    cut(&mut x, 0, "$", true, &mut cuts);
    wrap(x, cuts)
}

fn strings(v: &Value) -> Vec<PathBuf> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str())
        .map(PathBuf::from)
        .collect()
}

fn call_tool(name: &str, args: &Value) -> anyhow::Result<Value> {
    match name {
        "analyze" => {
            let paths = strings(&args["paths"]);
            anyhow::ensure!(!paths.is_empty(), "`paths` is required (files or folders)");
            let only: Option<Vec<String>> = args["only"].as_array().map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            });
            if let Some(bad) = only
                .iter()
                .flatten()
                .find(|n| !crate::report::analyses::ANALYSES.contains(&n.as_str()))
            {
                anyhow::bail!(
                    "unknown analysis `{bad}` (known: {})",
                    crate::report::analyses::ANALYSES.join(", ")
                );
            }
            use crate::analysis::phases::Phase;
            let phase = match args["phase"].as_str() {
                None => None,
                Some("prefill") => Some(Phase::Prefill),
                Some("decode") => Some(Phase::Decode),
                Some(p) => anyhow::bail!("phase is prefill or decode, not `{p}`"),
            };
            let opts = RunOpts {
                analyze: AnalyzeOpts {
                    only,
                    ..Default::default()
                },
                phase,
                jobs: rayon::current_num_threads(),
                max_memory: pipeline::default_max_memory(),
            };
            let r = super::analyze::report_for(&paths, &opts, true)?;
            Ok(serde_json::to_value(&r)?)
        }
        "memory" => {
            let paths = strings(&args["paths"]);
            anyhow::ensure!(!paths.is_empty(), "`paths` is required");
            let par = crate::report::memory::Parallel {
                tp: args["tp"].as_u64().unwrap_or(1),
                dp: args["dp"].as_u64().unwrap_or(1),
                expert_parallel: args["expert_parallel"].as_bool().unwrap_or(false),
            };
            let run = super::memory::one_run(&paths, &[], par)?;
            Ok(serde_json::to_value(crate::report::memory::report(
                run, None,
            ))?)
        }
        "diff" => {
            let (Some(b), Some(n)) = (args["base"].as_str(), args["new"].as_str()) else {
                anyhow::bail!("`base` and `new` are required");
            };
            let th = match args["fail_on"].as_str() {
                Some(s) => crate::report::diff::parse_thresholds(s)?,
                None => Vec::new(),
            };
            let base = super::diff::load(std::path::Path::new(b), true)?;
            let new = super::diff::load(std::path::Path::new(n), true)?;
            let d = crate::report::diff::diff(
                b.into(),
                &crate::report::diff::metrics(&base),
                n.into(),
                &crate::report::diff::metrics(&new),
                &th,
            )?;
            Ok(serde_json::to_value(&d)?)
        }
        "list_ranks" => {
            let paths = strings(&args["paths"]);
            anyhow::ensure!(!paths.is_empty(), "`paths` is required");
            let d = crate::ingest::discover(&paths)?;
            let inputs: Vec<Value> = d
                .inputs
                .iter()
                .map(|i| json!({"path": i.path, "format": format!("{:?}", i.format), "size_bytes": i.size_bytes, "rank": crate::ingest::rank::rank_from_path(&i.path)}))
                .collect();
            let skipped: Vec<Value> = d.skipped.iter().map(|s| json!(format!("{s:?}"))).collect();
            Ok(json!({"inputs": inputs, "skipped": skipped}))
        }
        "query" => query_tool(args),
        other => anyhow::bail!("unknown tool `{other}`"),
    }
}

/// Handles one message; None for notifications.
pub fn handle(msg: &Value) -> Option<Value> {
    let id = msg.get("id").cloned();
    let method = msg["method"].as_str().unwrap_or("");
    let ok = |result: Value| Some(json!({"jsonrpc": "2.0", "id": id.clone(), "result": result}));
    let err = |code: i64, message: String| {
        Some(
            json!({"jsonrpc": "2.0", "id": id.clone(), "error": {"code": code, "message": message}}),
        )
    };
    // Notifications (initialized, cancelled) carry no id and get no answer.
    id.as_ref()?;
    match method {
        "initialize" => {
            let asked = msg["params"]["protocolVersion"]
                .as_str()
                .unwrap_or(VERSIONS[0]);
            let v = if VERSIONS.contains(&asked) {
                asked
            } else {
                VERSIONS[0]
            };
            ok(
                json!({"protocolVersion": v, "capabilities": {"tools": {"listChanged": false}}, "serverInfo": {"name": "profscope", "version": env!("CARGO_PKG_VERSION")}, "instructions": "Tools return profscope's JSON report contract (schema_version inside), bounded by max_bytes."}),
            )
        }
        "ping" => ok(json!({})),
        "tools/list" => ok(json!({"tools": tools()})),
        "tools/call" => {
            let name = msg["params"]["name"].as_str().unwrap_or("");
            let args = msg["params"].get("arguments").cloned().unwrap_or(json!({}));
            let max = args["max_bytes"]
                .as_u64()
                .map_or(DEFAULT_MAX_BYTES, |m| m as usize);
            let out = std::panic::catch_unwind(|| call_tool(name, &args))
                .unwrap_or_else(|_| Err(anyhow::anyhow!("internal error in `{name}`")));
            match out {
                Ok(v) => {
                    let b = bounded(name, v, max);
                    ok(
                        json!({"content": [{"type": "text", "text": b.to_string()}], "structuredContent": b, "isError": false}),
                    )
                }
                Err(e) => {
                    let b = json!({"schema_version": crate::report::SCHEMA_VERSION, "tool": name, "error": super::error_text(&e)});
                    ok(
                        json!({"content": [{"type": "text", "text": b.to_string()}], "structuredContent": b, "isError": true}),
                    )
                }
            }
        }
        m => err(-32601, format!("method not found: {m}")),
    }
}

pub fn run(_a: McpArgs) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Value>(&line) {
            Ok(Value::Array(batch)) => {
                let r: Vec<Value> = batch.iter().filter_map(handle).collect();
                (!r.is_empty()).then_some(Value::Array(r))
            }
            Ok(m) => handle(&m),
            Err(e) => Some(
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("parse error: {e}")}}),
            ),
        };
        if let Some(r) = reply {
            writeln!(out, "{r}")?;
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
