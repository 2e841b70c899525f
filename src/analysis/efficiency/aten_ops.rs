//! Work models of PyTorch ops from what the profiler records with `record_shapes` (`Input Dims`,
//! `Input type`, `Concrete Inputs`), by the op's schema (argument positions from
//! native_functions.yaml / the flash-attn custom ops). Formulas and sources are in
//! docs/analyses/efficiency.md:
//!
//! * GEMMs (mm, addmm, bmm, baddbmm, matmul with broadcasting, linear, _scaled_mm): 2 · batch ·
//!   M · N · K (a bias add is not counted).
//! * attention (scaled_dot_product_attention and its flash / efficient / cuDNN kernels, their
//!   backwards, flash-attn's `_flash_attn_forward` / `_backward`): 2 · B · H_q · pairs ·
//!   (D_qk + D_v) with H_q the query heads (GQA: key heads do not change the work), pairs the
//!   causal count when `is_causal` / `causal` is recorded True; backward 2.5 × forward.
//! * convolution (conv1d/2d/3d, convolution, _convolution, cudnn_convolution and
//!   convolution_backward): 2 · N · (output positions) · (weight elements), the output size from
//!   the recorded stride / padding / dilation (Concrete Inputs).
//! * elementwise, norms / softmax, copies: bytes only.

use super::tensors::{Dtype, OpInputs, Tensor};
use super::work::{Modeled, Work, mul, pairs, shapes_label};
use crate::contract::Family;

/// The work of one call of `name` with these recorded inputs.
pub fn model(name: &str, o: &OpInputs) -> Modeled {
    let op = name.strip_prefix("aten::").unwrap_or(name);
    match op {
        "mm" => gemm(o, 0, 1, false),
        "addmm" => gemm(o, 1, 2, false),
        "_scaled_mm" => gemm(o, 0, 1, false),
        "bmm" => gemm(o, 0, 1, true),
        "baddbmm" => gemm(o, 1, 2, true),
        "matmul" => matmul(o),
        "linear" => linear(o),
        "scaled_dot_product_attention" => sdpa(o, [0, 1, 2], Some(5), false, Layout::Bhsd),
        "_scaled_dot_product_flash_attention" => sdpa(o, [0, 1, 2], Some(4), false, Layout::Bhsd),
        "_scaled_dot_product_efficient_attention" | "_scaled_dot_product_cudnn_attention" => {
            sdpa(o, [0, 1, 2], Some(6), false, Layout::Bhsd)
        }
        "_scaled_dot_product_flash_attention_backward"
        | "_scaled_dot_product_efficient_attention_backward" => {
            sdpa(o, [1, 2, 3], Some(11), true, Layout::Bhsd)
        }
        "flash_attn::_flash_attn_forward" => sdpa(o, [0, 1, 2], Some(5), false, Layout::Bshd),
        "flash_attn::_flash_attn_backward" => sdpa(o, [1, 2, 3], Some(11), true, Layout::Bshd),
        "conv1d" | "conv2d" | "conv3d" => conv(o, 3, 4, 5, usize::MAX),
        "convolution" | "_convolution" => conv(o, 3, 4, 5, 6),
        "cudnn_convolution" => conv(o, 3, 2, 4, usize::MAX),
        "convolution_backward" => conv_backward(o),
        _ => bytes_model(op, o),
    }
}

/// Ops modelled at all (the outermost one on a thread is charged with its kernels' time).
pub fn is_modelled(name: &str) -> bool {
    let op = name.strip_prefix("aten::").unwrap_or(name);
    matches!(
        op,
        "mm" | "addmm"
            | "_scaled_mm"
            | "bmm"
            | "baddbmm"
            | "matmul"
            | "linear"
            | "scaled_dot_product_attention"
            | "_scaled_dot_product_flash_attention"
            | "_scaled_dot_product_efficient_attention"
            | "_scaled_dot_product_cudnn_attention"
            | "_scaled_dot_product_flash_attention_backward"
            | "_scaled_dot_product_efficient_attention_backward"
            | "flash_attn::_flash_attn_forward"
            | "flash_attn::_flash_attn_backward"
            | "conv1d"
            | "conv2d"
            | "conv3d"
            | "convolution"
            | "_convolution"
            | "cudnn_convolution"
            | "convolution_backward"
    ) || bytes_family(op).is_some()
}

fn tensor(o: &OpInputs, i: usize) -> Result<Tensor, &'static str> {
    o.tensor(i)
        .ok_or("an input the model needs was not recorded as a tensor")
}

