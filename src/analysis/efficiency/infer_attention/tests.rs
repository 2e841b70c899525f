//! Unit tests of the inference attention models: shapes from the torch_npu / ascendtb / op-plugin
//! examples (and generated ones where said), FLOPs and bytes computed by hand in each test.

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
    let expect =
        65_536 + half(8_388_608) + half(8_388_608) + 128 + 8_192 + half(1_048_576) + 65_536 + 256;
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

#[test]
fn malformed_shapes_are_no_model_never_a_panic() {
    // Generated: a scalar / 1-D query, empty lists, zero dims, a 1-D block table, a huge batch.
    for (op, ins, dts) in [
        (
            "FusedInferAttentionScore",
            "\";;\"",
            "FLOAT16;FLOAT16;FLOAT16",
        ),
        (
            "IncreFlashAttention",
            "\"8;8;8\"",
            "FLOAT16;FLOAT16;FLOAT16",
        ),
        (
            "PromptFlashAttention",
            "\"1,0,4,8;1,0,4,8;1,0,4,8\"",
            "FLOAT16;FLOAT16;FLOAT16",
        ),
        (
            "PagedAttention",
            "\"2,32,128;16,128,32,128\"",
            "FLOAT16;FLOAT16",
        ),
        (
            "PagedAttention",
            "\"2,32,128;16,128;16,128;2\"",
            "FLOAT16;FLOAT16;FLOAT16;INT32",
        ),
        (
            "FusedInferAttentionScore",
            "\"4,1,512;0,128,512;0,128,512;4,8\"",
            "BF16;BF16;BF16;INT32",
        ),
        (
            "IncreFlashAttention",
            "\"4000000000,1,8;1,2,8;1,2,8\"",
            "BF16;BF16;BF16",
        ),
        (
            "FusedInferAttentionScore",
            "\"2,3;2,3;2,3\"",
            "BF16;BF16;BF16",
        ),
    ] {
        assert!(
            run(op, (ins, dts), ("\"1\"", "FLOAT16")).is_err(),
            "{op} {ins}"
        );
    }
}
