//! The report contract of `analysis::weights`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/weights.rs`.

use crate::model::closed_set::closed_set;
use serde::Serialize;

closed_set! {
    /// How a class is split across devices.
    pub enum Strategy {
        /// Output features split across TP (q/k/v, gate/up, in_proj, conv, per-head params).
        ColumnParallel = "column_parallel",
        /// Input features split across TP (o_proj, down_proj, out_proj).
        RowParallel = "row_parallel",
        /// Vocabulary split across TP (embed_tokens, lm_head).
        VocabParallel = "vocab_parallel",
        /// Whole experts split across EP ranks (EP = TP x DP with expert parallelism).
        ExpertParallel = "expert_parallel",
        /// Every device holds all of it (norms, routers, unknown tensors).
        Replicated = "replicated",
    }
}

closed_set! {
    /// What a tensor is, from its name. Declared in the order of the names, which is the order
    /// of the report's rows.
    pub enum WeightClass {
        Attention = "attention",
        DenseMlp = "dense_mlp",
        EmbedTokens = "embed_tokens",
        Experts = "experts",
        LinearAttn = "linear_attn",
        LmHead = "lm_head",
        Mtp = "mtp",
        Norm = "norm",
        Other = "other",
        Router = "router",
        SharedExpert = "shared_expert",
        Visual = "visual",
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassRow {
    pub class: WeightClass,
    pub strategy: Strategy,
    pub tensors: u64,
    /// Exact, when every tensor of the class has a known dtype and shape.
    pub bytes: Option<u64>,
    /// Devices the class is split over (1 when replicated).
    pub divisor: u64,
    /// Estimated bytes on one device.
    pub per_device_bytes: Option<f64>,
    /// Tensors (or tensor fractions) on one device, as the strategy splits them.
    pub per_device_tensors: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Weights {
    pub tp: u64,
    pub dp: u64,
    pub expert_parallel: bool,
    /// EP size (TP x DP with expert parallelism, else 1).
    pub ep: u64,
    pub tensors: u64,
    /// Exact total when every tensor's bytes are known.
    pub bytes: Option<u64>,
    /// The index's `metadata.total_size`, when an index was read.
    pub index_total_size: Option<u64>,
    pub per_device_bytes: Option<f64>,
    pub classes: Vec<ClassRow>,
    /// Largest expert index + 1 in any layer (from names), and how many one device holds.
    pub experts_per_layer: Option<u64>,
    pub experts_per_device: Option<f64>,
    pub estimate_note: &'static str,
}
