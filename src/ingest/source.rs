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
    let mut f = open_regular(std::path::Path::new(path), u64::MAX)?;
    let n = f.read(&mut magic)?;
    Ok(n == 2 && magic == [0x1f, 0x8b])
}

/// How a mapped file will be read (the kernel's read-ahead follows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Front to back (JSON, CSV): aggressive read-ahead, pages dropped behind.
    Sequential,
    /// In the order of pointers inside the file (SQLite b-tree pages): the default read-ahead.
    ByPointer,
}

impl Source {
    /// Maps `path` read-only for a front-to-back read.
    pub fn open(path: &str) -> Result<Source, IngestError> {
        Self::open_for(path, Access::Sequential)
    }

    /// Maps `path` read-only (never locked or modified), advising the kernel of `access`.
    pub fn open_for(path: &str, access: Access) -> Result<Source, IngestError> {
        let io = |e: std::io::Error| IngestError::Io {
            path: path.to_string(),
            source: e,
        };
        let file = open_regular(std::path::Path::new(path), u64::MAX).map_err(io)?;
        let size_on_disk = file.metadata().map_err(io)?.len();
        if size_on_disk == 0 {
            return Ok(Source {
                bytes: Bytes::Empty,
                size_on_disk,
            });
        }
        let map = super::mapping::map(&file).map_err(io)?;
        #[cfg(unix)]
        if access == Access::Sequential {
            let _ = map.advise(memmap2::Advice::Sequential);
        }
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

    /// Maps the pages of `[start, end)` into the page table in one call before they are read
    /// (Linux `MADV_POPULATE_READ`; a no-op elsewhere, or where the kernel predates 5.14), so the
    /// parser does not take a page fault every few pages.
    pub fn prefault(&self, start: usize, end: usize) {
        #[cfg(target_os = "linux")]
        if let Bytes::Mapped(m) = &self.bytes {
            let end = end.min(m.len());
            if end > start {
                let _ = m.advise_range(memmap2::Advice::PopulateRead, start, end - start);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (start, end);
    }

    /// Drops every page of the large folios (2 MiB-aligned blocks) that `[start, end)` touches from
    /// this process's resident set: a touch maps the whole folio where the kernel uses large ones.
    /// Only for bytes no other thread is reading.
    pub fn release_folios(&self, start: usize, end: usize) {
        const FOLIO: usize = 2 << 20;
        self.release(start / FOLIO * FOLIO, end.div_ceil(FOLIO) * FOLIO);
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

/// Why a file was not opened: it is not a regular file, or larger than its kind may be.
#[derive(Debug, thiserror::Error)]
pub enum NotOpened {
    #[error("not a regular file ({0}): not read")]
    NotRegular(&'static str),
    #[error("{size} bytes, more than the {max} bytes this kind of file may have: not read")]
    TooLarge { size: u64, max: u64 },
}

fn kind_of(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_char_device() || ft.is_block_device() {
            return "a device";
        }
    }
    if ft.is_dir() {
        "a folder"
    } else {
        "a special file"
    }
}

/// Opens `path` for reading only if it is a regular file of at most `max` bytes (following
/// links). A FIFO is opened without blocking and refused, so a FIFO named like an input never
/// hangs a run; `/dev/zero` behind a link is refused as a device.
pub fn open_regular(path: &std::path::Path, max: u64) -> std::io::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    let f = o.open(path)?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(std::io::Error::other(NotOpened::NotRegular(kind_of(
            m.file_type(),
        ))));
    }
    if m.len() > max {
        return Err(std::io::Error::other(NotOpened::TooLarge {
            size: m.len(),
            max,
        }));
    }
    Ok(f)
}

/// The whole of a regular file of at most `max` bytes ([`open_regular`]).
pub fn read_regular(path: &std::path::Path, max: u64) -> std::io::Result<Vec<u8>> {
    let f = open_regular(path, max)?;
    let mut out = Vec::new();
    // `take`: a file that grows while read still stops at the cap.
    f.take(max).read_to_end(&mut out)?;
    Ok(out)
}

/// The largest companion or evidence file read whole (CSV and JSON summaries, logs, npu-smi
/// text, safetensors headers): far above any real one, far below the machine's memory.
pub const MAX_COMPANION_BYTES: u64 = 2 << 30;
