//! Analyses: pure functions from [`crate::model::Tables`] (and options) to result structs. No
//! I/O here. Today: [`summary`] (what was ingested); the timeline analyses (bubbles, composition,
//! communication, phases, batch audit, MTP) join it as one module each.

pub mod summary;
