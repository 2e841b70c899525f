//! Run metadata: arbitrary bytes as a text export's profiler_metadata.json (the keys it gives,
//! or why it cannot be read), and as a db's META_DATA ENV_VARIABLES value; the rows that result
//! go into a file's meta table and through the advisor's file rules (the environment rule
//! parses ENV_VARIABLES; a value it cannot read is `not_checked`, never a panic).
#![no_main]
use profscope::ingest::TablesBuilder;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut b = TablesBuilder::new();
    let text = b.add_file("profiler_metadata.json", Default::default());
    match profscope::ingest::profiler_metadata::parse(data) {
        Ok(rows) => {
            for (k, v) in rows {
                b.add_meta(text, k, &v);
            }
        }
        Err(why) => b.add_meta(text, profscope::model::meta::METADATA_UNREADABLE, &why),
    }
    let db = b.add_file("ascend_pytorch_profiler_0.db", Default::default());
    b.add_meta(db, "ENV_VARIABLES", &String::from_utf8_lossy(data));
    let t = b.finish();
    let _ = profscope::analysis::advisor::file_findings(&t, &[]);
});
