//! `profscope mcp`: a Model Context Protocol server over stdio (JSON-RPC 2.0, one message per
//! line), the small subset agents use: `initialize`, `notifications/initialized`, `ping`,
//! `tools/list`, `tools/call`. Tools: `analyze` (all analyses or some, per `only`), `memory`,
//! `diff`, `list_ranks`, `query` (needs the `sql` build). Every result is the JSON report
//! contract of the matching command, wrapped with `truncated` / `full_bytes` / `cut` and bounded
//! to `max_bytes` by the one trimmer of bounded outputs (`report::budget`: the verdict, the
//! headline, the top advice, per-rank shares and cross-rank claims first, then summaries, then
//! lists, longest last); failures are tool results with `isError: true` and a JSON
//! `{"error": ...}`, never a crashed server.

use crate::ingest::Progress;
use crate::pipeline::{self, RunOpts};
use crate::report::AnalyzeOpts;
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Protocol versions this server speaks (it answers with the client's when it knows it).
const VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];
const DEFAULT_MAX_BYTES: usize = 256 * 1024;
/// `analyze` without `only` or `max_bytes`: a brief an agent reads whole (the headline, per-rank
/// rows and verdicts; detail one call away).
const ANALYZE_BRIEF_BYTES: usize = 12_000;

#[derive(clap::Args)]
pub struct McpArgs {}

/// What every tool result holds (`structuredContent`; the same JSON as the text content).
fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "schema_version": {"type": "string", "description": "Version of the report contract (docs/json-output.md)."},
            "tool": {"type": "string"},
            "truncated": {"type": "boolean", "description": "True when parts were cut to fit max_bytes."},
            "full_bytes": {"type": "integer", "description": "Size of the uncut result's JSON, bytes."},
            "cut": {"type": "array", "items": {"type": "string"}, "description": "What was cut (per analysis: the lists with kept / total entries, or left out whole) and how to ask for it (`only`, `detail`, a larger max_bytes)."},
            "result": {"description": "The command's JSON contract: the analyze report, the memory report, the diff, the rank list or the query result."},
            "error": {"type": "string", "description": "Set instead of result when the call failed (isError is true)."}
        },
        "required": ["schema_version", "tool"]
    })
}

