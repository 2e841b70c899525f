//! Which result cache folder a command uses: `--cache DIR`, else the default
//! (`$XDG_CACHE_HOME/profscope`, else `~/.cache/profscope`); none with `--no-cache` or when
//! `PROFSCOPE_NO_CACHE` is set (to anything but an empty string or `0`).

use std::path::{Path, PathBuf};

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
