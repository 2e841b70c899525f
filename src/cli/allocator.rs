//! glibc's malloc set for a run that builds large tables and frees them analysis by analysis:
//! fixed mmap and trim thresholds (256 KiB), so freed blocks go back to the system instead of
//! staying in the arenas. By default glibc raises its mmap threshold to the size of each
//! freed mapped block (up to 32 MiB), after which such blocks come from the arenas and are
//! kept: on a 1 GB trace peak RSS rose by about 30 MB over the analyses (docs/performance.md).
//! Other C libraries and platforms are left as they are.

/// Sets the thresholds (once, before any thread starts).
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const THRESHOLD: libc::c_int = 256 * 1024;
        // SAFETY: mallopt only changes allocator parameters; called before other threads run.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, THRESHOLD);
        }
    }
}
