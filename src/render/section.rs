//! One titled table of display strings with notes under it: what the terminal, Markdown and
//! HTML renderers format, and what every section builder fills.

pub struct Section {
    pub title: String,
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
    /// Lines printed under the table (denominators, verdicts, statements).
    pub notes: Vec<String>,
}

pub fn sec(title: impl Into<String>, header: Vec<&'static str>) -> Section {
    Section {
        title: title.into(),
        header,
        rows: Vec::new(),
        notes: Vec::new(),
    }
}
