//! A small, fast, non-cryptographic hasher (the Fx hash used by rustc) for the interners and
//! per-chunk lookup maps on the ingest hot path. Keys are trusted (our own parse), so HashDoS
//! resistance is not needed.

use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
        self.add(bytes.len() as u64);
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.add(i as u64);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// The slot of a key given as two words among `slots` (a power of two above 1) of a small
/// direct-mapped table: each word times its own odd constant, the top bits of their xor.
#[inline(always)]
pub fn slot_of(a: u64, b: u64, slots: usize) -> usize {
    debug_assert!(slots.is_power_of_two() && slots > 1);
    let h = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    (h >> (64 - slots.trailing_zeros())) as usize
}

/// The high and low halves of the 128-bit product, xored (the mixing step of wyhash / foldhash).
#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = (a as u128).wrapping_mul(b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

/// One 64-bit hash of a byte string for the interners' maps: strings of up to 32 bytes (nearly
/// every name) are read as at most four overlapping words that cover every byte, mixed by
/// independent multiplies instead of one serial chain per 8 bytes; longer ones go through
/// [`FxHasher`] whole. Every byte and the length decide the hash.
#[inline]
pub fn bytes_hash(s: &[u8]) -> u64 {
    const K: [u64; 4] = [
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    ];
    let n = s.len();
    let w8 = |i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let w4 = |i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes")) as u64;
    let (a, b, c, d) = match n {
        0 => (0, 0, 0, 0),
        1..=3 => (
            s[0] as u64 | (s[n / 2] as u64) << 8 | (s[n - 1] as u64) << 16,
            0,
            0,
            0,
        ),
        4..=7 => (w4(0), w4(n - 4), 0, 0),
        8..=16 => (w8(0), w8(n - 8), 0, 0),
        17..=32 => (w8(0), w8(8), w8(n - 16), w8(n - 8)),
        _ => {
            let mut h = FxHasher::default();
            h.write(s);
            return h.finish();
        }
    };
    fold_mul(a ^ K[0], b ^ K[1] ^ n as u64) ^ fold_mul(c ^ K[2], d ^ K[3])
}

pub type FxBuildHasher = BuildHasherDefault<FxHasher>;
pub type FxHashMap<K, V> = std::collections::HashMap<K, V, FxBuildHasher>;
pub type FxHashSet<K> = std::collections::HashSet<K, FxBuildHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte and the length decide the hash: for strings of lengths 0 to 40 cut from one
    /// base string, every length gives a distinct hash and flipping any one bit of any byte
    /// changes it (a byte the words missed would fail here for certain; a true collision of the
    /// mix among these 13,000 variants would be a 2^-50 accident).
    #[test]
    fn every_byte_and_the_length_count() {
        let base: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        let mut seen = std::collections::HashSet::new();
        for n in 0..=40 {
            let s = &base[..n];
            assert!(seen.insert(bytes_hash(s)), "length {n}");
            for at in 0..n {
                for bit in 0..8 {
                    let mut t = s.to_vec();
                    t[at] ^= 1 << bit;
                    assert_ne!(bytes_hash(&t), bytes_hash(s), "len {n} byte {at} bit {bit}");
                }
            }
        }
    }
}

/// msprof-analyze's `double_hash` of a communicator group id (`cluster_analyse/common_func/
/// utils.py`): over the id's characters, `h1 = h1 * 29 + c` and `h2 = h2 * 131 + c`, each modulo
/// 2^32; the result is `h1 << 32 | h2`. analysis.db's CommAnalyzer* `group_name` and the
/// `@<group>` suffix of communication.json op names are this number in decimal (checked on the
/// real db/level1 root: `90.91.105.46%enp189s0f0_60000_0_1736410538306028` →
/// `17148521525495523210`, analysis.db CommAnalyzerTime's group_name).
pub fn vendor_group_hash(id: &str) -> u64 {
    let (mut h1, mut h2) = (0u64, 0u64);
    for c in id.chars() {
        h1 = (h1 * 29 + c as u64) % (1 << 32);
        h2 = (h2 * 131 + c as u64) % (1 << 32);
    }
    (h1 << 32) | h2
}

#[cfg(test)]
mod vendor_hash_tests {
    #[test]
    fn the_real_db_group() {
        assert_eq!(
            super::vendor_group_hash("90.91.105.46%enp189s0f0_60000_0_1736410538306028"),
            17148521525495523210
        );
    }
}
