//! Work models of Ascend's inference attention ops from their kernel details: CANN's
//! IncreFlashAttention (decode), PromptFlashAttention (prefill), FusedInferAttentionScore (both,
//! paged or not, MLA with query_rope / key_rope) and ATB's PagedAttention (its kernels
//! `PagedAttention*Kernel`). Input order from the op definitions (docs/analyses/efficiency.md
//! lists the sources); absent optional inputs are not written in the kernel details, so only the
//! query, key and value lists are found by position and the rest by dtype and rank.
//!
//! Every query row attends to at most Skv keys, so `FLOPs = 2 · pairs · (Nq·D + Nq·Dv)` per batch,
//! written from element counts so that no head count (an attribute the kernel details lack) is
//! needed: `2 · (query elements / Sq) · pairs · (key + value elements) / key elements` (+ the
//! query_rope's share of Q·Kᵀ). Skv is the key's length, or the block table's width × the block
//! size when the KV cache is paged: the actual lengths (`actual_seq_lengths(_kv)`, ATB
//! `contextLens`) are runtime values the capture does not record and can only shorten it, so every
//! figure here is an **upper bound** (`Work::upper_bound`).

use super::tensors::{Dtype, Tensor};
use super::work::{Modeled, Work, io_bytes, pairs};
use crate::contract::Family;

/// Whether `op` is one of the inference attention op types modelled here.
pub fn handles(op: &str) -> bool {
    [
        "IncreFlashAttention",
        "PromptFlashAttention",
        "FusedInferAttentionScore",
        "PagedAttention",
    ]
    .iter()
    .any(|p| op.starts_with(p))
}

/// The work of one call of `op` (one of [`handles`]).
pub fn model(op: &str, ins: &[Tensor], outs: &[Tensor]) -> Modeled {
    let Some(q) = ins.first().filter(|t| t.present && t.numel() > 0) else {
        return Err("attention needs a non-empty query");
    };
    if op.starts_with("PagedAttention") {
        return atb_paged(q, ins, outs);
    }
    let n = kv_lists(q, ins).ok_or("the key and value lists cannot be told apart")?;
    let (keys, rest) = (&ins[1..=n], &ins[2 * n + 1..]);
    let rope = rope(q, &keys[0], rest);
    // block_table (IFA / FIA): the only INT32 2-D input after the KV lists (the op definitions'
    // other optional inputs are floats, INT64 lengths, or 1-D).
    let block_table = rest
        .iter()
        .find(|t| t.present && t.dtype == Some(Dtype::I32) && t.rank() == 2)
        .filter(|_| !op.starts_with("PromptFlashAttention"));
    match block_table {
        Some(bt) if n == 1 => {
            let bs = match keys[0].rank() {
                3 => keys[0].dims[1],
                4 => keys[0].dims[2],
                5 => keys[0].dims[3],
                _ => {
                    return Err(
                        "paged key cache is not [blocks, block_size, H] / [blocks, N, block_size, D]",
                    );
                }
            };
            paged(q, ins, outs, rope, bt, bs)
        }
        Some(_) => Err("a block table with a key list of several tensors"),
        None => dense(op.starts_with("IncreFlashAttention"), q, ins, outs, n, rope),
    }
}

/// The length of the key (and value) list: 1, or B when the key is a list of B tensors
/// `[1, S_b, …]` (IncreFlashAttention's tensor-list KV), each value shaped like its key but
/// possibly in its head dim. None when the inputs cannot hold the lists.
fn kv_lists(q: &Tensor, ins: &[Tensor]) -> Option<usize> {
    let b = q.dims.first().copied().unwrap_or(0) as usize;
    let same = |a: &Tensor, v: &Tensor| {
        a.rank() == v.rank() && a.rank() >= 3 && a.dims[..a.rank() - 1] == v.dims[..v.rank() - 1]
    };
    let list = b > 1
        && ins.len() > 2 * b
        && (1..=b).all(|i| {
            let k = &ins[i];
            k.rank() == ins[1].rank() && k.dims.first() == Some(&1) && same(k, &ins[b + i])
        });
    if list {
        return Some(b);
    }
    (ins.len() >= 3 && ins[1].present && ins[2].present && ins[1].numel() > 0).then_some(1)
}