/// Bytes of the listed tensors plus an output of `out_elems` elements of `out_dtype`.
fn bytes(ts: &[&Tensor], out_elems: u64, out_dtype: Option<Dtype>) -> u64 {
    let out = out_dtype.map_or(0, |d| (out_elems * d.bits()).div_ceil(8));
    ts.iter().map(|t| t.bytes()).sum::<u64>() + out
}

fn gemm_work(a: &Tensor, bt: &[&Tensor], batch: u64, m: u64, n: u64, k: u64) -> Modeled {
    let flops = mul(&[2, batch, m, n, k]).ok_or("dims overflow")?;
    let out = mul(&[batch, m, n]).ok_or("dims overflow")?;
    let mut ts = vec![a];
    ts.extend_from_slice(bt);
    Ok(Work {
        family: Family::Matmul,
        flops,
        bytes: bytes(&ts, out, a.dtype),
        dtype: a.dtype,
        shape: if batch > 1 {
            format!("B={batch} M={m} N={n} K={k}")
        } else {
            format!("M={m} N={n} K={k}")
        },
        caveat: None,
        upper_bound: false,
    })
}

/// mm / addmm / bmm / baddbmm: `a` [B?, M, K] · `b` [B?, K, N].
fn gemm(o: &OpInputs, ia: usize, ib: usize, batched: bool) -> Modeled {
    let (a, b) = (tensor(o, ia)?, tensor(o, ib)?);
    let r = if batched { 3 } else { 2 };
    if a.rank() != r || b.rank() != r {
        return Err("operands of an unexpected rank");
    }
    let batch = if batched { a.dims[0] } else { 1 };
    let (m, k, n) = (a.back(2), a.back(1), b.back(1));
    if b.back(2) != k {
        return Err("operands disagree on K");
    }
    let extra: Vec<Tensor> = (0..o.args.len())
        .filter(|&i| i != ia && i != ib)
        .filter_map(|i| o.tensor(i))
        .collect();
    let mut all: Vec<&Tensor> = vec![&b];
    all.extend(extra.iter());
    gemm_work(&a, &all, batch, m, n, k)
}

/// aten::matmul: 1-D operands are vectors, batch dims broadcast (torch.matmul semantics).
fn matmul(o: &OpInputs) -> Modeled {
    let (a, b) = (tensor(o, 0)?, tensor(o, 1)?);
    if a.rank() == 0 || b.rank() == 0 {
        return Err("matmul of a scalar");
    }
    let (m, k) = if a.rank() == 1 {
        (1, a.dims[0])
    } else {
        (a.back(2), a.back(1))
    };
    let (k2, n) = if b.rank() == 1 {
        (b.dims[0], 1)
    } else {
        (b.back(2), b.back(1))
    };
    if k != k2 {
        return Err("operands disagree on K");
    }
    let ba = &a.dims[..a.rank().saturating_sub(2)];
    let bb = &b.dims[..b.rank().saturating_sub(2)];
    let batch = broadcast(ba, bb).ok_or("batch dims do not broadcast")?;
    gemm_work(&a, &[&b], mul(&batch).ok_or("dims overflow")?, m, n, k)
}

/// aten::linear: input [..., K] · weight [N, K]ᵀ (+ bias [N]).
fn linear(o: &OpInputs) -> Modeled {
    let (x, w) = (tensor(o, 0)?, tensor(o, 1)?);
    if x.rank() == 0 || w.rank() != 2 || x.back(1) != w.dims[1] {
        return Err("input and weight disagree on K");
    }
    let k = x.back(1);
    let rows = x.numel().checked_div(k).unwrap_or(0);
    let bias = o.tensor(2);
    let mut ts = vec![&w];
    ts.extend(bias.iter());
    gemm_work(&x, &ts, 1, rows, w.dims[0], k)
}

/// numpy broadcasting of two dim lists, None when they do not broadcast.
fn broadcast(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = if i + a.len() >= n {
                a[i + a.len() - n]
            } else {
                1
            };
            let y = if i + b.len() >= n {
                b[i + b.len() - n]
            } else {
                1
            };
            match (x, y) {
                (x, y) if x == y => Some(x),
                (1, y) => Some(y),
                (x, 1) => Some(x),
                _ => None,
            }
        })
        .collect()
}

/// Where the sequence and head dims are: `[B, H, S, D]` (SDPA) or `[B, S, H, D]` (flash-attn).
#[derive(Clone, Copy)]
enum Layout {
    Bhsd,
    Bshd,
}

