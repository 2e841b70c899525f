//! Work models of Ascend operators from their kernel details (op type, input / output shapes,
//! dtypes and storage formats as COMPUTE_TASK_INFO or kernel_details.csv write them). The
//! formulas and their sources are in docs/analyses/efficiency.md; in short:
//!
//! * matmul family: 2 · batch · M · N · K, M and N from the output, K = (elements of x1's matrix)
//!   / M, so transposed operands need no attribute; FRACTAL_NZ storage (4 trailing dims) counts
//!   its 16-padded dims.
//! * Conv2D and its backprops: 2 · (N · Ho · Wo of the forward output) · (elements of the filter
//!   as stored): a 5HD / FRACTAL_Z filter pads Cin to C0 and Cout to 16, and the FLOPs count the
//!   padded channels the cube computes.
//! * FlashAttentionScore(+Grad): B, N, Sq from softmax_max `[B, N, Sq, 8]`; 2 · B · N · pairs ·
//!   (Dqk + Dv), pairs = Sq · Skv, or the causal count when a 2048×2048 compressed mask (sparse
//!   modes 2 / 3 / 4) is an input; the backward is 2.5 × the forward (FlashAttention-2, §3.1).
//! * elementwise, norms / softmax / reductions / pooling, layout changes and copies: bytes only.
//!
//! Every model also counts bytes: each input read once, each output written once.

use super::infer_attention;
use super::tensors::{self, Tensor};
use super::work::{Modeled, Work, bytes_only, io_bytes, mul, pairs, shapes_label};
use crate::contract::Family;

/// The kernel details of one task, as strings (shapes, dtypes, formats of inputs, then outputs).
pub struct Details<'a> {
    pub op_type: &'a str,
    pub shapes: [&'a str; 6],
}

/// The work of one task with these details.
pub fn model(d: &Details<'_>) -> Modeled {
    let family = family(d.op_type).ok_or("no model for this op type")?;
    let ins = tensors::ascend(d.shapes[0], d.shapes[1], d.shapes[2]);
    let outs = tensors::ascend(d.shapes[3], d.shapes[4], d.shapes[5]);
    let (Some(ins), Some(outs)) = (ins, outs) else {
        return Err("no shapes in the kernel details");
    };
    match family {
        Family::Matmul => matmul(d.op_type, &ins, &outs),
        Family::Conv => conv(d.op_type, &ins, &outs),
        Family::Attention if infer_attention::handles(d.op_type) => {
            infer_attention::model(d.op_type, &ins, &outs)
        }
        Family::Attention => attention(d.op_type, &ins, &outs),
        f => bytes_only(f, &ins, &outs),
    }
}

const ELEMENTWISE: &[&str] = &[
    "Add",
    "AddV2",
    "Adds",
    "AddN",
    "Sub",
    "Subs",
    "Mul",
    "Muls",
    "RealDiv",
    "Div",
    "DivNoNan",
    "Maximum",
    "Minimum",
    "Neg",
    "Abs",
    "Exp",
    "Log",
    "Sqrt",
    "Rsqrt",
    "Square",
    "Pow",
    "Reciprocal",
    "Relu",
    "ReluGrad",
    "ReluV2",
    "LeakyRelu",
    "Gelu",
    "GeluGrad",
    "FastGelu",
    "FastGeluGrad",
    "Silu",
    "SiluGrad",
    "Swish",
    "SwishGrad",
    "SwiGlu",
    "SwiGluGrad",
    "Sigmoid",
    "SigmoidGrad",
    "Tanh",
    "TanhGrad",
    "Cast",
    "Equal",
    "NotEqual",
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "LogicalAnd",
    "LogicalOr",
    "LogicalNot",
    "Select",
    "SelectV2",
    "Fill",
    "Fills",
    "OnesLike",
    "ZerosLike",
    "Axpy",
    "AxpyV2",
    "DropOutDoMask",
    "DropOutDoMaskV3",
    "MaskedFill",
    "Round",
    "Floor",
    "Ceil",
    "Sign",
    "ClipByValue",
    "ClipByValueV2",
    "Erf",
    "Addcmul",
    "Addcdiv",
    "Lerp",
    "Mish",
    "Elu",
    "IsFinite",
    "IsInf",
];
const NORM: &[&str] = &[
    "LayerNorm",
    "LayerNormV3",
    "LayerNormV4",
    "LayerNormGrad",
    "LayerNormGradV3",
    "LayerNormBetaGammaBackpropV2",
    "LayerNormXBackpropV3",
    "RmsNorm",
    "RmsNormGrad",
    "AddRmsNorm",
    "AddLayerNorm",
    "BatchNorm",
    "BNTrainingReduce",
    "BNTrainingUpdate",
    "BNTrainingReduceGrad",
    "BNTrainingUpdateGrad",
    "BNInfer",
    "GroupNorm",
    "GroupNormSilu",
    "SoftmaxV2",
    "SoftmaxGrad",
    "LogSoftmaxV2",
    "LogSoftmaxGrad",
    "ReduceSum",
    "ReduceSumD",
    "ReduceMean",
    "ReduceMeanD",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceAll",
    "ReduceAny",
    "ArgMaxV2",
    "ArgMin",
    "NLLLoss",
    "NLLLossGrad",
    "SoftmaxCrossEntropyWithLogits",
    "L2Loss",
];
const DATA_MOVEMENT: &[&str] = &[
    "TransData",
    "Transpose",
    "TransposeD",
    "Identity",
    "TensorMove",
    "ViewCopy",
    "AsStrided",
    "Concat",
    "ConcatD",
    "ConcatV2",
    "ConcatV2D",
    "Pack",
    "Unpack",
    "Split",
    "SplitD",
    "SplitV",
    "SplitVD",
    "Slice",
    "SliceD",
    "StridedSlice",
    "StridedSliceD",
    "StridedSliceGrad",
    "StridedSliceAssignV2",
    "Gather",
    "GatherV2",
    "GatherV3",
    "GatherElements",
    "GatherNd",
    "ScatterUpdate",
    "ScatterNdUpdate",
    "ScatterElements",
    "IndexPut",
    "Index",
    "Pad",
    "PadV3",
    "Tile",
    "BroadcastTo",
    "Expand",
    "ExpandD",
    "Reshape",
    "ReverseV2",
    "InplaceCopy",
    "Repeat",
];

