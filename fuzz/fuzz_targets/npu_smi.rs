//! `npu-smi info` parser (three layouts) on arbitrary text.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = profscope::ingest::evidence::npu_smi::parse(&text, "npu-smi.txt");
});
