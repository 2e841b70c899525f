//! Units, defined once. Time is integer nanoseconds everywhere; bytes come in two families that
//! must not be mixed up: binary multiples (KiB, MiB, GiB: npu-smi's "MB", vLLM's GiB,
//! `--max-memory`) and decimal ones (KB, MB, GB: byte counts shown to people, bandwidth in
//! GB/s, `synth --size`). Sizes people type are parsed here, by one parser.

pub const NS_PER_US: i64 = 1_000;
pub const NS_PER_MS: i64 = 1_000_000;
pub const NS_PER_S: i64 = 1_000_000_000;

/// The latest plausible timestamp (ns since the epoch: the year 2096).
pub const MAX_TS_NS: i64 = 4_000_000_000_000_000_000;
/// The longest plausible event or step: one week. Readers skip longer spans (`skipped_event`),
/// and a saved report holding a longer step is refused.
pub const MAX_SPAN_NS: i64 = 7 * 24 * 3600 * NS_PER_S;

pub const KIB: i64 = 1 << 10;
pub const MIB: i64 = 1 << 20;
pub const GIB: i64 = 1 << 30;

pub const KB: i64 = 1_000;
pub const MB: i64 = 1_000_000;
pub const GB: i64 = 1_000_000_000;

/// A duration in nanoseconds as text for people, in the largest unit it reaches (`13.985 ms`,
/// `250.000 µs`, `12.000 ns`); three decimals. Report statements and renderers share it.
pub fn human_duration(ns: f64) -> String {
    let a = ns.abs();
    let (div, unit) = if a >= NS_PER_S as f64 {
        (NS_PER_S, "s")
    } else if a >= NS_PER_MS as f64 {
        (NS_PER_MS, "ms")
    } else if a >= NS_PER_US as f64 {
        (NS_PER_US, "µs")
    } else {
        (1, "ns")
    };
    format!("{:.3} {unit}", ns / div as f64)
}

/// The sum of nanosecond values, saturating at the i64 limits instead of wrapping: a sum over
/// many events, each up to a week long (what readers accept), can pass 2^63 ns.
pub fn sum_ns(values: impl IntoIterator<Item = i64>) -> i64 {
    values.into_iter().fold(0i64, i64::saturating_add)
}

/// `part` as a percent of `whole` (0 when `whole` is 0).
pub fn percent(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// What a plain `K`, `M` or `G` (with or without `B`) means in a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeBase {
    /// Powers of 1024.
    Binary,
    /// Powers of 1000.
    Decimal,
}

/// `4G`, `512M`, `100K`, `2GB`, `1.5 MB`, `8GiB`, `12345` as bytes. `KiB`, `MiB` and `GiB` are
/// always binary; `K`, `M` and `G`, with or without `B`, count in `base`; a bare number is bytes.
/// The error says what is wrong with the text.
pub fn parse_size(s: &str, base: SizeBase) -> Result<u64, String> {
    let upper = s.trim().to_ascii_uppercase();
    let (t, binary) = match upper.strip_suffix("IB") {
        Some(t) => (t, true),
        None => (
            upper.strip_suffix('B').unwrap_or(&upper),
            base == SizeBase::Binary,
        ),
    };
    let (num, power) = match t.chars().last() {
        Some('G') => (&t[..t.len() - 1], 3),
        Some('M') => (&t[..t.len() - 1], 2),
        Some('K') => (&t[..t.len() - 1], 1),
        _ if binary && upper.ends_with("IB") => {
            return Err(format!("`{s}` has no K, M or G before iB"));
        }
        _ => (t, 0),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number with an optional K, M or G"))?;
    if !(v > 0.0 && v.is_finite()) {
        return Err(format!("`{s}` is not a positive size"));
    }
    let unit = if binary { 1024f64 } else { 1000f64 };
    let bytes = v * unit.powi(power);
    if bytes >= u64::MAX as f64 {
        return Err(format!("`{s}` is too large"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_both_bases() {
        let bin = |s| parse_size(s, SizeBase::Binary);
        let dec = |s| parse_size(s, SizeBase::Decimal);
        assert_eq!(bin("4G"), Ok(4 << 30));
        assert_eq!(bin("512M"), Ok(512 << 20));
        assert_eq!(bin("100K"), Ok(102_400));
        assert_eq!(bin("4GB"), Ok(4 << 30));
        assert_eq!(bin("12345"), Ok(12_345));
        assert_eq!(dec("500KB"), Ok(500_000));
        assert_eq!(dec("2GB"), Ok(2_000_000_000));
        assert_eq!(dec("1.5 MB"), Ok(1_500_000));
        assert_eq!(dec("2g"), Ok(2_000_000_000));
        assert_eq!(dec("8GiB"), Ok(8 << 30));
        assert_eq!(dec("100B"), Ok(100));
        for bad in ["lots", "", "-1G", "0", "iB", "1e400", "NaNG"] {
            assert!(dec(bad).is_err(), "{bad}");
            assert!(bin(bad).is_err(), "{bad}");
        }
        assert_eq!(MIB, 1_048_576);
        assert_eq!(GB / MB, KB);
        assert_eq!(NS_PER_S / NS_PER_MS, NS_PER_MS / NS_PER_US);
    }
}
