//! `profscope mcp` driven over stdin/stdout with real JSON-RPC 2.0 messages, as an MCP client
//! does: initialize, notifications/initialized, tools/list, tools/call (analyze on the real
//! ../shared/samples/ascend-pt/db/level1 root, list_ranks, memory, errors), ping, bad input.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

struct Session {
    child: Child,
    stdin: ChildStdin,
    out: BufReader<ChildStdout>,
}

impl Session {
    fn start() -> Session {
        let mut child = crate::common::profscope_command()
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Session { child, stdin, out }
    }
    fn send(&mut self, m: &str) {
        writeln!(self.stdin, "{m}").unwrap();
        self.stdin.flush().unwrap();
    }
    fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }
    fn call(&mut self, id: u64, name: &str, args: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}}).to_string());
        let r = self.recv();
        assert_eq!(r["id"], id);
        r["result"].clone()
    }
}

const ROOT: &str = "../shared/samples/ascend-pt/db/level1";

#[test]
fn a_session_end_to_end() {
    let mut s = Session::start();
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}"#);
    let r = s.recv();
    assert_eq!(r["result"]["protocolVersion"], "2025-03-26");
    assert_eq!(r["result"]["serverInfo"]["name"], "profscope");
    assert!(r["result"]["capabilities"]["tools"].is_object());
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let r = s.recv();
    assert_eq!(r["id"], 2, "the notification got no answer");
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // `query` only where the build can run it.
    if cfg!(feature = "sql") {
        assert_eq!(names, ["analyze", "memory", "diff", "list_ranks", "query"]);
    } else {
        assert_eq!(names, ["analyze", "memory", "diff", "list_ranks"]);
    }
    for t in r["result"]["tools"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        assert_eq!(t["inputSchema"]["type"], "object", "{name}");
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{name}");
        assert_eq!(t["outputSchema"]["type"], "object", "{name}");
        // Every parameter says what it is.
        for (p, schema) in t["inputSchema"]["properties"].as_object().unwrap() {
            let d = schema["description"].as_str().unwrap_or("");
            assert!(d.len() > 20, "{name}.{p} has no description");
        }
    }
    let memory_paths = r["result"]["tools"][1]["inputSchema"]["properties"]["paths"]["description"]
        .as_str()
        .unwrap();
    assert!(memory_paths.contains("npu-smi"), "{memory_paths}");

    // analyze without `only` or `max_bytes`: a brief of at most 12,000 bytes that still holds the
    // headline and says how to ask for the rest.
    let brief = s.call(30, "analyze", json!({"paths": [ROOT]}));
    let b = &brief["structuredContent"];
    assert_eq!(b["truncated"], true);
    assert!(b.to_string().len() <= 12_000, "{}", b.to_string().len());
    assert!(b["result"]["headline"].as_array().unwrap().len() >= 4);
    assert!(b["cut"].to_string().contains("only"), "{}", b["cut"]);

    // analyze on the real root, unbounded: the same report contract the CLI prints.
    let res = s.call(
        3,
        "analyze",
        json!({"paths": [ROOT], "max_bytes": 10_000_000}),
    );
    assert_eq!(res["isError"], false);
    let b = &res["structuredContent"];
    assert_eq!(b["truncated"], false);
    let rep = &b["result"];
    assert_eq!(rep["schema_version"], profscope::report::SCHEMA_VERSION);
    let text: Value = serde_json::from_str(res["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, b, "text and structured content agree");
    let cli = crate::common::profscope_command()
        .args(["analyze", "--quiet", "--format", "json", ROOT])
        .output()
        .unwrap();
    let mut cli: Value = serde_json::from_slice(&cli.stdout).unwrap();
    let mut mcp = rep.clone();
    for v in [&mut cli, &mut mcp] {
        for k in ["ingest_ms", "analysis_ms", "wall_ms"] {
            v.as_object_mut().unwrap().remove(k);
        }
    }
    assert_eq!(mcp, cli, "MCP analyze == CLI analyze (timings aside)");
    // Ranks 0 and 1 (profiler_info_0.json / profiler_info_1.json of the sample).
    assert_eq!(rep["analyses"]["ranks"]["present"], json!([0, 1]));

    // One analysis only, bounded small: arrays cut, size within the bound.
    let res = s.call(
        4,
        "analyze",
        json!({"paths": [ROOT], "only": ["top_events"], "max_bytes": 4000}),
    );
    let b = &res["structuredContent"];
    assert_eq!(b["truncated"], true);
    assert!(b.to_string().len() <= 4000, "{}", b.to_string().len());
    assert!(b["full_bytes"].as_u64().unwrap() > 4000);
    assert!(!b["cut"].as_array().unwrap().is_empty());

    // The whole report bounded to 9000 and 20000 bytes (the full one is about 127 KB; 9000 since
    // each cohort carries its clocks and communication groups, about 300 bytes more) still
    // answers: the headline whole, both ranks' cross-rank rows with their shares, the slowest rank
    // (rank 1 in the unbounded report above) and the verdicts; detail is what goes.
    for (id, max) in [(40, 9000u64), (41, 20000)] {
        let res = s.call(id, "analyze", json!({"paths": [ROOT], "max_bytes": max}));
        let b = &res["structuredContent"];
        assert_eq!(b["truncated"], true);
        assert!(b.to_string().len() as u64 <= max, "{}", b.to_string().len());
        let r = &b["result"];
        assert_eq!(
            r["headline"], rep["headline"],
            "headline kept whole at {max}"
        );
        let cohort = &r["analyses"]["cross_rank"]["cohorts"][0];
        let ranks = cohort["ranks"].as_array().unwrap();
        assert_eq!(ranks.len(), 2, "both ranks' rows at {max}");
        for (k, row) in ranks.iter().enumerate() {
            let full = &rep["analyses"]["cross_rank"]["cohorts"][0]["ranks"][k];
            for f in [
                "computing_pct",
                "communication_not_overlapped_pct",
                "free_pct",
                "step_mean_ns",
            ] {
                assert!(full[f].is_number(), "{f}");
                assert_eq!(row[f], full[f], "{f} at {max}");
            }
        }
        assert_eq!(
            cohort["slowest"]["rank"],
            rep["analyses"]["cross_rank"]["cohorts"][0]["slowest"]["rank"]
        );
        assert_eq!(cohort["slowest"]["rank"], 1);
    }

    // list_ranks: the two dbs with their ranks, without parsing.
    let res = s.call(5, "list_ranks", json!({"paths": [ROOT]}));
    let inputs = res["structuredContent"]["result"]["inputs"]
        .as_array()
        .unwrap()
        .clone();
    let ranks: Vec<i64> = inputs.iter().map(|i| i["rank"].as_i64().unwrap()).collect();
    assert_eq!(ranks, [0, 1]);
    assert!(inputs.iter().all(|i| i["format"] == "ascend_db"));

    // memory on a real npu-smi table.
    let res = s.call(6, "memory", json!({"paths": ["../shared/samples/npu-smi/vllm-ascend-843_a2-910b4_4card-visible_procs_npu-smi-23.0.6.txt"]}));
    assert_eq!(res["isError"], false);
    let devs = res["structuredContent"]["result"]["run"]["attribution"]["devices"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        devs.iter()
            .map(|d| d["device"].as_i64().unwrap())
            .collect::<Vec<_>>(),
        [4, 5, 6, 7]
    );

    // Errors are tool results, and the server keeps serving.
    let res = s.call(7, "analyze", json!({"paths": ["/nonexistent/profile"]}));
    assert_eq!(res["isError"], true);
    assert!(
        res["structuredContent"]["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/profile")
    );
    // query: a named query, row-capped. Expected values: tests/sql/stream_composition.slt
    // (level1: 2 devices x 2 streams; rank 0 stream 2 has 8,897,971 ns of compute).
    let res = s.call(
        8,
        "query",
        json!({"paths": [ROOT], "query": "stream_composition", "limit": 2}),
    );
    if cfg!(feature = "sql") {
        assert_eq!(res["isError"], false, "{res}");
        let r = &res["structuredContent"]["result"];
        assert_eq!(r["total_rows"], 4);
        assert_eq!(r["truncated"], true);
        assert_eq!(r["rows"].as_array().unwrap().len(), 2);
        assert_eq!(r["rows"][0][5], 8897971);
        assert_eq!(r["run"], "level1");
        let bad = s.call(
            12,
            "query",
            json!({"paths": [ROOT], "sql": "SELECT nope FROM events"}),
        );
        assert_eq!(bad["isError"], true);
        assert!(
            bad["structuredContent"]["error"]
                .as_str()
                .unwrap()
                .contains("nope")
        );
    } else {
        assert_eq!(res["isError"], true);
        assert!(
            res["structuredContent"]["error"]
                .as_str()
                .unwrap()
                .contains("--features sql")
        );
    }
    let res = s.call(9, "analyze", json!({"paths": [ROOT], "only": ["nope"]}));
    assert!(
        res["structuredContent"]["error"]
            .as_str()
            .unwrap()
            .contains("unknown analysis `nope`")
    );
    s.send(r#"{"jsonrpc":"2.0","id":10,"method":"resources/list"}"#);
    assert_eq!(s.recv()["error"]["code"], -32601);
    s.send("{not json");
    assert_eq!(s.recv()["error"]["code"], -32700);
    s.send(r#"{"jsonrpc":"2.0","id":11,"method":"ping"}"#);
    assert_eq!(s.recv()["result"], json!({}));
    drop(s.stdin);
    assert!(
        s.child.wait().unwrap().success(),
        "EOF ends the server cleanly"
    );
}

/// The official MCP Python SDK as a real client (tests/tools/mcp_sdk_client.py): it initializes,
/// lists the tools, validates every result against the tool's output schema (the SDK does this
/// itself), and calls analyze on the real level1 root by default, at max_bytes 9000, and on a
/// missing path. The SDK lives in a throwaway venv (`mcp==2.3.0` from PyPI, made once under the
/// temp dir, or PROFSCOPE_MCP_PYTHON); without Python or PyPI the check says SKIPPED.
#[test]
fn the_official_python_sdk_as_client() {
    let Some(python) = sdk_python() else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED MCP SDK client check: no python with the `mcp` package (set PROFSCOPE_MCP_PYTHON, or let the test pip-install mcp==2.3.0)"
        );
        return;
    };
    let out = Command::new(&python)
        .env("PROFSCOPE_NO_CACHE", "1")
        .args([
            "tests/tools/mcp_sdk_client.py",
            env!("CARGO_BIN_EXE_profscope"),
            ROOT,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the SDK client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(&names[..4], ["analyze", "memory", "diff", "list_ranks"]);
    assert!(
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["annotations"]["readOnlyHint"] == true)
    );
    let default = &v["calls"]["default"];
    assert_eq!(default["is_error"], false);
    assert!(default["text_bytes"].as_u64().unwrap() <= 12_000);
    let small = &v["calls"]["bytes9000"];
    assert_eq!(small["is_error"], false);
    assert!(small["text_bytes"].as_u64().unwrap() <= 9000);
    // The answer survives the cut: both ranks' rows and the slowest rank (rank 1, as the
    // unbounded report in `a_session_end_to_end` says).
    let cohort = &small["structured"]["result"]["analyses"]["cross_rank"]["cohorts"][0];
    assert_eq!(cohort["ranks"].as_array().unwrap().len(), 2);
    assert_eq!(cohort["slowest"]["rank"], 1);
    let bad = &v["calls"]["bad"];
    assert_eq!(bad["is_error"], true);
    assert!(
        bad["structured"]["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/profscope")
    );
}

/// A python that imports `mcp`: PROFSCOPE_MCP_PYTHON, else a venv made once under the temp dir.
fn sdk_python() -> Option<std::path::PathBuf> {
    let works = |p: &std::path::Path| {
        Command::new(p)
            .args(["-c", "import mcp.client.stdio"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if let Some(p) = std::env::var_os("PROFSCOPE_MCP_PYTHON") {
        let p = std::path::PathBuf::from(p);
        return works(&p).then_some(p);
    }
    let venv = std::env::temp_dir().join("profscope-mcp-sdk-2.3.0");
    let python = venv.join("bin/python");
    if works(&python) {
        return Some(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new(venv.join("bin/pip"))
            .args(["install", "-q", "mcp==2.3.0"])
            .status()
            .is_ok_and(|s| s.success());
    (made && works(&python)).then_some(python)
}
