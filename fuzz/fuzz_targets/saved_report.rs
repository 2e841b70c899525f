//! Saved reports as `diff` reads them: arbitrary bytes streamed into the typed view (bounded:
//! at most 64 MiB kept, whatever the input claims), then, when they read, everything `diff`
//! does with a report: its metrics (the step samples moved into the noise's steps), a diff of
//! the report against itself with a threshold, the sides' verdicts and findings.
#![no_main]
use profscope::report::diff;
use profscope::report::diff_input::ReportView;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(mut view) = ReportView::read(data, 64 << 20) else {
        return;
    };
    let metrics = diff::metrics_of(&mut view);
    let Ok(thresholds) = diff::parse_thresholds("step_time>+3%,kernel.*>+10%") else {
        return;
    };
    if let Ok(d) = diff::diff(
        "base".into(),
        std::slice::from_ref(&metrics),
        "new".into(),
        &metrics,
        &thresholds,
    ) {
        let sides = [("base", &view), ("new", &view)];
        let d = d.with_verdicts(&sides).with_findings(&sides);
        let _ = profscope::render::diff::render(&d, profscope::render::Format::Table);
    }
});
