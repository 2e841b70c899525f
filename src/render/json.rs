//! JSON renderer: the report serialized as is (pretty-printed). The contract is docs/json-output.md.

use crate::report::Report;

pub fn render(report: &Report) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("the report serializes");
    s.push('\n');
    s
}
