//! What every work model returns: an op's family, FLOPs, bytes moved, the dtype its FLOPs are
//! charged to and the dims it used; or why it has no model. Shared by the Ascend op models
//! (`ascend_ops.rs`) and the PyTorch op models (`aten_ops.rs`).

use super::tensors::{Dtype, Tensor};
use crate::contract::Family;

/// One call's work.
#[derive(Debug, Clone, PartialEq)]
pub struct Work {
    pub family: Family,
    pub flops: u64,
    pub bytes: u64,
    /// The dtype the FLOPs are charged to (None: unknown; bytes-only ops may have none).
    pub dtype: Option<Dtype>,
    /// The dims the model used, or the shapes as written for bytes-only ops.
    pub shape: String,
    /// What the figure assumes, when it assumes something.
    pub caveat: Option<String>,
    /// FLOPs and bytes are upper bounds (a length the capture does not record was taken at its
    /// largest), not the work done.
    pub upper_bound: bool,
}

/// A work model's answer: the work, or why there is none.
pub type Modeled = Result<Work, &'static str>;

/// Bytes moved by one call: every present input read once and every output written once (the
/// compulsory traffic; caches can only lower it).
pub fn io_bytes(ins: &[Tensor], outs: &[Tensor]) -> u64 {
    ins.iter().chain(outs).map(Tensor::bytes).sum()
}

/// Shapes as a short class label: the dims of each tensor, `;` between, at most 120 characters.
pub fn shapes_label(ts: &[Tensor]) -> String {
    let s = ts
        .iter()
        .map(|t| {
            t.dims
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join(";");
    crate::diag::cap_text(&s, 120).into_owned()
}

/// A bytes-only model of `family`, charged to the first input's dtype.
pub fn bytes_only(family: Family, ins: &[Tensor], outs: &[Tensor]) -> Modeled {
    let bytes = io_bytes(ins, outs);
    if bytes == 0 {
        return Err("no tensor with a known dtype and shape");
    }
    Ok(Work {
        family,
        flops: 0,
        bytes,
        dtype: ins.iter().chain(outs).find_map(|t| t.dtype),
        shape: shapes_label(ins),
        caveat: None,
        upper_bound: false,
    })
}

/// Multiplies, None on overflow.
pub fn mul(xs: &[u64]) -> Option<u64> {
    xs.iter().try_fold(1u64, |a, &x| a.checked_mul(x))
}

/// Query-key pairs an attention computes: every pair (`causal` None), or those a causal mask
/// keeps. `bottom_right`: the mask aligned to the last key (flash-attn, Ascend sparse_mode 3:
/// query i sees keys ≤ i + Skv − Sq); else to the first (PyTorch `is_causal`, Ascend
/// sparse_mode 2: keys ≤ i). Closed forms of Σ_i clamp(·, 0, Skv), so no loop over Sq.
pub fn pairs(sq: u64, skv: u64, causal: Option<bool>) -> u64 {
    let tri = |n: u64| n * (n + 1) / 2;
    match causal {
        None => sq * skv,
        Some(false) if sq <= skv => tri(sq),
        Some(false) => tri(skv) + (sq - skv) * skv,
        Some(true) if skv >= sq => tri(sq) + sq * (skv - sq),
        Some(true) => tri(skv),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Σ over query rows of the keys the mask keeps, counted one by one.
    fn brute(sq: u64, skv: u64, bottom_right: bool) -> u64 {
        (0..sq as i64)
            .map(|i| {
                let last = if bottom_right {
                    i + skv as i64 - sq as i64
                } else {
                    i
                };
                (last + 1).clamp(0, skv as i64) as u64
            })
            .sum()
    }

    #[test]
    fn causal_pairs_match_a_row_by_row_count() {
        for sq in [1, 2, 7, 16, 33] {
            for skv in [1, 3, 7, 16, 40] {
                assert_eq!(
                    pairs(sq, skv, Some(false)),
                    brute(sq, skv, false),
                    "{sq} {skv}"
                );
                assert_eq!(
                    pairs(sq, skv, Some(true)),
                    brute(sq, skv, true),
                    "{sq} {skv}"
                );
            }
        }
        assert_eq!(pairs(4, 4, None), 16);
        assert_eq!(pairs(4, 4, Some(false)), 10);
    }
}
