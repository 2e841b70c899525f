//! Exports of the normalized tables for other tools: [`perfetto`] (a Chrome-trace JSON the
//! Perfetto UI opens, windowed, with profscope's derived tracks).

pub mod perfetto;
