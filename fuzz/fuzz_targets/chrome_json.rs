//! The Chrome-trace reader on arbitrary bytes: the mapped path (chunked, parallel) with a small
//! chunk size so chunk boundaries fall everywhere, and the streamed path (as for `.json.gz`) with
//! small blocks; then the analyses on whatever was read. The mapped path also as `analyze` reads
//! it, the vendor overlap rows summed while parsing (`overlap_row.rs`'s reader runs there).
#![no_main]
use profscope::ingest::chrome_json::{ingest_slice, ingest_slice_streamed, ingest_slice_summing};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let chunk = 1 + data.first().copied().unwrap_or(0) as usize * 8;
    if let Ok(t) = ingest_slice("fuzz.json", data, chunk) {
        let _ = profscope::registry::run_all(&t, &Default::default());
    }
    let _ = ingest_slice_summing("fuzz.json", data, chunk, true);
    let block = 1 + data.last().copied().unwrap_or(0) as usize * 4;
    let _ = ingest_slice_streamed("fuzz.json", data, block, chunk);
});