fn sdpa(
    o: &OpInputs,
    qkv: [usize; 3],
    causal_at: Option<usize>,
    backward: bool,
    l: Layout,
) -> Modeled {
    let (q, k, v) = (tensor(o, qkv[0])?, tensor(o, qkv[1])?, tensor(o, qkv[2])?);
    if q.rank() < 3 || k.rank() != q.rank() || v.rank() != q.rank() {
        return Err("query / key / value of an unexpected rank (varlen layouts are not modelled)");
    }
    let (batch, h, sq, d, skv) = match l {
        Layout::Bhsd => (
            mul(&q.dims[..q.rank() - 3]),
            q.back(3),
            q.back(2),
            q.back(1),
            k.back(2),
        ),
        Layout::Bshd => (
            mul(&q.dims[..q.rank() - 3]),
            q.back(2),
            q.back(3),
            q.back(1),
            k.back(3),
        ),
    };
    let batch = batch.ok_or("dims overflow")?;
    let dv = v.back(1);
    let flag = causal_at.and_then(|i| o.flag(i));
    // flash-attn aligns its causal mask to the last key, PyTorch to the first.
    let causal = flag.filter(|&c| c).map(|_| matches!(l, Layout::Bshd));
    let fwd = mul(&[2, batch, h, pairs(sq, skv, causal), d + dv]).ok_or("dims overflow")?;
    let mut caveat = Vec::new();
    if flag.is_none() {
        caveat.push("is_causal not recorded (no Concrete Inputs): counted as full attention, an upper bound");
    }
    if backward {
        caveat.push("backward = 2.5 × forward FLOPs (FlashAttention-2)");
    }
    let out = mul(&[batch, h, sq, dv]).ok_or("dims overflow")?;
    Ok(Work {
        family: Family::Attention,
        flops: if backward { fwd / 2 * 5 } else { fwd },
        bytes: bytes(&[&q, &k, &v], out, q.dtype),
        dtype: q.dtype,
        shape: format!(
            "B={batch} H={h} Sq={sq} Skv={skv} D={d}{}",
            if causal.is_some() { " causal" } else { "" }
        ),
        caveat: (!caveat.is_empty()).then(|| caveat.join("; ")),
        upper_bound: flag.is_none(),
    })
}

/// Output size of one spatial dim: ⌊(in + 2p − d(k−1) − 1) / s⌋ + 1.
fn out_dim(input: u64, k: u64, s: i64, p: i64, d: i64) -> Option<u64> {
    let span = input as i64 + 2 * p - d * (k as i64 - 1) - 1;
    (s > 0 && span >= 0).then(|| (span / s + 1) as u64)
}

/// A forward convolution: input [N, C, *spatial], weight [Cout, Cin/g, *kernel]; stride, padding
/// and dilation from Concrete Inputs at `is`, `ip`, `id`, transposed at `it`.
fn conv(o: &OpInputs, is: usize, ip: usize, id: usize, it: usize) -> Modeled {
    let (x, w) = (tensor(o, 0)?, tensor(o, 1)?);
    let sp = x
        .rank()
        .checked_sub(2)
        .filter(|&n| n >= 1 && w.rank() == n + 2);
    let Some(sp) = sp else {
        return Err("input and weight of an unexpected rank");
    };
    let (Some(s), Some(p)) = (o.ints(is), o.ints(ip)) else {
        return Err("strides and padding not recorded (Concrete Inputs)");
    };
    let dl = o.ints(id).unwrap_or_else(|| vec![1]);
    let at = |v: &[i64], i: usize| {
        if v.len() == 1 {
            v[0]
        } else {
            v.get(i).copied().unwrap_or(1)
        }
    };
    let transposed = o.flag(it).unwrap_or(false);
    let positions = if transposed {
        // A transposed convolution scatters every input position through the whole filter.
        mul(&x.dims[2..])
    } else {
        (0..sp)
            .map(|i| {
                out_dim(
                    x.dims[2 + i],
                    w.dims[2 + i],
                    at(&s, i),
                    at(&p, i),
                    at(&dl, i),
                )
            })
            .collect::<Option<Vec<u64>>>()
            .and_then(|v| mul(&v))
    }
    .ok_or("strides / padding do not fit the input")?;
    let flops = mul(&[2, x.dims[0], positions, w.numel()]).ok_or("dims overflow")?;
    let out = mul(&[x.dims[0], w.dims[0], positions]).ok_or("dims overflow")?;
    let bias = o.tensor(2);
    let mut ts = vec![&x, &w];
    ts.extend(bias.iter());
    Ok(Work {
        family: Family::Conv,
        flops,
        bytes: bytes(&ts, out, x.dtype),
        dtype: x.dtype,
        shape: format!(
            "N={} out={positions} weight={}",
            x.dims[0],
            shapes_label(std::slice::from_ref(&w))
        ),
        caveat: None,
        upper_bound: false,
    })
}

