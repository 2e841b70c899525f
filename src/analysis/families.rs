//! The kernel-family table: a kernel name belongs to the first family one of whose patterns it
//! contains (case-insensitive). Order matters (GroupedMatmul before MatMul). A name that matches no
//! family is its own row, so nothing disappears into "other". Extend by adding a line.

/// (family, lower-case substrings).
pub const FAMILIES: &[(&str, &[&str])] = &[
    ("GroupedMatmul", &["groupedmatmul", "grouped_matmul"]),
    ("MoeInitRouting", &["moeinitrouting"]),
    ("MoE (other)", &["moe"]),
    ("Attention", &["attention", "flashattn", "pagedattn", "mla"]),
    ("MatMul", &["matmul", "gemm", "batchmatmul", "mm_"]),
    ("RmsNorm", &["rmsnorm"]),
    ("LayerNorm", &["layernorm"]),
    ("ConcatD", &["concat"]),
    ("Convolution", &["conv2d", "conv3d", "convolution", "conv"]),
    ("RotaryEmbedding", &["rope", "rotary"]),
    ("Softmax", &["softmax"]),
    ("TransData/Transpose", &["transdata", "transpose"]),
    ("Cast", &["cast"]),
    ("Reduce", &["reduce"]),
    ("Pooling", &["pool"]),
    ("MemSet", &["memset"]),
    (
        "Gather/Index",
        &["gather", "indexselect", "index_select", "embedding"],
    ),
    ("TopK/Sampling", &["topk", "argmax", "sample"]),
    ("Quant", &["quant"]),
    ("Activation", &["relu", "gelu", "silu", "swiglu", "sigmoid"]),
];

/// The family of a kernel name, or the name itself when no family matches.
pub fn family_of(name: &str) -> &str {
    let lower = name.to_ascii_lowercase();
    FAMILIES
        .iter()
        .find(|(_, pats)| pats.iter().any(|p| lower.contains(p)))
        .map_or(name, |(f, _)| f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_and_seed_names() {
        assert_eq!(family_of("GroupedMatmul"), "GroupedMatmul");
        assert_eq!(family_of("aclnnMm_MatMulCommon_MatMulV2"), "MatMul");
        assert_eq!(family_of("MatMulV2"), "MatMul");
        assert_eq!(family_of("FusedInferAttentionScore"), "Attention");
        assert_eq!(family_of("AddRmsNorm"), "RmsNorm");
        assert_eq!(family_of("MoeInitRoutingV3"), "MoeInitRouting");
        assert_eq!(family_of("ConcatD"), "ConcatD");
        assert_eq!(family_of("Conv2DBackpropFilter6"), "Convolution");
        assert_eq!(family_of("trans_TransData_12"), "TransData/Transpose");
        assert_eq!(family_of("SomethingNew"), "SomethingNew");
    }
}