/// The family of an op type, None when it has no model.
pub fn family(op: &str) -> Option<Family> {
    let lower = op.to_ascii_lowercase();
    if lower.contains("matmul") {
        return Some(Family::Matmul);
    }
    if matches!(
        op,
        "Conv2D" | "Conv2DBackpropInput" | "Conv2DBackpropFilter"
    ) {
        return Some(Family::Conv);
    }
    if matches!(op, "FlashAttentionScore" | "FlashAttentionScoreGrad")
        || infer_attention::handles(op)
    {
        return Some(Family::Attention);
    }
    if ELEMENTWISE.contains(&op) || op.starts_with("Foreach") || op.starts_with("ApplyAdam") {
        return Some(Family::Elementwise);
    }
    if NORM.contains(&op)
        || ["MaxPool", "AvgPool", "AdaptiveAvgPool", "AdaptiveMaxPool"]
            .iter()
            .any(|p| op.starts_with(p))
    {
        return Some(Family::Norm);
    }
    DATA_MOVEMENT.contains(&op).then_some(Family::DataMovement)
}

/// The matrix of a tensor: (batch, elements of its matrix), FRACTAL_NZ's 4 trailing dims or an
/// ND tensor's 2.
fn matrix(t: &Tensor) -> Option<(u64, u64)> {
    let k = if t.format == "FRACTAL_NZ" { 4 } else { 2 };
    if t.rank() < k {
        return None;
    }
    let (batch, m) = t.dims.split_at(t.rank() - k);
    Some((mul(batch)?, mul(m)?))
}