/// convolution_backward(grad_output, input, weight, …, output_mask): each requested gradient of
/// input and weight costs a forward's FLOPs (grad_output gives the output positions).
fn conv_backward(o: &OpInputs) -> Modeled {
    let (dy, x, w) = (tensor(o, 0)?, tensor(o, 1)?, tensor(o, 2)?);
    if dy.rank() < 3 || w.rank() != dy.rank() {
        return Err("grad_output and weight of an unexpected rank");
    }
    let positions = mul(&dy.dims[2..]).ok_or("dims overflow")?;
    let mask = o
        .concrete(10)
        .map(|m| m.matches("True").count().min(2) as u64);
    let grads = mask.unwrap_or(2);
    let flops = mul(&[2, grads, dy.dims[0], positions, w.numel()]).ok_or("dims overflow")?;
    Ok(Work {
        family: Family::Conv,
        flops,
        bytes: bytes(&[&dy, &x, &w], x.numel() + w.numel(), x.dtype),
        dtype: dy.dtype,
        shape: format!(
            "N={} out={positions} weight={}",
            dy.dims[0],
            shapes_label(std::slice::from_ref(&w))
        ),
        caveat: mask
            .is_none()
            .then(|| "output_mask not recorded: both input and weight gradients counted".into()),
        upper_bound: false,
    })
}

fn bytes_family(op: &str) -> Option<Family> {
    let base = op.trim_end_matches('_');
    match base {
        "add" | "sub" | "mul" | "div" | "relu" | "gelu" | "silu" | "sigmoid" | "tanh" | "exp"
        | "neg" | "where" | "threshold_backward" | "gelu_backward" | "silu_backward"
        | "sigmoid_backward" | "tanh_backward" | "pow" | "rsqrt" | "sqrt" | "addcmul"
        | "addcdiv" | "lerp" | "clamp" | "fill" | "zero" | "masked_fill" | "dropout"
        | "native_dropout" | "_foreach_add" | "_foreach_mul" | "_fused_adam" | "_fused_adamw" => {
            Some(Family::Elementwise)
        }
        "layer_norm"
        | "native_layer_norm"
        | "native_layer_norm_backward"
        | "group_norm"
        | "native_group_norm"
        | "batch_norm"
        | "native_batch_norm"
        | "_softmax"
        | "softmax"
        | "_log_softmax"
        | "log_softmax"
        | "_softmax_backward_data"
        | "rms_norm"
        | "_fused_rms_norm"
        | "sum"
        | "mean" => Some(Family::Norm),
        "copy" | "clone" | "contiguous" | "_to_copy" | "cat" | "index_select" | "gather"
        | "embedding" => Some(Family::DataMovement),
        _ => None,
    }
}

/// Bytes-only ops: every tensor input read, an output the broadcast of the tensor inputs
/// written (in-place ops write their first input; norms an output like their input).
fn bytes_model(op: &str, o: &OpInputs) -> Modeled {
    let family = bytes_family(op).ok_or("no model for this op")?;
    let ts: Vec<Tensor> = (0..o.args.len()).filter_map(|i| o.tensor(i)).collect();
    let Some(first) = ts.first() else {
        return Err(
            "no tensor input with a dtype (Kineto records a tensor list's type as `TensorList`, without its dtype)",
        );
    };
    let out = match family {
        Family::Elementwise if !op.ends_with('_') => ts
            .iter()
            .try_fold(Vec::new(), |acc, t| broadcast(&acc, &t.dims))
            .and_then(|d| mul(&d))
            .ok_or("inputs do not broadcast")?,
        Family::DataMovement if op.trim_end_matches('_') == "copy" => 0,
        _ => first.numel(),
    };
    let refs: Vec<&Tensor> = ts.iter().collect();
    let b = bytes(&refs, out, first.dtype);
    if b == 0 {
        return Err(
            "no tensor input with a dtype (Kineto records a tensor list's type as `TensorList`, without its dtype)",
        );
    }
    Ok(Work {
        family,
        flops: 0,
        bytes: b,
        dtype: first.dtype,
        shape: shapes_label(&ts),
        caveat: None,
        upper_bound: false,
    })
}

