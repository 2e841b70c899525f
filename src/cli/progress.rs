//! The progress bar of the commands that read profiles: it watches the shared
//! [`Progress`] counters the pipeline advances, so the pipeline knows nothing of the terminal.

use crate::ingest::Progress;
use std::time::{Duration, Instant};

/// Runs `f` with a progress bar on stderr fed by the [`Progress`] it is given (none when `quiet`).
pub(crate) fn with_bar<T>(quiet: bool, f: impl FnOnce(&Progress) -> T) -> T {
    let progress = Progress::default();
    let bar = (!quiet).then(|| spawn_progress_bar(progress.clone()));
    let out = f(&progress);
    if let Some((stop, handle)) = bar {
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = handle.join();
    }
    out
}

type BarHandle = (
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<()>,
);

/// A progress bar on stderr that appears only when ingest takes more than a second: bytes read of
/// the total, the rate since the start and the time left at that rate (indicatif's own rate
/// starts from the bar's creation, a second in, and read `9.03 TiB/s`, ETA 0 s).
fn spawn_progress_bar(progress: Progress) -> BarHandle {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let handle = std::thread::spawn(move || {
        let start = Instant::now();
        let mut bar: Option<indicatif::ProgressBar> = None;
        while !stop2.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
            let elapsed = start.elapsed();
            if bar.is_none() && elapsed >= Duration::from_secs(1) {
                let b = indicatif::ProgressBar::with_draw_target(
                    Some(progress.total()),
                    indicatif::ProgressDrawTarget::stderr(),
                );
                b.set_style(
                    indicatif::ProgressStyle::with_template("{spinner} ingest {wide_bar} {msg}")
                        .expect("valid template"),
                );
                bar = Some(b);
            }
            if let Some(b) = &bar {
                let (done, total) = (progress.done(), progress.total());
                b.set_length(total.max(1));
                b.set_position(done.min(total));
                b.set_message(progress_text(done, total, elapsed));
            }
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
    });
    (stop, handle)
}

/// `1.20 GB / 4.30 GB, 310.5 MB/s, about 10 s left` (the rate since ingest began).
fn progress_text(done: u64, total: u64, elapsed: Duration) -> String {
    use crate::render::human_bytes;
    let secs = elapsed.as_secs_f64().max(1e-3);
    let rate = done as f64 / secs;
    let left = if done == 0 || done >= total {
        "time left unknown".to_string()
    } else {
        format!("about {:.0} s left", (total - done) as f64 / rate.max(1.0))
    };
    format!(
        "{} / {}, {}/s, {left}",
        human_bytes(done.min(total)),
        human_bytes(total),
        human_bytes(rate as u64)
    )
}

#[cfg(test)]
mod tests {
    use super::progress_text;
    use std::time::Duration;

    #[test]
    fn progress_says_bytes_rate_and_time_left() {
        // 1.2 GB of 4.8 GB in 4 s: 300 MB/s, 3.6 GB left = 12 s.
        assert_eq!(
            progress_text(1_200_000_000, 4_800_000_000, Duration::from_secs(4)),
            "1.20 GB / 4.80 GB, 300.00 MB/s, about 12 s left"
        );
        // Nothing read yet: no made-up rate or ETA.
        assert_eq!(
            progress_text(0, 1_000_000, Duration::from_secs(1)),
            "0 B / 1.00 MB, 0 B/s, time left unknown"
        );
        // A gzip member can decompress to more than its file size: never past the total.
        assert_eq!(
            progress_text(3_000_000, 1_000_000, Duration::from_secs(1)),
            "1.00 MB / 1.00 MB, 3.00 MB/s, time left unknown"
        );
    }
}
