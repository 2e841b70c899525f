//! Command-line interface: clap arguments → options, one file per subcommand, and the only place
//! that picks exit codes (0 ok, 1 ran and found problems, 2 error) and prints errors.

mod allocator;
mod analyze;
mod cache;
mod collect;
mod diff;
mod export;
mod mcp;
mod memory;
mod progress;
mod query;
mod report;
mod synth;
mod values;
mod weights;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "profscope",
    version,
    about = "Turns Ascend NPU / PyTorch profiles into answers"
)]
struct Cli {
    /// Plain ASCII in tables and text (`us` for µs, `x` for ×, `->` for →, `+--+` borders), for
    /// terminals and logs that cannot show them. JSON is never changed.
    #[arg(long, global = true)]
    ascii: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Ingest a profile (file or folder; default: the bundled demo root) and print the report.
    Analyze(analyze::AnalyzeArgs),
    /// Compare two runs (saved reports or profiles) metric by metric; with --fail-on, exit 1 when
    /// a threshold is crossed (a CI regression gate).
    Diff(diff::DiffArgs),
    /// Collection gates: verify that every rank's outputs landed, archive a verified root.
    Collect(collect::CollectArgs),
    /// A checkpoint's tensors by class: exact bytes, estimated per-device share under TP/EP
    /// (safetensors headers or index only).
    Weights(weights::WeightsArgs),
    /// What holds HBM on each device (weights, KV cache, graph capture, HCCL, runtime,
    /// activations, residual), from npu-smi, vLLM logs, safetensors and msprof evidence.
    Memory(memory::MemoryArgs),
    /// Export the tables: --perfetto OUT.json (a windowed Chrome trace with derived tracks for
    /// the Perfetto UI) and/or --parquet DIR (the events as Hive-partitioned Parquet).
    Export(export::ExportArgs),
    /// SQL over the normalized tables of any input (--sql, --query NAME, FILE.sql; --list).
    /// Needs a build with the cargo feature `sql`.
    Query(query::QueryArgs),
    /// The report as one offline HTML page with charts (--html OUT.html).
    Report(report::ReportArgs),
    /// A Model Context Protocol server on stdio: analyze, memory, diff, list_ranks, query as
    /// tools returning the JSON report contract.
    Mcp(mcp::McpArgs),
    /// Write a deterministic, realistic Ascend serving profiling root with its ground truth.
    Synth(synth::SynthArgs),
}

pub fn main() -> ExitCode {
    allocator::tune();
    let cli = Cli::parse();

    crate::render::set_ascii(cli.ascii);
    match dispatch(cli.command) {
        Ok(code) => code,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!(
                "profscope: error: {}",
                crate::render::escape_controls(&error_text(&e))
            );
            ExitCode::from(2)
        }
    }
}

/// What an in-process run of the CLI ([`run_captured`]) ended with.
#[derive(Debug)]
pub struct Captured {
    /// What the command printed on stdout.
    pub stdout: String,
    /// Its exit code: 0 ok, 1 ran and found problems (a crossed `diff --fail-on` gate).
    pub code: u8,
}

/// The CLI run in-process, for the Python binding (python/): `argv` as typed after `profscope`;
/// returns what the command would print on stdout and its exit code, or the error text the CLI
/// would print after `profscope: error: ` (exit 2; a usage error carries clap's message). Every
/// binding call is such a run, so its numbers are the CLI's by construction.
pub fn run_captured(argv: &[String]) -> Result<Captured, String> {
    let cli =
        Cli::try_parse_from(std::iter::once("profscope").chain(argv.iter().map(String::as_str)))
            .map_err(|e| e.to_string())?;
    crate::render::set_ascii(cli.ascii);
    CAPTURE.with(|c| *c.borrow_mut() = Some(String::new()));
    let result = dispatch(cli.command);
    let stdout = CAPTURE.with(|c| c.borrow_mut().take()).unwrap_or_default();
    match result {
        Ok(code) => Ok(Captured {
            stdout,
            code: if code == ExitCode::SUCCESS { 0 } else { 1 },
        }),
        Err(e) => Err(crate::render::escape_controls(&error_text(&e)).into_owned()),
    }
}

std::thread_local! {
    /// Set by [`run_captured`]: [`write_stdout`] appends here instead of writing to stdout.
    static CAPTURE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Analyze(a) => analyze::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Collect(a) => collect::run(a),
        Command::Weights(a) => weights::run(a),
        Command::Memory(a) => memory::run(a),
        Command::Mcp(a) => mcp::run(a),
        Command::Export(a) => export::run(a),
        Command::Report(a) => report::run(a),
        Command::Query(a) => query::run(a),
        Command::Synth(a) => synth::run(a),
    }
}

/// The most ranks `--expected-ranks` may name (far above any real job; bounds what a typo can
/// make the rank table allocate).
pub(crate) const MAX_RANKS: i64 = 1 << 17;

/// Refuses an output path that is an input file under `inputs` by device and inode or by real
/// path (a hard link, a symbolic link, the path itself), or a folder holding one: inputs are
/// never overwritten.
pub(crate) fn refuse_overwriting_inputs(
    out: &std::path::Path,
    inputs: &crate::ingest::footprint::Footprint,
) -> anyhow::Result<()> {
    if let Some(why) = inputs.clash(out, false) {
        anyhow::bail!("{why}: inputs are never overwritten; choose another output path");
    }
    Ok(())
}

/// The error and its causes, each said once: layer errors already include their cause's text
/// (`path: Not a directory (os error 20)`), so a cause repeated verbatim is left out.
pub(crate) fn error_text(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for c in e.chain() {
        // No cause echoes megabytes of a hostile file.
        let t = crate::diag::cap_text(&c.to_string(), 4000).into_owned();
        if msg.contains(&t) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&t);
    }
    msg
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Writes to stdout; a closed pipe (`| head`) surfaces as BrokenPipe and ends quietly.
pub(crate) fn write_stdout(s: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let captured = CAPTURE.with(|c| match c.borrow_mut().as_mut() {
        Some(buf) => {
            buf.push_str(s);
            true
        }
        None => false,
    });
    if captured {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())?;
    out.flush()?;
    Ok(())
}