#[cfg(test)]
mod tests {
    use super::super::tensors::op_inputs;
    use super::*;

    fn work(name: &str, dims: &str, types: &str, concrete: &str) -> Modeled {
        model(name, &op_inputs(dims, types, concrete).unwrap())
    }

    #[test]
    fn gemms_as_kineto_records_them() {
        // torch-traces/trace_diff/control: aten::addmm [[512], [1024, 1705], [1705, 512], [], []].
        let w = work(
            "aten::addmm",
            "[[512], [1024, 1705], [1705, 512], [], []]",
            "[\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]",
            "",
        )
        .unwrap();
        assert_eq!(w.flops, 2 * 1024 * 512 * 1705);
        assert_eq!(w.bytes, (1024 * 1705 + 1705 * 512 + 512 + 1024 * 512) * 4);
        // aten::linear [[1024, 1705], [512, 1705], [512]]: the same GEMM.
        let l = work(
            "aten::linear",
            "[[1024, 1705], [512, 1705], [512]]",
            "[\"float\", \"float\", \"float\"]",
            "",
        )
        .unwrap();
        assert_eq!(l.flops, w.flops);
        // aten::matmul [[1024, 96, 50], [50, 15]]: batch 1024 × 96 rows.
        let m = work(
            "aten::matmul",
            "[[1024, 96, 50], [50, 15]]",
            "[\"float\", \"float\"]",
            "",
        )
        .unwrap();
        assert_eq!(m.flops, 2 * 1024 * 96 * 15 * 50);
        let b = work(
            "aten::bmm",
            "[[1024, 96, 50], [1024, 50, 8]]",
            "[\"float\", \"float\"]",
            "",
        )
        .unwrap();
        assert_eq!(b.flops, 2 * 1024 * 96 * 8 * 50);
        assert!(work("aten::mm", "[[3, 4], [5, 6]]", "[\"float\", \"float\"]", "").is_err());
    }

    #[test]
    fn sdpa_gqa_and_causal() {
        let dims = "[[2, 32, 1024, 128], [2, 8, 1024, 128], [2, 8, 1024, 128], [], [], [], [], []]";
        let types = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"None\", \"Scalar\", \"Scalar\", \"None\", \"Scalar\"]";
        let causal = work(
            "aten::scaled_dot_product_attention",
            dims,
            types,
            "[\"\", \"\", \"\", \"\", \"0.0\", \"True\", \"\", \"True\"]",
        )
        .unwrap();
        assert_eq!(causal.flops, 2 * 2 * 32 * (1024 * 1025 / 2) * 256);
        assert_eq!(causal.dtype, Some(Dtype::Bf16));
        let unknown = work("aten::scaled_dot_product_attention", dims, types, "").unwrap();
        assert_eq!(unknown.flops, 2 * 2 * 32 * 1024 * 1024 * 256);
        assert!(unknown.caveat.is_some());
    }

    #[test]
    fn conv_from_concrete_strides() {
        // AlexNet conv1: [32, 3, 224, 224] * [64, 3, 11, 11], stride 4, padding 2 → 55 × 55.
        let w = work(
            "aten::convolution",
            "[[32, 3, 224, 224], [64, 3, 11, 11], [64], [], [], [], [], [], []]",
            "[\"float\", \"float\", \"float\", \"ScalarList\", \"ScalarList\", \"ScalarList\", \"Scalar\", \"ScalarList\", \"Scalar\"]",
            "[\"\", \"\", \"\", \"[4, 4]\", \"[2, 2]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]",
        )
        .unwrap();
        assert_eq!(w.flops, 2 * 32 * 55 * 55 * (64 * 3 * 11 * 11));
        assert!(
            work(
                "aten::conv2d",
                "[[1, 3, 8, 8], [4, 3, 3, 3]]",
                "[\"float\", \"float\"]",
                ""
            )
            .is_err()
        );
    }

    #[test]
    fn bytes_only_ops() {
        let w = work(
            "aten::add",
            "[[4, 8], [8], []]",
            "[\"float\", \"float\", \"Scalar\"]",
            "",
        )
        .unwrap();
        assert_eq!((w.flops, w.bytes), (0, (32 + 8 + 32) * 4));
        let w = work(
            "aten::copy_",
            "[[4, 8], [4, 8], []]",
            "[\"c10::Half\", \"float\", \"Scalar\"]",
            "",
        )
        .unwrap();
        assert_eq!(w.bytes, 32 * 2 + 32 * 4);
        assert!(is_modelled("aten::linear") && !is_modelled("aten::empty"));
    }
}
