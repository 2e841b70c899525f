//! Read-only memory maps that survive their file shrinking underneath them. A file truncated
//! while it is mapped (a rank still writing its dump, a copy being replaced) makes a read past
//! the new end raise SIGBUS, which kills the process. [`map`] installs, once, a SIGBUS handler
//! that answers a fault on a missing file page (`BUS_ADRERR`) by mapping a zero page in its place
//! and counting it; the reader then sees zeros, which every decoder rejects as malformed input,
//! and the caller, seeing the file shorter than when it was mapped ([`shrank`]), reports that the
//! file changed while it was read. Any other SIGBUS keeps its default action.

use memmap2::Mmap;
use std::fs::File;
use std::sync::Once;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

static INSTALL: Once = Once::new();
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static ZERO_FILLED: AtomicU64 = AtomicU64::new(0);

/// Maps `file` read-only, with the SIGBUS guard installed.
pub fn map(file: &File) -> std::io::Result<Mmap> {
    guard();
    // SAFETY: a read-only map of a file profscope never writes. If another process shrinks the
    // file, reads past its new end get zero pages from the guard instead of killing the process.
    unsafe { Mmap::map(file) }
}

/// Pages read as zeros because their file had shrunk, since the process started.
pub fn zero_filled_pages() -> u64 {
    ZERO_FILLED.load(Ordering::Relaxed)
}

/// True when the file at `path` is now shorter than `mapped_len` (or gone).
pub fn shrank(path: &str, mapped_len: u64) -> bool {
    std::fs::metadata(path).map_or(true, |m| m.len() < mapped_len)
}

#[cfg(unix)]
fn guard() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf and sigaction with a handler that only calls mmap, an atomic add and
        // signal (async-signal-safe system calls on Linux).
        unsafe {
            let ps = libc::sysconf(libc::_SC_PAGESIZE);
            if ps > 0 {
                PAGE.store(ps as usize, Ordering::Relaxed);
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
        }
    });
}

#[cfg(not(unix))]
fn guard() {}

#[cfg(unix)]
extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: `info` is the kernel's siginfo for this signal; the replacement mapping covers one
    // page of the faulting address, which lies in a file mapping past the file's end.
    unsafe {
        if (*info).si_code == libc::BUS_ADRERR {
            let page = PAGE.load(Ordering::Relaxed);
            let at = ((*info).si_addr() as usize) & !(page - 1);
            let r = libc::mmap(
                at as *mut libc::c_void,
                page,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            );
            if r != libc::MAP_FAILED {
                ZERO_FILLED.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        // Not a shrunk file mapping: the default action (the fault repeats and ends the process).
        libc::signal(libc::SIGBUS, libc::SIG_DFL);
    }
}
