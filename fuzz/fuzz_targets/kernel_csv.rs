//! kernel_details.csv / op_summary reader on arbitrary bytes, then the analyses.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut b = profscope::ingest::TablesBuilder::new();
    if profscope::ingest::msprof_csv::ingest_bytes("kernel_details.csv", data, &mut b).is_ok() {
        let t = b.finish();
        let _ = profscope::registry::run_all(&t, &Default::default());
    }
});
