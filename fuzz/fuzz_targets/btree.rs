//! The direct SQLite b-tree reader on arbitrary bytes: every page tried as a table root. Must
//! never panic, loop or allocate beyond the input's size.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = profscope::ingest::ascend_db::fuzz_btree(data);
});