fn matmul(op: &str, ins: &[Tensor], outs: &[Tensor]) -> Modeled {
    let (Some(x1), Some(x2), Some(y)) = (ins.first(), ins.get(1), outs.first()) else {
        return Err("a matmul needs two inputs and an output");
    };
    if op.starts_with("GroupedMatmul") && outs.iter().filter(|t| t.present).count() > 1 {
        return Err("grouped matmul with several outputs (split lists) is not modelled");
    }
    let nz = y.format == "FRACTAL_NZ";
    let (m, n, batch) = if nz {
        if y.rank() < 4 {
            return Err("FRACTAL_NZ output with fewer than 4 dims");
        }
        // (…, N1, M1, M0, N0)
        let (n1, m1, m0, n0) = (y.back(4), y.back(3), y.back(2), y.back(1));
        (m1 * m0, n1 * n0, mul(&y.dims[..y.rank() - 4]))
    } else {
        if y.rank() < 2 {
            return Err("the output is not a matrix");
        }
        (y.back(2), y.back(1), mul(&y.dims[..y.rank() - 2]))
    };
    let batch = batch.ok_or("dims overflow")?;
    let ((_, a), (_, b)) = (
        matrix(x1).ok_or("x1 is not a matrix")?,
        matrix(x2).ok_or("x2 is not a matrix")?,
    );
    if m == 0 || n == 0 || a % m != 0 {
        return Err("x1's elements are not a multiple of M");
    }
    let k = a / m;
    let padded = nz || x1.format == "FRACTAL_NZ" || x2.format == "FRACTAL_NZ";
    // x2 holds K × N (or its 16-padded NZ storage): a K that x2 cannot hold means the shapes are
    // not those of one matmul.
    if b % n != 0 || (b / n != k && !padded) {
        return Err("x1 and x2 disagree on K");
    }
    let flops = mul(&[2, batch, m, n, k]).ok_or("dims overflow")?;
    let b_label = if batch > 1 {
        format!("B={batch} ")
    } else {
        String::new()
    };
    Ok(Work {
        family: Family::Matmul,
        flops,
        bytes: io_bytes(ins, outs),
        dtype: x1.dtype,
        shape: format!("{b_label}M={m} N={n} K={k}"),
        caveat: padded.then(|| {
            "FRACTAL_NZ storage shapes: M, N and K include the 16-padding the cube computes".into()
        }),
        upper_bound: false,
    })
}

/// N · Ho · Wo of a 4-D activation by its format (NC1HWC0: N, C1, H, W, C0).
fn spatial(t: &Tensor) -> Option<u64> {
    let d = &t.dims;
    match (t.format.as_str(), d.len()) {
        ("NC1HWC0", 5) | ("NCHW", 4) => mul(&[d[0], d[2], d[3]]),
        ("NHWC", 4) => mul(&[d[0], d[1], d[2]]),
        _ => None,
    }
}

fn conv(op: &str, ins: &[Tensor], outs: &[Tensor]) -> Modeled {
    // CANN op definitions: Conv2D(x, filter, bias, …) → y; Conv2DBackpropInput(input_size,
    // filter, out_backprop) → y; Conv2DBackpropFilter(x, filter_size, out_backprop) → y.
    let (out_act, filter, dtype_of) = match op {
        "Conv2D" => (outs.first(), ins.get(1), ins.first()),
        "Conv2DBackpropInput" => (ins.get(2), ins.get(1), ins.get(2)),
        _ => (ins.get(2), outs.first(), ins.get(2)),
    };
    let (Some(y), Some(w)) = (out_act, filter) else {
        return Err("a convolution needs its activation and filter");
    };
    let Some(s) = spatial(y) else {
        return Err("the forward output is not a 4-D NCHW / NHWC / NC1HWC0 tensor");
    };
    if w.rank() != 4 {
        return Err("the filter is not 4-D");
    }
    let padded = w.format == "FRACTAL_Z" || y.format == "NC1HWC0";
    Ok(Work {
        family: Family::Conv,
        flops: mul(&[2, s, w.numel()]).ok_or("dims overflow")?,
        bytes: io_bytes(ins, outs),
        dtype: dtype_of.and_then(|t| t.dtype),
        shape: format!("N·Ho·Wo={s} filter={}", shapes_label(std::slice::from_ref(w))),
        caveat: padded.then(|| {
            "5HD / FRACTAL_Z storage: FLOPs count the padded channels (Cin to C0, Cout to 16) the cube computes".into()
        }),
        upper_bound: false,
    })
}