/// query_rope and key_rope (FIA's MLA inputs): the first later input shaped like the query but
/// in its last dim (same dtype), followed by one shaped like the key but in its last dim.
fn rope<'a>(q: &Tensor, k: &Tensor, rest: &'a [Tensor]) -> Option<&'a Tensor> {
    let like = |a: &Tensor, t: &Tensor| {
        t.present
            && t.dtype == a.dtype
            && t.rank() == a.rank()
            && t.dims[..t.rank() - 1] == a.dims[..a.rank() - 1]
    };
    let i = rest.iter().position(|t| like(q, t))?;
    rest[i + 1..].iter().any(|t| like(k, t)).then(|| &rest[i])
}

/// Σ keys × (Nq·D + Nq·Dv) per query row from element counts: `q_rows` query elements per row
/// position times (key + value) / key elements, plus the query_rope's elements (Q·Kᵀ only).
fn per_key(q_rows: u128, kn: u64, vn: u64, rope_rows: u128) -> Option<u128> {
    let qk_pv = q_rows.checked_mul(u128::from(kn) + u128::from(vn))?;
    (kn > 0 && qk_pv % u128::from(kn) == 0).then(|| qk_pv / u128::from(kn) + rope_rows)
}

fn flops(per_key: u128, pairs: u64) -> Option<u64> {
    per_key
        .checked_mul(2 * u128::from(pairs))
        .and_then(|f| u64::try_from(f).ok())
}

/// Paged KV: each query row attends to at most `max_blocks × block_size` keys. Bytes: the
/// non-cache inputs and outputs, and of each cache tensor at most the blocks the table can name.
fn paged(
    q: &Tensor,
    ins: &[Tensor],
    outs: &[Tensor],
    rope: Option<&Tensor>,
    bt: &Tensor,
    bs: u64,
) -> Modeled {
    let (k, v) = (&ins[1], &ins[2]);
    let (rows, max_blocks) = (bt.dims[0], bt.dims[1]);
    let nb = k.dims[0];
    if nb == 0 || bs == 0 || v.dims.first() != Some(&nb) || rows == 0 || q.dims[0] < rows {
        return Err("the block table and the KV cache disagree");
    }
    let skv = max_blocks.checked_mul(bs).ok_or("dims overflow")?;
    let per = per_key(
        u128::from(q.numel()),
        k.numel(),
        v.numel(),
        rope.map_or(0, |r| u128::from(r.numel())),
    )
    .ok_or("the key and value caches disagree")?;
    let f = flops(per, skv).ok_or("dims overflow")?;
    // Cache tensors (key, value, key_rope): the blocks `rows × max_blocks` can name, at most all.
    let named = u128::from(rows) * u128::from(max_blocks);
    let cache = |t: &Tensor| t.present && t.rank() == k.rank() && t.dims.first() == Some(&nb);
    let read = |t: &Tensor| (t.bytes() as u128 * named / u128::from(nb)).min(t.bytes() as u128);
    let bytes: u128 = ins[1..]
        .iter()
        .map(|t| if cache(t) { read(t) } else { t.bytes() as u128 })
        .chain(std::iter::once(u128::from(q.bytes())))
        .chain(outs.iter().map(|t| u128::from(t.bytes())))
        .sum();
    Ok(Work {
        family: Family::Attention,
        flops: f,
        bytes: u64::try_from(bytes).map_err(|_| "dims overflow")?,
        dtype: q.dtype,
        shape: format!(
            "q={} paged Skv≤{max_blocks}×{bs}{}",
            dims(q),
            if rope.is_some() { " +rope" } else { "" }
        ),
        caveat: Some(format!(
            "upper bound: every query row charged the block table's width ({max_blocks} blocks × {bs}); the real KV lengths (actual_seq_lengths_kv / contextLens) are runtime values the capture does not record"
        )),
        upper_bound: true,
    })
}

/// ATB PagedAttention (ascendtb PagedAttentionOperation): query `[tokens, N, D]`, keyCache /
/// valueCache `[blocks, block_size, N_kv, D]` (Atlas inference NZ: `[blocks, H/16, block_size,
/// 16]`), blockTables `[tokens, max_blocks]` INT32, then contextLens and the optional mask.
fn atb_paged(q: &Tensor, ins: &[Tensor], outs: &[Tensor]) -> Modeled {
    let (Some(k), Some(bt)) = (ins.get(1), ins.get(3)) else {
        return Err("PagedAttention needs query, key cache, value cache and block table");
    };
    if bt.dtype != Some(Dtype::I32) || bt.rank() != 2 || k.rank() != 4 || ins[2].rank() != 4 {
        return Err(
            "PagedAttention inputs are not query, 4-D key / value caches, INT32 block table",
        );
    }
    let bs = if k.format == "FRACTAL_NZ" {
        k.dims[2]
    } else {
        k.dims[1]
    };
    paged(q, ins, outs, None, bt, bs)
}

