//! Which result cache folder a command uses: `--cache DIR`, else the default
//! (`$XDG_CACHE_HOME/profscope`, else `~/.cache/profscope`); none with `--no-cache` or when
//! `PROFSCOPE_NO_CACHE` is set (to anything but an empty string or `0`). [`CacheArgs`]: the same
//! three flags on every command that analyses profiles (`analyze`, `report`, `diff`).

use crate::pipeline::RunOpts;
use std::path::{Path, PathBuf};

/// The cache flags every command that analyses profiles takes.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct CacheArgs {
    /// Result cache folder: an unchanged file's results are read from there instead of analysing
    /// it again (default: $XDG_CACHE_HOME/profscope, else ~/.cache/profscope).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Analyse every file, read and write no cache (also: PROFSCOPE_NO_CACHE=1).
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
    /// Size cap of the cache folder, e.g. 1G, 200M: after the run the least recently used
    /// results are removed until the rest fit (default: 1G).
    #[arg(long, value_parser = super::values::parse_bytes, value_name = "SIZE", conflicts_with = "no_cache")]
    pub cache_max_size: Option<u64>,
}

impl CacheArgs {
    /// `opts` with the cache these flags choose for a run over `inputs`.
    pub fn apply(
        &self,
        opts: RunOpts,
        inputs: &crate::ingest::footprint::Footprint,
    ) -> anyhow::Result<RunOpts> {
        Ok(RunOpts {
            cache: choose(self.cache.as_deref(), self.no_cache, inputs)?,
            cache_max_bytes: self
                .cache_max_size
                .unwrap_or(crate::pipeline::cache::DEFAULT_MAX_BYTES),
            ..opts
        })
    }
}

/// True when `PROFSCOPE_NO_CACHE` turns the cache off.
pub fn off_by_env() -> bool {
    std::env::var_os("PROFSCOPE_NO_CACHE").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The cache folder for a run over `inputs`; an error when it lies inside an input (inputs are
/// never written to).
pub fn choose(
    flag: Option<&Path>,
    no_cache: bool,
    inputs: &crate::ingest::footprint::Footprint,
) -> anyhow::Result<Option<PathBuf>> {
    if no_cache || (flag.is_none() && off_by_env()) {
        return Ok(None);
    }
    let Some(dir) = flag
        .map(Path::to_path_buf)
        .or_else(crate::pipeline::cache::default_dir)
    else {
        return Ok(None);
    };
    if let Some(why) = inputs.clash(&dir, true) {
        anyhow::bail!(
            "the cache folder {}: {why}: inputs are never written to; choose another --cache folder or --no-cache",
            dir.display()
        );
    }
    Ok(Some(dir))
}
