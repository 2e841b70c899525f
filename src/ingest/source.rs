//! Getting a file's bytes without copying them: plain files are memory-mapped read-only (never
//! locked or modified); `.gz` files are decoded into memory through a streaming decoder. Pages
//! already parsed can be released so that resident memory stays bounded by the tables.

use super::error::IngestError;
use flate2::read::MultiGzDecoder;
use memmap2::Mmap;
use std::fs::File;
use std::io::Read;

enum Bytes {
    Mapped(Mmap),
    Owned(Vec<u8>),
    Empty,
}

pub struct Source {
    bytes: Bytes,
    pub size_on_disk: u64,
    pub gzip: bool,
    gzip_error: Option<String>,
}

impl Source {
    pub fn open(path: &str) -> Result<Source, IngestError> {
        let io = |e: std::io::Error| IngestError::Io {
            path: path.to_string(),
            source: e,
        };
        let file = File::open(path).map_err(io)?;
        let size_on_disk = file.metadata().map_err(io)?.len();
        let mut magic = [0u8; 2];
        let is_gz = size_on_disk >= 2 && {
            let mut f = &file;
            f.read_exact(&mut magic).map_err(io)?;
            magic == [0x1f, 0x8b]
        };
        if is_gz {
            let file = File::open(path).map_err(io)?;
            let mut out = Vec::with_capacity((size_on_disk as usize).saturating_mul(8));
            let mut dec = MultiGzDecoder::new(std::io::BufReader::with_capacity(1 << 20, file));
            let gzip_error = match dec.read_to_end(&mut out) {
                Ok(_) => None,
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Some(format!(
                    "gzip stream ends early after {} decompressed bytes",
                    out.len()
                )),
                Err(e) => Some(format!(
                    "gzip stream is corrupt after {} decompressed bytes: {e}",
                    out.len()
                )),
            };
            out.shrink_to_fit();
            return Ok(Source {
                bytes: Bytes::Owned(out),
                size_on_disk,
                gzip: true,
                gzip_error,
            });
        }
        if size_on_disk == 0 {
            return Ok(Source {
                bytes: Bytes::Empty,
                size_on_disk,
                gzip: false,
                gzip_error: None,
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
            gzip: false,
            gzip_error: None,
        })
    }

    /// Wraps bytes already in memory.
    pub fn from_vec(v: Vec<u8>) -> Source {
        let n = v.len() as u64;
        Source {
            bytes: Bytes::Owned(v),
            size_on_disk: n,
            gzip: false,
            gzip_error: None,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
            Bytes::Empty => &[],
        }
    }

    /// Why the gzip stream stopped early, if it did.
    pub fn gzip_note(&self) -> Option<&str> {
        self.gzip_error.as_deref()
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