/// Layout of q / k / v from q's dims and (B, N, Sq): the key's sequence dim, and the head dims.
fn attention(op: &str, ins: &[Tensor], outs: &[Tensor]) -> Modeled {
    let grad = op.ends_with("Grad");
    // softmax_max [B, N, Sq, 8]: the first output of the forward, an input of the backward.
    let sm = if grad {
        ins.iter().skip(3).find(|t| t.rank() == 4 && t.back(1) == 8)
    } else {
        outs.first().filter(|t| t.rank() == 4 && t.back(1) == 8)
    };
    let Some(sm) = sm else {
        return Err(
            "no softmax_max [B, N, Sq, 8] (TND varlen layout: sequence lengths are tensor values)",
        );
    };
    let (b, n, sq) = (sm.dims[0], sm.dims[1], sm.dims[2]);
    let (Some(q), Some(k), Some(v)) = (ins.first(), ins.get(1), ins.get(2)) else {
        return Err("attention needs query, key and value");
    };
    let bns = mul(&[b, n, sq])
        .filter(|&x| x > 0)
        .ok_or("empty attention")?;
    if q.numel() % bns != 0 {
        return Err("query does not hold B × N × Sq rows");
    }
    let d = q.numel() / bns;
    let skv = key_len(q, k, b, n, sq, d).ok_or("query / key layout is ambiguous")?;
    let dv = value_dim(v, k, d);
    let mask = ins.iter().skip(3).any(|t| t.dims == [2048, 2048]);
    let causal = mask.then_some(true);
    let fwd = mul(&[2, b, n, pairs(sq, skv, causal), d + dv]).ok_or("dims overflow")?;
    let flops = if grad { fwd / 2 * 5 } else { fwd };
    let mut caveat = Vec::new();
    if mask {
        caveat.push(if sq == skv {
            "2048×2048 compressed mask (sparse mode 2/3/4): counted as causal".to_string()
        } else {
            "2048×2048 compressed mask (sparse mode 2/3/4): counted as bottom-right causal (mode 3)"
                .to_string()
        });
    }
    if grad {
        caveat.push("backward = 2.5 × forward FLOPs (FlashAttention-2)".into());
    }
    Ok(Work {
        family: Family::Attention,
        flops,
        bytes: io_bytes(ins, outs),
        dtype: q.dtype,
        shape: format!(
            "B={b} N={n} Sq={sq} Skv={skv} D={d}{}",
            if mask { " causal" } else { "" }
        ),
        caveat: (!caveat.is_empty()).then(|| caveat.join("; ")),
        upper_bound: false,
    })
}

