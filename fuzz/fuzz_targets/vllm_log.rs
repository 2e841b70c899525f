//! vLLM start-up log memory lines on arbitrary text.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = profscope::ingest::evidence::vllm_log::parse_checked(&text, "vllm.log");
});
