//! The kernel-family table: a kernel name belongs to the first family one of whose patterns
//! starts at a word start of the name (case-insensitive). Word starts: the name's start, after a
//! character that is not a letter or digit, a lower-case letter or digit followed by an upper-case
//! letter (`AddRmsNorm`), a digit followed by a letter (`s16816gemm`), and the last capital before
//! a lower-case run (`DBackprop`). So `Cast-op239` and `fc3-Dense/Cast` are Cast but
//! `gpu_kernel_impl_nocast<…>` is not, and `upsample` is not Sampling. Order matters (GroupedMatmul
//! before MatMul). A name that matches no family is its own row, so nothing disappears into
//! "other". Extend by adding a line.

/// (family, lower-case patterns, each matched at a word start).
pub const FAMILIES: &[(&str, &[&str])] = &[
    ("GroupedMatmul", &["groupedmatmul", "grouped_matmul"]),
    ("MoeInitRouting", &["moeinitrouting"]),
    ("MoE (other)", &["moe"]),
    ("Attention", &["attention", "flashattn", "pagedattn", "mla"]),
    (
        "MatMul",
        &[
            "matmul",
            "gemm",
            "sgemm",
            "hgemm",
            "dgemm",
            "batchmatmul",
            "mm_",
        ],
    ),
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
    ("Quant", &["quant", "dequant", "antiquant"]),
    ("Activation", &["relu", "gelu", "silu", "swiglu", "sigmoid"]),
    // Training and eager-mode kernels of the real level1 roots (aclnn<Op>_<Kernel>_<Type> names).
    ("Foreach (optimizer)", &["foreach"]),
    ("Dropout", &["dropout", "dsagenbitmask"]),
    ("Loss", &["nllloss", "crossentropy", "mseloss"]),
    ("Copy/TensorMove", &["tensormove", "copy"]),
    (
        "Elementwise",
        &[
            "add",
            "sub",
            "mul",
            "div",
            "realdiv",
            "fill",
            "oneslike",
            "zeroslike",
            "equal",
            "broadcastto",
            "maximum",
            "minimum",
            "neg",
            "sqrt",
            "rsqrt",
            "pow",
        ],
    ),
];

/// The family of a kernel name, or the name itself when no family matches.
pub fn family_of(name: &str) -> &str {
    let lower = name.to_ascii_lowercase();
    let starts = word_starts(name.as_bytes());
    FAMILIES
        .iter()
        .find(|(_, pats)| {
            pats.iter().any(|p| {
                starts
                    .iter()
                    .any(|&k| lower.as_bytes()[k..].starts_with(p.as_bytes()))
            })
        })
        .map_or(name, |(f, _)| f)
}

/// Byte offsets where a word starts (see the module doc).
fn word_starts(b: &[u8]) -> Vec<usize> {
    let alnum = |c: u8| c.is_ascii_alphanumeric();
    (0..b.len())
        .filter(|&k| {
            let c = b[k];
            if !alnum(c) {
                return false;
            }
            let Some(&p) = k.checked_sub(1).map(|j| &b[j]) else {
                return true;
            };
            !alnum(p)
                || (c.is_ascii_uppercase() && (p.is_ascii_lowercase() || p.is_ascii_digit()))
                || (c.is_ascii_alphabetic() && p.is_ascii_digit())
                || (c.is_ascii_uppercase()
                    && p.is_ascii_uppercase()
                    && b.get(k + 1).is_some_and(u8::is_ascii_lowercase))
        })
        .collect()
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
        // Real names (legacy MindSpore sample, HTA Kineto samples): a pattern inside a word is not
        // a match.
        assert_eq!(
            family_of("Default/network-WithLossCell/_backbone-AlexNet/fc3-Dense/Cast-op259"),
            "Cast"
        );
        let nocast = "void at::native::(anonymous namespace)::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}";
        assert_ne!(family_of(nocast), "Cast");
        assert_eq!(family_of("ampere_sgemm_128x64_tn"), "MatMul");
        assert_eq!(
            family_of("sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize96x64x32_stage3"),
            "MatMul"
        );
        assert_eq!(
            family_of("void at::native::upsample_bilinear2d_out_frame<float, float>"),
            "void at::native::upsample_bilinear2d_out_frame<float, float>"
        );
        assert_eq!(family_of("AscendDequant"), "Quant");
        assert_eq!(family_of("MaxPoolWithArgmax"), "Pooling");
        // The real db/level1 root's names that were their own rows before.
        for (name, family) in [
            (
                "aclnnForeachAddListV2_ForeachAddListV2_ForeachAddList",
                "Foreach (optimizer)",
            ),
            (
                "aclnnInplaceCopy_TensorMoveAiCore_TensorMove",
                "Copy/TensorMove",
            ),
            ("aclnnMuls_MulAiCore_Mul", "Elementwise"),
            (
                "aclnnDropoutDoMask_DropoutDoMaskAiCore_DropOutDoMask",
                "Dropout",
            ),
            (
                "aclnnDropoutGenMaskV2_DSAGenBitMask_DSAGenBitMask",
                "Dropout",
            ),
            ("aclnnNLLLoss_NLLLossAiCore_NLLLoss", "Loss"),
            ("aclnnInplaceOne_OnesLikeAiCore_OnesLike", "Elementwise"),
            ("aclnnEqTensor_EqualAiCore_Equal", "Elementwise"),
            ("aclnnInplaceFillScalar_FillAiCore_Fill", "Elementwise"),
            ("aclnnDivs_RealDivAiCore_RealDiv", "Elementwise"),
            // Earlier families keep their names.
            ("AddRmsNorm", "RmsNorm"),
            ("aclnnAddmm_MatMulCommon_MatMulV2", "MatMul"),
            ("aclnnLogSoftmax_LogSoftmaxAiCore_LogSoftmaxV2", "Softmax"),
        ] {
            assert_eq!(family_of(name), family, "{name}");
        }
        // `madd` holds `add` inside a word only: its own row.
        assert_eq!(family_of("Vmadd_custom"), "Vmadd_custom");
    }
}