/// The key's sequence length: BSND `[B, S, N, D]` / BNSD `[B, N, S, D]` (4-D), BSH `[B, S, H]` /
/// SBH `[S, B, H]` (3-D), the layout read from where q has Sq; None when ambiguous.
fn key_len(q: &Tensor, k: &Tensor, b: u64, n: u64, sq: u64, d: u64) -> Option<u64> {
    let qd = &q.dims;
    let kd = &k.dims;
    match (qd.len(), kd.len()) {
        (4, 4) => {
            let bsnd = qd[1] == sq && qd[2] == n;
            let bnsd = qd[1] == n && qd[2] == sq;
            match (bsnd, bnsd) {
                (true, false) => Some(kd[1]),
                (false, true) => Some(kd[2]),
                (true, true) if kd[1] == kd[2] => Some(kd[1]),
                _ => None,
            }
        }
        (3, 3) => {
            let bsh = qd[0] == b && qd[1] == sq && qd[2] == n * d;
            let sbh = qd[0] == sq && qd[1] == b && qd[2] == n * d;
            match (bsh, sbh) {
                (true, false) => Some(kd[1]),
                (false, true) => Some(kd[0]),
                (true, true) if kd[0] == kd[1] => Some(kd[0]),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The value's head dim: its last dim (4-D), or its hidden size scaled by the key's heads (3-D:
/// H_v · D / H_k).
fn value_dim(v: &Tensor, k: &Tensor, d: u64) -> u64 {
    match (v.rank(), k.rank()) {
        (4, _) => v.back(1),
        (3, 3) if k.back(1) > 0 => v.back(1) * d / k.back(1),
        _ => d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(op: &str, shapes: [&str; 6]) -> Modeled {
        model(&Details {
            op_type: op,
            shapes,
        })
    }

    #[test]
    fn matmul_k_from_x1_whatever_the_transposes() {
        // ascend-pt/db/level1: aclnnMm MatMulV2 "32,1000;32,4096" → "1000,4096" (x1ᵀ · x2).
        let w = work(
            "MatMulV2",
            [
                "\"32,1000;32,4096\"",
                "FLOAT;FLOAT",
                "FORMAT_ND;FORMAT_ND",
                "\"1000,4096\"",
                "FLOAT",
                "FORMAT_ND",
            ],
        )
        .unwrap();
        assert_eq!(w.flops, 2 * 1000 * 4096 * 32);
        assert_eq!(w.bytes, (32 * 1000 + 32 * 4096 + 1000 * 4096) * 4);
        assert_eq!(w.shape, "M=1000 N=4096 K=32");
        // aclnnAddmm: "32,9216;4096,9216;4096" → "32,4096": x1 · x2ᵀ + bias.
        let w = work(
            "MatMulV2",
            [
                "\"32,9216;4096,9216;4096\"",
                "FLOAT;FLOAT;FLOAT",
                "ND;ND;ND",
                "\"32,4096\"",
                "FLOAT",
                "ND",
            ],
        )
        .unwrap();
        assert_eq!(w.flops, 2 * 32 * 4096 * 9216);
        let bad = work(
            "MatMul",
            [
                "\"3,5;7,2\"",
                "FLOAT16;FLOAT16",
                "ND;ND",
                "\"3,2\"",
                "FLOAT16",
                "ND",
            ],
        );
        assert!(bad.is_err());
    }

    #[test]
    fn batch_and_nz_matmuls() {
        let w = work(
            "BatchMatMulV2",
            [
                "\"8,64,128;8,128,32\"",
                "FLOAT16;FLOAT16",
                "ND;ND",
                "\"8,64,32\"",
                "FLOAT16",
                "ND",
            ],
        )
        .unwrap();
        assert_eq!(
            (w.flops, w.shape.as_str()),
            (2 * 8 * 64 * 32 * 128, "B=8 M=64 N=32 K=128")
        );
        // NZ: y (N1, M1, M0, N0) = (2, 4, 16, 16): M = 64, N = 32; x1 (K1, M1, M0, K0).
        let w = work(
            "MatMulV2",
            [
                "\"8,4,16,16;2,8,16,16\"",
                "FLOAT16;FLOAT16",
                "FRACTAL_NZ;FRACTAL_NZ",
                "\"2,4,16,16\"",
                "FLOAT16",
                "FRACTAL_NZ",
            ],
        )
        .unwrap();
        assert_eq!(w.flops, 2 * 64 * 32 * 128);
        assert!(w.caveat.is_some());
    }

    #[test]
    fn conv_counts_padded_channels() {
        // ascend-pt/db/level1 rank 0 Conv2D1: AlexNet conv1, 3 input channels padded to C0 = 8.
        let w = work(
            "Conv2D",
            [
                "\"32,1,224,224,8;121,4,16,8;64\"",
                "FLOAT;FLOAT;FLOAT",
                "NC1HWC0;FRACTAL_Z;NCHW",
                "\"32,8,55,55,8\"",
                "FLOAT",
                "NC1HWC0",
            ],
        )
        .unwrap();
        assert_eq!(w.flops, 2 * 32 * 55 * 55 * (121 * 4 * 16 * 8));
        // Conv2DBackpropFilter9: dy = input 2, dw = output 0.
        let w = work(
            "Conv2DBackpropFilter",
            [
                "\"32,8,27,27,8;4;32,24,27,27,8\"",
                "FLOAT;INT32;FLOAT",
                "NC1HWC0;NCHW;NC1HWC0",
                "\"200,12,16,8\"",
                "FLOAT",
                "FRACTAL_Z",
            ],
        )
        .unwrap();
        assert_eq!(w.flops, 2 * 32 * 27 * 27 * (200 * 12 * 16 * 8));
    }

    #[test]
    fn flash_attention_bsnd_gqa_and_causal() {
        // BSND q [2, 512, 32, 128], k / v [2, 512, 8, 128] (GQA), compressed causal mask input.
        let fa = |ins: &str, types: &str| {
            work(
                "FlashAttentionScore",
                [
                    ins,
                    types,
                    "ND;ND;ND;ND",
                    "\"2,32,512,8;2,32,512,8;0;2,512,32,128\"",
                    "FLOAT;FLOAT;FLOAT16;FLOAT16",
                    "ND;ND;ND;ND",
                ],
            )
            .unwrap()
        };
        let dense = fa(
            "\"2,512,32,128;2,512,8,128;2,512,8,128\"",
            "FLOAT16;FLOAT16;FLOAT16",
        );
        assert_eq!(dense.flops, 2 * 2 * 32 * 512 * 512 * 256);
        let causal = fa(
            "\"2,512,32,128;2,512,8,128;2,512,8,128;2048,2048\"",
            "FLOAT16;FLOAT16;FLOAT16;BOOL",
        );
        assert_eq!(causal.flops, 2 * 2 * 32 * (512 * 513 / 2) * 256);
        assert!(causal.shape.ends_with("causal"));
    }

    #[test]
    fn families_and_no_models() {
        assert_eq!(family("TransData"), Some(Family::DataMovement));
        assert_eq!(family("ForeachAddList"), Some(Family::Elementwise));
        assert_eq!(family("MaxPoolWithArgmaxV1"), Some(Family::Norm));
        assert_eq!(family("QuantBatchMatmulV3"), Some(Family::Matmul));
        assert_eq!(family("DSAGenBitMask"), None);
        assert_eq!(
            work("Relu", ["N/A", "N/A", "N/A", "N/A", "N/A", "N/A"]),
            Err("no shapes in the kernel details")
        );
    }
}
