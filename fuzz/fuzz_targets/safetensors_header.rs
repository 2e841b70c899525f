//! The safetensors header parser (JSON of name -> dtype, shape, offsets), then the weights
//! analysis under TP / EP.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let p = std::path::Path::new("fuzz.safetensors");
    if let Ok(c) = profscope::ingest::evidence::safetensors::parse_header(p, data) {
        let _ = profscope::analysis::weights::compute(&c, 4, 2, true);
    }
});
