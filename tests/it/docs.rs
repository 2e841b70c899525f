//! docs/tables.md carries the schema declared in src/model/schema.rs, verbatim between its
//! markers. `BLESS=1` rewrites the section.

#[test]
fn tables_doc_matches_schema() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tables.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let (begin, end) = ("<!-- schema:begin -->\n", "<!-- schema:end -->");
    let a = doc.find(begin).expect("begin marker") + begin.len();
    let b = doc.find(end).expect("end marker");
    let want = profscope::model::schema::render_markdown();
    if std::env::var("BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(path, format!("{}{}{}", &doc[..a], want, &doc[b..])).unwrap();
        return;
    }
    assert_eq!(
        &doc[a..b],
        want,
        "docs/tables.md is stale: BLESS=1 cargo test --release --test it docs::"
    );
}