/// Sq and Skv of a non-paged query / key pair, by layout: 4-D BNSD `[B, N, S, D]` or BSND
/// `[B, S, N, D]`, 3-D BSH `[B, S, H]`; TND (varlen) is no model. When both 4-D readings fit
/// (B equal, query heads a multiple of key heads, Sq = 1 for decode) and disagree on Skv, a mask,
/// pse_shift, softmax_lse or a BNSD_BSND output shaped for one reading only decides.
fn lengths(
    decode: bool,
    q: &Tensor,
    k: &Tensor,
    others: &[&Tensor],
) -> Result<(u64, u64), &'static str> {
    let (qd, kd) = (&q.dims, &k.dims);
    if q.rank() != k.rank() || (q.rank() == 4 && qd[0] != kd[0]) {
        return Err("query and key are not one of the BNSD / BSND / BSH / TND layouts");
    }
    // (Nq, Sq, Nkv, Skv) per reading.
    let readings: Vec<(u64, u64, u64, u64)> = match q.rank() {
        4 => vec![(qd[1], qd[2], kd[1], kd[2]), (qd[2], qd[1], kd[2], kd[1])],
        3 => {
            let tnd = qd[2] == kd[2] && kd[1] > 0 && qd[1] % kd[1] == 0 && !decode;
            let bsh = qd[0] == kd[0] && kd[2] > 0 && qd[2] % kd[2] == 0 && (!decode || qd[1] == 1);
            match (bsh, tnd) {
                (true, false) => return Ok((qd[1], kd[1])),
                (false, true) => {
                    return Err(
                        "TND (varlen) layout: the sequence lengths are tensor values, not shapes",
                    );
                }
                (false, false) => return Err("query and key are not one of the BSH / TND layouts"),
                // Both fit: only a mask [Sq, Skv] / [B, Sq, Skv] decides for BSH.
                (true, true) => vec![(0, qd[1], 0, kd[1])],
            }
        }
        _ => return Err("query and key are not 3-D or 4-D"),
    };
    let fits = |&(nq, sq, nkv, _): &(u64, u64, u64, u64)| {
        (q.rank() == 3 || (nkv > 0 && nq % nkv == 0)) && (!decode || sq == 1)
    };
    let ok: Vec<_> = readings.iter().filter(|r| fits(r)).collect();
    if q.rank() == 4 && ok.len() == 2 && ok[0].1 == ok[1].1 && ok[0].3 == ok[1].3 {
        return Ok((ok[0].1, ok[0].3));
    }
    let b = qd[0];
    let witnessed: Vec<_> = ok
        .iter()
        .filter(|&&&(nq, sq, _, skv)| {
            others.iter().any(|t| {
                let d = t.dims.as_slice();
                let mask = d == [sq, skv]
                    || d == [b, sq, skv]
                    || d == [b, 1, sq, skv]
                    || d == [1, 1, sq, skv];
                let pse = q.rank() == 4 && (d == [b, nq, sq, skv] || d == [1, nq, sq, skv]);
                let lse = q.rank() == 4 && d == [b, nq, sq, 1];
                // A 2-D 2048×2048 mask is the compressed one (sparse modes 2/3/4): no witness.
                (mask || pse || lse) && d != [2048, 2048]
            })
        })
        .collect();
    match (ok.len(), witnessed.as_slice()) {
        (1, _) if q.rank() == 4 => Ok((ok[0].1, ok[0].3)),
        (_, [one]) => Ok((one.1, one.3)),
        (0, _) => Err("query and key fit no layout (heads, decode Sq = 1)"),
        _ => Err(
            "layout ambiguous (BNSD or BSND, BSH or TND): input_layout is an attribute the kernel details do not record",
        ),
    }
}

