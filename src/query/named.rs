//! The named queries of `queries/`, compiled into the binary: one portable SQL file per question
//! (runs unchanged in `profscope query` and in DuckDB / Spark over a Parquet export), with a
//! comment header whose first line is `-- <name>: <summary>`.

pub struct NamedQuery {
    pub name: &'static str,
    pub sql: &'static str,
}

macro_rules! named {
    ($($name:literal),* $(,)?) => {
        &[$(NamedQuery { name: $name, sql: include_str!(concat!("../../queries/", $name, ".sql")) }),*]
    };
}

pub const NAMED: &[NamedQuery] = named!(
    "bubbles",
    "communication_share",
    "launch_latency",
    "step_breakdown",
    "stream_composition",
    "top_kernels",
);

impl NamedQuery {
    /// The summary after `-- <name>: ` on the first line.
    pub fn summary(&self) -> &'static str {
        let first = self.sql.lines().next().unwrap_or("");
        first
            .strip_prefix("-- ")
            .and_then(|l| l.strip_prefix(self.name))
            .and_then(|l| l.strip_prefix(": "))
            .unwrap_or(first)
    }
}

pub fn find(name: &str) -> Option<&'static NamedQuery> {
    let name = name.strip_suffix(".sql").unwrap_or(name);
    let name = name.rsplit('/').next().unwrap_or(name);
    NAMED.iter().find(|q| q.name == name)
}