/// The tools with a description of every parameter; `query` only in builds that can run it.
fn tools() -> Value {
    let profiles = json!({"type": "array", "items": {"type": "string"}, "description": "Profiling inputs: files or folders (an ascend_pytorch_profiler_<rank>.db, a *_ascend_pt / PROF_* folder or a root holding several, Chrome trace JSON (.gz), msprof CSV exports, or a `collect case` manifest.json). Folders are walked."});
    let evidence = json!({"type": "array", "items": {"type": "string"}, "description": "Memory evidence files or folders: npu-smi info captures (a folder per role: idle/, ready/, peak/, post/), vLLM logs, safetensors checkpoints or their index, msprof npu_module_mem.csv exports."});
    let max = |default: usize| json!({"type": "integer", "minimum": 1000, "description": format!("Bound on the result's JSON size in bytes (default {default}), filled by importance: the verdict, the headline, the advisor's top findings, per-rank device-time shares, cross-rank claims, per-analysis summaries, then lists (cut from their tails, longest last). `cut` says what went and how to ask for it. A bound too small for the verdict and the headline is an error naming the smallest that fits.")});
    let read_only = |title: &str| json!({"title": title, "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false});
    let mut list = vec![
        json!({"name": "analyze",
         "description": format!("Analyse Ascend / PyTorch profiles: the headline (window, compute / communication / free shares and the verdict, slowest rank and why, top bubble cause, top advice, vendor agreement), then per analysis: device time, bubbles and their causes, dispatch, collective ops, kernels, ranks, cross-rank steps, advisor findings (`only: [\"advisor\", \"bubbles\", \"cross_rank\", \"graph_mode\"]`: what to change, ranked by time at stake). The JSON report contract (docs/json-output.md). Without `only` the result is a brief of about {ANALYZE_BRIEF_BYTES} bytes: ask for a section with `only` (a few analyses) or raise `max_bytes`."),
         "annotations": read_only("Analyse profiles"),
         "inputSchema": {"type": "object", "properties": {
             "paths": profiles,
             "only": {"type": "array", "items": {"type": "string", "enum": crate::registry::names()}, "description": "Run only these analyses (default: all). Each name is a key of the report's `analyses` object."},
             "phase": {"type": "string", "enum": ["prefill", "decode"], "description": "Slice to one vLLM phase before analysing (CPU forward_eager / forward_cudagraph scopes; device work follows its launch). A slice that keeps no event says so in the headline."},
             "detail": {"type": "string", "enum": ["capped", "full"], "description": "`capped` (default): a run of more than 16 devices lists the 16 that matter (per list: the ranks a verdict names, then the largest and smallest by that list's own metric; per-rank distributions keep every rank) and each per-step list its first 100 entries (`detail_capped` names each list cut). `full` lists every device and step."},
             "eager_map": {"type": "array", "items": {"type": "string"}, "description": "Eager runs of the same workload (files or folders): graph replays' kernels are mapped to the ops that launched the same kernels in their steps; read as a map only, never summed with the run (docs/analyses/graph_mode.md)."},
             "max_bytes": max(ANALYZE_BRIEF_BYTES)},
           "required": ["paths"]},
         "outputSchema": output_schema()}),
        json!({"name": "memory",
         "description": "What holds HBM on each device (weights, KV cache, graph capture, HCCL, runtime, activations, residual), with the source of every figure and what stays unknown.",
         "annotations": read_only("Attribute HBM"),
         "inputSchema": {"type": "object", "properties": {
             "paths": evidence,
             "tp": {"type": "integer", "minimum": 1, "description": "Tensor-parallel size of the service (divides the weights per device; default 1)."},
             "dp": {"type": "integer", "minimum": 1, "description": "Data-parallel size (replicas; default 1)."},
             "expert_parallel": {"type": "boolean", "description": "Experts are sharded across the TP×DP devices (vLLM --enable-expert-parallel; default false)."},
             "max_bytes": max(DEFAULT_MAX_BYTES)},
           "required": ["paths"]},
         "outputSchema": output_schema()}),
        json!({"name": "diff",
         "description": "Compare two runs metric by metric (step time, shares, bubbles, kernels, collective waits, link bandwidth), with optional thresholds: the CI regression gate.",
         "annotations": read_only("Compare two runs"),
         "inputSchema": {"type": "object", "properties": {
             "base": {"type": "string", "description": "The baseline: a saved report (analyze --save / --format json) or a profiling root."},
             "new": {"type": "string", "description": "The run to judge: a saved report or a profiling root."},
             "fail_on": {"type": "string", "description": "Thresholds, comma-separated: `METRIC>+N` fails on a rise above N, `METRIC<-N` on a fall below -N; N ends in `%` (relative to base), `pt` (percentage points, for share metrics) or a time unit `ns`, `us`, `µs`, `ms`, `s`. METRIC may end in `*` (`kernel.*>+5%`). Example: `step_time>+3%,bubble_share>+1pt`. Metric names: docs/diff.md. A crossed threshold is a FAIL row."},
             "max_bytes": max(DEFAULT_MAX_BYTES)},
           "required": ["base", "new"]},
         "outputSchema": output_schema()}),
        json!({"name": "list_ranks",
         "description": "The profiling inputs under paths, one per rank capture, with format, size and rank, and what was skipped and why (no parsing: instant).",
         "annotations": read_only("List rank captures"),
         "inputSchema": {"type": "object", "properties": {"paths": profiles, "max_bytes": max(DEFAULT_MAX_BYTES)}, "required": ["paths"]},
         "outputSchema": output_schema()}),
    ];
    if cfg!(feature = "sql") {
        let names: Vec<&str> = crate::query::named::NAMED.iter().map(|n| n.name).collect();
        list.push(json!({"name": "query",
         "description": format!("Read-only SQL over the normalized tables: `events` (one row per event, denormalized) and `steps` (docs/query.md). Give `sql`, or `query`: one of {}. Rows are capped at `limit`; total_rows says how many there were.", names.join(", ")),
         "annotations": read_only("SQL over the tables"),
         "inputSchema": {"type": "object", "properties": {
             "paths": profiles,
             "sql": {"type": "string", "description": "One read-only SELECT over `events` and `steps` (DuckDB / polars SQL dialect, docs/query.md)."},
             "query": {"type": "string", "enum": names, "description": "A named query instead of `sql` (queries/*.sql)."},
             "limit": {"type": "integer", "minimum": 1, "maximum": QUERY_MAX_ROWS, "description": format!("Rows returned (default {QUERY_DEFAULT_ROWS}, at most {QUERY_MAX_ROWS}).")},
             "run": {"type": "string", "description": "The value of the `run` column (default: the first input's folder name), to tell runs apart when results are combined."},
             "max_bytes": max(DEFAULT_MAX_BYTES)},
           "required": ["paths"]},
         "outputSchema": output_schema()}));
    }
    Value::Array(list)
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
    let r = pipeline::query::query_paths(&paths, name, sql, run, Some(limit))?;
    Ok(serde_json::to_value(&r)?)
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
                .find(|n| crate::registry::find(n).is_none())
            {
                anyhow::bail!(
                    "unknown analysis `{bad}` (known: {})",
                    crate::registry::names().join(", ")
                );
            }
            use clap::ValueEnum;
            let phase = match args["phase"].as_str() {
                None => None,
                Some(p) => Some(
                    crate::analysis::phases::Phase::from_str(p, false)
                        .map_err(|_| anyhow::anyhow!("phase is prefill or decode, not `{p}`"))?,
                ),
            };
            let eager_map = strings(&args["eager_map"]);
            let read: Vec<PathBuf> = paths.iter().chain(&eager_map).cloned().collect();
            let opts = RunOpts {
                // The default cache, unless it would lie inside an input (eager maps too).
                cache: super::cache::choose(
                    None,
                    false,
                    &crate::ingest::footprint::Footprint::of(&read),
                )
                .unwrap_or(None),
                eager_map,
                ..RunOpts::new(
                    AnalyzeOpts {
                        only,
                        ..Default::default()
                    },
                    phase,
                )
            };
            let full = match args["detail"].as_str() {
                None | Some("capped") => false,
                Some("full") => true,
                Some(d) => anyhow::bail!("detail is capped or full, not `{d}`"),
            };
            let mut r = pipeline::report_for(&paths, &opts, &Progress::default())?;
            if !full {
                use crate::report::detail;
                r.detail_capped = detail::cap_devices(&mut r, detail::DEFAULT_DEVICE_CAP);
                let steps = detail::cap(&mut r.analyses, detail::DEFAULT_STEP_CAP);
                r.detail_capped.extend(steps);
            }
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
            let run = pipeline::memory::one_run(&paths, &[], par)?;
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
            // The default cache, as for `analyze`, unless it would lie inside an input.
            let opts = RunOpts {
                cache: super::cache::choose(
                    None,
                    false,
                    &crate::ingest::footprint::Footprint::of(&[PathBuf::from(b), PathBuf::from(n)]),
                )
                .unwrap_or(None),
                ..RunOpts::new(AnalyzeOpts::default(), None)
            };
            let load = |p: &str| {
                pipeline::load::report_view(std::path::Path::new(p), &opts, &Progress::default())
            };
            let (mut base, mut new) = (load(b)?, load(n)?);
            let d = crate::report::diff::diff(
                b.into(),
                std::slice::from_ref(&crate::report::diff::metrics_of(&mut base)),
                n.into(),
                &crate::report::diff::metrics_of(&mut new),
                &th,
            )?
            .with_verdicts(&[(b, &base), (n, &new)])
            .with_findings(&[(b, &base), (n, &new)]);
            Ok(serde_json::to_value(&d)?)
        }
        "list_ranks" => {
            let paths = strings(&args["paths"]);
            anyhow::ensure!(!paths.is_empty(), "`paths` is required");
            let d = crate::ingest::discover(&paths)?;
            let inputs: Vec<Value> = d
                .inputs
                .iter()
                .map(|i| json!({"path": i.path, "format": i.format.as_str(), "size_bytes": i.size_bytes, "rank": crate::ingest::rank::rank_from_path(&i.path)}))
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
            let default = if name == "analyze" && args.get("only").is_none() {
                ANALYZE_BRIEF_BYTES
            } else {
                DEFAULT_MAX_BYTES
            };
            let max = args["max_bytes"].as_u64().map_or(default, |m| m as usize);
            let out = std::panic::catch_unwind(|| call_tool(name, &args))
                .unwrap_or_else(|_| Err(anyhow::anyhow!("internal error in `{name}`")));
            let out = out.and_then(|v| Ok(crate::report::budget::bound(name, &v, max)?));
            match out {
                Ok(b) => {
                    let v: Value = serde_json::from_str(&b.text).unwrap_or(Value::Null);
                    ok(
                        json!({"content": [{"type": "text", "text": b.text}], "structuredContent": v, "isError": false}),
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

/// The longest request line read (a longer one is answered with a parse error and skipped).
const MAX_LINE_BYTES: usize = 64 << 20;

/// One line of `r` into `buf` (without its newline), at most [`MAX_LINE_BYTES`] kept; Ok(None)
/// at the end of input, Ok(Some(true)) when the line was longer and cut.
fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut cut = false;
    let mut any = false;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(any.then_some(cut));
        }
        any = true;
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        let room = MAX_LINE_BYTES.saturating_sub(buf.len());
        cut |= take > room;
        buf.extend_from_slice(&chunk[..take.min(room)]);
        r.consume(take + done as usize);
        if done {
            return Ok(Some(cut));
        }
    }
}

fn parse_error(message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": message}})
}

/// The reply to one request line: a parse error for a line that is too long, not UTF-8 or not
/// JSON (and the server goes on), else the handled message or batch.
fn reply_to(line: &[u8], cut: bool) -> Option<Value> {
    if cut {
        return Some(parse_error(format!(
            "parse error: request line longer than {MAX_LINE_BYTES} bytes"
        )));
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Some(parse_error("parse error: the line is not UTF-8".into()));
    };
    if text.trim().is_empty() {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(batch)) => {
            let r: Vec<Value> = batch.iter().filter_map(handle).collect();
            (!r.is_empty()).then_some(Value::Array(r))
        }
        Ok(m) => handle(&m),
        Err(e) => Some(parse_error(format!("parse error: {e}"))),
    }
}

pub fn run(_a: McpArgs) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let mut line = Vec::new();
    while let Some(cut) = read_line(&mut input, &mut line)? {
        if let Some(r) = reply_to(&line, cut) {
            writeln!(out, "{r}")?;
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
