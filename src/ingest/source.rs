//! Getting a plain file's bytes without copying them: a read-only memory map (never locked or
//! modified). Pages already parsed can be released so that resident memory stays bounded by the
//! tables. Compressed files are not mapped; they stream (see `chrome_json::stream`).

use super::error::IngestError;
use memmap2::Mmap;
use std::fs::File;
use std::io::Read;

enum Bytes {
    Mapped(Mmap),
    Empty,
}

pub struct Source {
    bytes: Bytes,
    pub size_on_disk: u64,
}

/// True if the file starts with the gzip magic bytes.
pub fn is_gzip(path: &str) -> std::io::Result<bool> {
    let mut magic = [0u8; 2];
    let mut f = File::open(path)?;
    let n = f.read(&mut magic)?;
    Ok(n == 2 && magic == [0x1f, 0x8b])
}

impl Source {
    pub fn open(path: &str) -> Result<Source, IngestError> {
        let io = |e: std::io::Error| IngestError::Io {
            path: path.to_string(),
            source: e,
        };
        let file = File::open(path).map_err(io)?;
        let size_on_disk = file.metadata().map_err(io)?.len();
        if size_on_disk == 0 {
            return Ok(Source {
                bytes: Bytes::Empty,
                size_on_disk,
            });
        }
        // SAFETY: read-only private mapping; profscope never writes to it. If another process
        // truncates the file while we read, the OS may signal; profiling outputs are not rewritten
        // in place by their producers once closed.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(Source {
            bytes: Bytes::Mapped(map),
            size_on_disk,
        })
    }

    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Empty => &[],
        }
    }

    /// Drops parsed pages of `[start, end)` from this process's resident set (mapped files only;
    /// the page cache keeps them, and a later read faults them back in).
    pub fn release(&self, start: usize, end: usize) {
        #[cfg(unix)]
        if let Bytes::Mapped(m) = &self.bytes {
            const PAGE: usize = 4096;
            let s = start.div_ceil(PAGE) * PAGE;
            let e = (end.min(m.len()) / PAGE) * PAGE;
            if e > s {
                // SAFETY: DONTNEED on a read-only private file mapping only discards clean pages;
                // any later access re-reads the same file contents.
                let _ = unsafe {
                    m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, s, e - s)
                };
            }
        }
        #[cfg(not(unix))]
        let _ = (start, end);
    }
}
