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
    let Some(q) = ins
        .first()
        .filter(|t| t.present && t.rank() >= 2 && t.numel() > 0)
    else {
        return Err("attention needs a non-empty query of 2 dims or more");
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
        && b <= (ins.len() - 1) / 2
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
        a.rank() >= 1
            && t.present
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
mod tests;
