//! Weight inspection: every tensor of a checkpoint classified by name, given a shard strategy
//! under tensor / expert parallelism, and summed per class and per device. Tensor bytes are exact
//! (from dtype and shape); classes and sharding are estimates and labelled so: real engines
//! replicate some projections (k/v with fewer KV heads than TP) and pad vocabularies.

pub use crate::contract::weights::*;
use crate::model::checkpoint::Checkpoint;
use std::collections::BTreeMap;

/// The class of a tensor name, and how it is sharded (`ep`: expert parallelism on).
pub fn classify(name: &str, ep: bool) -> (WeightClass, Strategy) {
    use WeightClass as C;
    let last = name.rsplit('.').nth(1).unwrap_or("");
    let leaf = name.rsplit('.').next().unwrap_or("");
    let proj = |column: bool| {
        if column {
            Strategy::ColumnParallel
        } else {
            Strategy::RowParallel
        }
    };
    let is_row = ["o_proj", "down_proj", "out_proj"].contains(&last);
    let is_norm = last.contains("norm") || leaf.contains("norm");
    let class = if name.contains("visual.") || name.starts_with("visual") {
        C::Visual
    } else if name.contains("mtp.") || name.starts_with("mtp") {
        C::Mtp
    } else if name.contains(".experts.") {
        C::Experts
    } else if name.contains("shared_expert_gate") || name.contains(".mlp.gate.") {
        C::Router
    } else if name.contains(".shared_expert.") {
        C::SharedExpert
    } else if name.contains(".linear_attn.") {
        C::LinearAttn
    } else if name.contains(".self_attn.") {
        C::Attention
    } else if name.contains(".mlp.") {
        C::DenseMlp
    } else if name.contains("embed_tokens") {
        C::EmbedTokens
    } else if name.contains("lm_head") {
        C::LmHead
    } else if is_norm {
        C::Norm
    } else {
        C::Other
    };
    let strategy = match class {
        C::EmbedTokens | C::LmHead => Strategy::VocabParallel,
        C::Norm | C::Router | C::Other => Strategy::Replicated,
        _ if is_norm => Strategy::Replicated,
        C::Experts if ep => Strategy::ExpertParallel,
        _ => proj(!is_row),
    };
    (class, strategy)
}

pub fn compute(c: &Checkpoint, tp: u64, dp: u64, expert_parallel: bool) -> Weights {
    let ep = if expert_parallel { tp * dp } else { 1 };
    let mut rows: BTreeMap<(WeightClass, Strategy), (u64, Option<u64>)> = BTreeMap::new();
    let mut experts = 0u64;
    for t in &c.tensors {
        let key = classify(&t.name, expert_parallel);
        let e = rows.entry(key).or_insert((0, Some(0)));
        e.0 += 1;
        e.1 = e.1.zip(t.bytes).and_then(|(a, b)| a.checked_add(b));
        if let Some(i) = t
            .name
            .split(".experts.")
            .nth(1)
            .and_then(|rest| rest.split('.').next()?.parse::<u64>().ok())
        {
            experts = experts.max(i + 1);
        }
    }
    let classes: Vec<ClassRow> = rows
        .into_iter()
        .map(|((class, strategy), (tensors, bytes))| {
            let divisor = match strategy {
                Strategy::Replicated => 1,
                Strategy::ExpertParallel => ep,
                _ => tp,
            };
            ClassRow {
                class,
                strategy,
                tensors,
                bytes,
                divisor,
                per_device_bytes: bytes.map(|b| b as f64 / divisor as f64),
                per_device_tensors: tensors as f64 / divisor as f64,
            }
        })
        .collect();
    let bytes = classes
        .iter()
        .try_fold(0u64, |a, r| r.bytes.and_then(|b| a.checked_add(b)));
    let per_device_bytes = classes
        .iter()
        .try_fold(0f64, |a, r| r.per_device_bytes.map(|b| a + b));
    Weights {
        tp,
        dp,
        expert_parallel,
        ep,
        tensors: c.tensors.len() as u64,
        bytes,
        index_total_size: c.index_total_size,
        per_device_bytes,
        classes,
        experts_per_layer: (experts > 0).then_some(experts),
        experts_per_device: (experts > 0)
            .then(|| experts as f64 / if expert_parallel { ep as f64 } else { 1.0 }),
        estimate_note: "bytes per tensor are exact (dtype x shape); classes and sharding are estimates from tensor names (column/row/vocab parallel divided by TP, experts by EP = TP x DP with expert parallelism, norms and routers replicated); engines may replicate k/v projections when KV heads < TP and pad vocabularies",
    }
}

#[cfg(test)]
mod tests {
    use super::WeightClass;

    /// Rows are ordered by class; the derived order must be the order of the names the report
    /// shows (it was a map keyed by the name).
    #[test]
    fn class_order_is_name_order() {
        let names: Vec<&str> = WeightClass::ALL.iter().map(|c| c.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        assert_eq!(names.len(), 12);
    }
}
