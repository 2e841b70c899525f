//! Result-cache entries: arbitrary bytes as an entry file (the seal must refuse them), and the
//! same bytes sealed with a valid checksum (the decoder of a cached part must refuse or read
//! them without a panic or an allocation sized by a damaged length).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = profscope::pipeline::analyze::check_cache_entry(data);
    let sealed = profscope::pipeline::cache::seal(data.to_vec());
    let _ = profscope::pipeline::analyze::check_cache_entry(&sealed);
});
