//! `profscope collect verify|archive`: collection gates on a captured root. Prints one JSON object
//! on stdout; exit 0 when every gate passed, 1 when one failed, 2 on error.

use crate::collect::{archive, verify};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct CollectArgs {
    #[command(subcommand)]
    pub command: CollectCommand,
}

#[derive(Subcommand)]
pub enum CollectCommand {
    /// Check that every rank folder's analyse() output landed (db and/or text export).
    Verify(VerifyArgs),
    /// Verify, then copy every rank's outputs into `<TO>/<tag>_<UTC time>/` (itself a valid root).
    Archive(ArchiveArgs),
}

#[derive(Args)]
pub struct VerifyArgs {
    /// The profiler directory holding the `*_ascend_pt` rank folders.
    pub root: PathBuf,
    /// Rank folders the run must have (tp x dp); a different count fails the gate.
    #[arg(long)]
    pub expected_ranks: Option<u32>,
    /// What analyse() was asked to export.
    #[arg(long, value_enum, default_value_t = verify::Export::Db)]
    pub export: verify::Export,
}

#[derive(Args)]
pub struct ArchiveArgs {
    #[command(flatten)]
    pub verify: VerifyArgs,
    /// Archive folder (shared storage).
    #[arg(long)]
    pub to: PathBuf,
    /// Tag of the case (the archived root is `<tag>_<UTC time>`).
    #[arg(long, default_value = "profile")]
    pub tag: String,
}

pub fn run(a: CollectArgs) -> anyhow::Result<ExitCode> {
    let (json, ok) = match a.command {
        CollectCommand::Verify(v) => {
            let r = verify::verify(&v.root, v.expected_ranks, v.export)?;
            (serde_json::to_string_pretty(&r)?, r.status == "ok")
        }
        CollectCommand::Archive(x) => {
            let v = &x.verify;
            let r = archive::archive(&v.root, &x.to, &x.tag, v.expected_ranks, v.export)?;
            (serde_json::to_string_pretty(&r)?, r.status == "ok")
        }
    };
    crate::cli::write_stdout(&(json + "\n"))?;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