/// Non-paged K / V: Skv from the key's shape (per tensor of a key list), causal when the
/// 2048×2048 compressed mask (sparse modes 2 / 3 / 4) is an input.
fn dense(
    decode: bool,
    q: &Tensor,
    ins: &[Tensor],
    outs: &[Tensor],
    n: usize,
    rope: Option<&Tensor>,
) -> Modeled {
    let rest = &ins[2 * n + 1..];
    let mut others: Vec<&Tensor> = rest.iter().chain(outs.iter().skip(1)).collect();
    // A BNSD_BSND output: [B, Sq, N, Dv] while the query is [B, N, Sq, D].
    let transposed;
    if let Some(o) = outs
        .first()
        .filter(|o| o.rank() == 4 && q.rank() == 4 && o.dims[1..3] != q.dims[1..3])
    {
        transposed = Tensor {
            dims: vec![q.dims[0], o.dims[2], o.dims[1], 1],
            ..Tensor::default()
        };
        others.push(&transposed);
    }
    let mask = rest.iter().any(|t| t.dims == [2048, 2048]);
    let causal = mask.then_some(true);
    let mut total: u64 = 0;
    let mut label = Vec::new();
    let q_rows_all = u128::from(q.numel());
    // A key list holds one batch row per tensor: its layout read against one row of the query.
    let row = Tensor {
        dims: [&[1][..], &q.dims[1..]].concat(),
        ..q.clone()
    };
    let q1 = if n > 1 { &row } else { q };
    for i in 1..=n {
        let (k, v) = (&ins[i], &ins[n + i]);
        let (sq, skv) = lengths(decode, q1, k, &others)?;
        if sq == 0 {
            return Err("empty query");
        }
        let q_rows = q_rows_all / (n as u128) / u128::from(sq);
        let r_rows = rope.map_or(0, |r| u128::from(r.numel()) / (n as u128) / u128::from(sq));
        let per =
            per_key(q_rows, k.numel(), v.numel(), r_rows).ok_or("the key and value disagree")?;
        let f = flops(per, pairs(sq, skv, causal)).ok_or("dims overflow")?;
        total = total.checked_add(f).ok_or("dims overflow")?;
        if label.len() < 4 && !label.contains(&skv) {
            label.push(skv);
        }
    }
    let skvs = label
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("/");
    let mut caveat = vec![format!(
        "upper bound: Skv is the key's length ({skvs}); actual_seq_lengths(_kv), runtime values the capture does not record, can only shorten it"
    )];
    if mask {
        caveat.push(
            "2048×2048 compressed mask (sparse mode 2/3/4): counted as bottom-right causal".into(),
        );
    }
    Ok(Work {
        family: Family::Attention,
        flops: total,
        bytes: io_bytes(ins, outs),
        dtype: q.dtype,
        shape: format!(
            "q={} Skv≤{skvs}{}{}{}",
            dims(q),
            if n > 1 {
                format!(" ({n} KV tensors)")
            } else {
                String::new()
            },
            if rope.is_some() { " +rope" } else { "" },
            if mask { " causal" } else { "" }
        ),
        caveat: Some(caveat.join("; ")),
        upper_bound: true,
    })
}

fn dims(t: &Tensor) -> String {
    t.dims
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::efficiency::tensors;

    /// The model on kernel details written as the captures write them (quotes, `;` lists).
    fn run(op: &str, ins: (&str, &str), outs: (&str, &str)) -> Modeled {
        let nd = |dt: &str| dt.split(';').map(|_| "ND").collect::<Vec<_>>().join(";");
        let i = tensors::ascend(ins.0, ins.1, &nd(ins.1)).unwrap();
        let o = tensors::ascend(outs.0, outs.1, &nd(outs.1)).unwrap();
        model(op, &i, &o)
    }

    #[test]
    fn prompt_flash_attention_bnsd_from_the_torch_npu_example() {
        // torch_npu npu_prompt_flash_attention example (CANN 8.0.RC1 ptaoplist_000142): q
        // [1, 8, 164, 576], k / v [1, 8, 1024, 576] fp16, BNSD. The BSND reading would need 164
        // query heads over 1024 key heads (164 % 1024 ≠ 0), so only BNSD fits.
        // FLOPs = 2 · B·N · Sq · Skv · (D + Dv) = 2 · 8 · 164 · 1024 · 1152 = 3,095,396,352.
        let w = run(
            "PromptFlashAttention",
            (
                "\"1,8,164,576;1,8,1024,576;1,8,1024,576\"",
                "FLOAT16;FLOAT16;FLOAT16",
            ),
            ("\"1,8,164,576\"", "FLOAT16"),
        )
        .unwrap();
        assert_eq!(w.flops, 3_095_396_352);
        assert_eq!(w.flops, 2 * 8 * 164 * 1024 * 1152);
        // Bytes: q + k + v + out, fp16: (755,712 + 2 · 4,718,592 + 755,712) · 2.
        assert_eq!(w.bytes, (2 * 755_712 + 2 * 4_718_592) * 2);
        assert!(w.upper_bound && w.caveat.unwrap().contains("upper bound"));
        // With the compressed 2048×2048 mask (sparse mode 2/3/4): bottom-right causal pairs
        // Sq(Sq+1)/2 + Sq·(Skv − Sq) = 164·165/2 + 164·860 = 13,530 + 141,040 = 154,570.
        let c = run(
            "PromptFlashAttention",
            (
                "\"1,8,164,576;1,8,1024,576;1,8,1024,576;2048,2048\"",
                "FLOAT16;FLOAT16;FLOAT16;BOOL",
            ),
            ("\"1,8,164,576\"", "FLOAT16"),
        )
        .unwrap();
        assert_eq!(c.flops, 2 * 8 * 154_570 * 1152);
        assert!(c.shape.ends_with("causal"));
    }

    #[test]
    fn incre_flash_attention_bsh_decode_needs_no_head_count() {
        // op-plugin test_incre_flash_attention.py: BSH q (1, 1, 4096) with num_heads = 32 (an
        // attribute, not in the kernel details); K / V [1, 2048, 4096] (a 2048-token cache,
        // ours). 2 · B · Sq · Skv · (H + H) = 2 · 2048 · 8192 = 33,554,432, the same as
        // 2 · N · Skv · (D + Dv) = 2 · 32 · 2048 · 256 for any N · D = 4096.
        let w = run(
            "IncreFlashAttention",
            (
                "\"1,1,4096;1,2048,4096;1,2048,4096\"",
                "FLOAT16;FLOAT16;FLOAT16",
            ),
            ("\"1,1,4096\"", "FLOAT16"),
        )
        .unwrap();
        assert_eq!(w.flops, 33_554_432);
        assert_eq!(w.flops, 2 * 32 * 2048 * 256);
        // GQA: 8 key heads of 128 (H_kv = 1024): Nq · (D + Dv) still 32 · 256.
        let g = run(
            "IncreFlashAttention",
            (
                "\"1,1,4096;1,2048,1024;1,2048,1024\"",
                "FLOAT16;FLOAT16;FLOAT16",
            ),
            ("\"1,1,4096\"", "FLOAT16"),
        )
        .unwrap();
        assert_eq!(g.flops, 2 * 32 * 2048 * 256);
        // BNSD decode [B, N, 1, D]: the dim that is 1 is Sq.
        let b = run(
            "IncreFlashAttention",
            ("\"4,32,1,128;4,8,2048,128;4,8,2048,128\"", "BF16;BF16;BF16"),
            ("\"4,32,1,128\"", "BF16"),
        )
        .unwrap();
        assert_eq!(b.flops, 2 * 4 * 32 * 2048 * 256);
        assert_eq!(b.dtype, Some(Dtype::Bf16));
    }

    #[test]
    fn key_list_of_one_tensor_per_batch_row() {
        // IFA with a key / value list of B = 2 tensors [1, S_b, H] (S = 100 and 300).
        // 2 · Sq · H_q · (1 + H_v / H_k) · Σ S_b = 2 · 1 · 1024 · 2 · 400 = 1,638,400.
        let w = run(
            "IncreFlashAttention",
            (
                "\"2,1,1024;1,100,1024;1,300,1024;1,100,1024;1,300,1024\"",
                "FLOAT16;FLOAT16;FLOAT16;FLOAT16;FLOAT16",
            ),
            ("\"2,1,1024\"", "FLOAT16"),
        )
        .unwrap();
        assert_eq!(w.flops, 1_638_400);
        assert!(w.shape.contains("(2 KV tensors)"));
    }

    #[test]
    fn fused_infer_attention_paged_with_mla_rope() {
        // vLLM-Ascend's MLA decode through FIA (BNSD): q_nope [4, 16, 1, 512], the latent cache
        // as key and value [64 blocks, 1, 128, 512], block_table [4, 8] INT32, query_rope
        // [4, 16, 1, 64], key_rope [64, 1, 128, 64]. Each query row ≤ 8 · 128 = 1024 keys:
        // 2 · 1024 · (q 32,768 · (512 + 512) / 512 + q_rope 4,096) = 142,606,336.
        let w = run(
            "FusedInferAttentionScore",
            (
                "\"4,16,1,512;64,1,128,512;64,1,128,512;4,8;4,16,1,64;64,1,128,64\"",
                "BF16;BF16;BF16;INT32;BF16;BF16",
            ),
            ("\"4,16,1,512;4,16,1,1\"", "BF16;FLOAT"),
        )
        .unwrap();
        assert_eq!(w.flops, 142_606_336);
        assert!(w.shape.contains("paged Skv≤8×128 +rope"));
        // Bytes: the caches only as far as 4 · 8 of 64 blocks reach (half), the rest whole:
        // q 65,536 + k 8,388,608/2 + v 8,388,608/2 + bt 4·8·4 + q_rope 8,192 + k_rope
        // 1,048,576/2 + out 65,536 + lse 64·4.
        let half = |b: u64| b / 2;
        let expect = 65_536
            + half(8_388_608)
            + half(8_388_608)
            + 128
            + 8_192
            + half(1_048_576)
            + 65_536
            + 256;
        assert_eq!(w.bytes, expect);
    }

    #[test]
    fn fused_infer_attention_paged_bsh() {
        // FIA decode, BSH q [8, 1, 4096], caches [1000 blocks, 128, H_kv 512], block_table
        // [8, 32]: ≤ 32 · 128 = 4096 keys per row (no head count needed: H_v / H_k = 1);
        // 2 · 4096 · q 32,768 · (1 + 1) = 536,870,912.
        let w = run(
            "FusedInferAttentionScore",
            (
                "\"8,1,4096;1000,128,512;1000,128,512;8,32\"",
                "FLOAT16;FLOAT16;FLOAT16;INT32",
            ),
            ("\"8,1,4096;1\"", "FLOAT16;FLOAT"),
        )
        .unwrap();
        assert_eq!(w.flops, 536_870_912);
    }

    #[test]
    fn atb_paged_attention_from_the_ascendtb_demo() {
        // ascendtb PagedAttentionOperation demo: 2 tokens, 32 heads of 128, 16 blocks of 128,
        // KV heads 32, MAX_CONTEXT_LEN 1024 → block table [2, 8]; contextLens [2] INT32.
        // ≤ 2 · (2 · 32 · 128) · (8 · 128) · (1 + 1) = 33,554,432.
        let w = run(
            "PagedAttentionMaskNdKernel",
            (
                "\"2,32,128;16,128,32,128;16,128,32,128;2,8;2\"",
                "FLOAT16;FLOAT16;FLOAT16;INT32;INT32",
            ),
            ("\"2,32,128\"", "FLOAT16"),
        )
        .unwrap();
        assert_eq!(w.flops, 33_554_432);
        assert!(w.upper_bound);
    }

    #[test]
    fn ambiguous_and_varlen_layouts_are_no_model() {
        // MHA [1, 32, 2048, 128] twice: BNSD (Skv 2048) and BSND (Skv 32) both fit.
        let e = run(
            "PromptFlashAttention",
            (
                "\"1,32,2048,128;1,32,2048,128;1,32,2048,128\"",
                "FLOAT16;FLOAT16;FLOAT16",
            ),
            ("\"1,32,2048,128\"", "FLOAT16"),
        );
        assert!(e.unwrap_err().contains("ambiguous"));
        // The same with a [B, 1, Sq, Skv] mask [1, 1, 2048, 2048]: BNSD's Sq × Skv, not BSND's
        // 32 × 32, so BNSD.
        let w = run(
            "PromptFlashAttention",
            (
                "\"1,32,2048,128;1,32,2048,128;1,32,2048,128;1,1,2048,2048\"",
                "FLOAT16;FLOAT16;FLOAT16;BOOL",
            ),
            ("\"1,32,2048,128\"", "FLOAT16"),
        );
        assert_eq!(w.unwrap().flops, 2 * 32 * 2048 * 2048 * 256);
        // TND q [300, 32, 128], k [500, 8, 128]: varlen.
        let t = run(
            "FusedInferAttentionScore",
            (
                "\"300,32,128;500,8,128;500,8,128\"",
                "FLOAT16;FLOAT16;FLOAT16",
            ),
            ("\"300,32,128;1\"", "FLOAT16;FLOAT"),
        );
        assert!(t.unwrap_err().contains("TND"));
    }
}
