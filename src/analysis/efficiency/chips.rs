//! Dense peak throughput per dtype and memory bandwidth of the GPUs users run, one row per
//! product, each from the vendor's datasheet (the URL in `source`). Dense figures: NVIDIA lists
//! Tensor Core peaks "with sparsity", so a row holds half of those. A row is chosen by the
//! Kineto `deviceProperties` of the device: name substrings (case-insensitive), and where the
//! name does not decide (80 GB vs 40 GB A100s; ROCm naming an MI250 / MI300 GCD "AMD Radeon
//! Graphics"), the memory size, compute capability and compute-unit count. A device no row
//! matches gets no peak ("not estimated"), never a guessed one.
//!
//! Ascend chips are not in this table: their peak is computed from the capture's own chip facts
//! (`peaks.rs`), since NPU_INFO names only the family (`Ascend910B` covers 910B1–B4, 20 or 24 AI
//! cores at 1.5–1.85 GHz).

/// What the capture says of a GPU (Kineto `deviceProperties`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuProps {
    pub name: String,
    /// `totalGlobalMem`, bytes.
    pub mem_bytes: u64,
    /// `numSms` (NVIDIA SMs, AMD compute units).
    pub sms: u64,
    /// `computeMajor`, `computeMinor`.
    pub cc: (i64, i64),
}

/// One product.
pub struct Chip {
    pub row: &'static str,
    /// Every one of these appears in the name (case-insensitive).
    pub all: &'static [&'static str],
    /// None of these appears in the name.
    pub none: &'static [&'static str],
    /// Memory range, GB (10^9 B), inclusive: (0, 0) any.
    pub mem_gb: (u64, u64),
    /// Compute units / SMs (0: any) and compute capability ((-1, -1): any).
    pub sms: u64,
    pub cc: (i64, i64),
    /// Dense peaks, TFLOPS (TOPS for int8); 0: not listed.
    pub fp16: f64,
    pub bf16: f64,
    pub tf32: f64,
    pub fp32: f64,
    pub fp8: f64,
    pub int8: f64,
    /// Peak memory bandwidth, GB/s.
    pub gbps: f64,
    pub source: &'static str,
}

const A100: &str = "NVIDIA A100 datasheet (https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf)";
const H100: &str = "NVIDIA H100 datasheet, dense = half the with-sparsity Tensor Core figure (https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet)";
const H200: &str = "NVIDIA H200 product page, dense = half the with-sparsity figure (https://www.nvidia.com/en-us/data-center/h200/)";
const B200: &str = "NVIDIA HGX B200 specifications, per GPU = 1/8 of the 8-GPU board, dense = half the with-sparsity figure (https://www.nvidia.com/en-us/data-center/hgx/)";
const V100: &str = "NVIDIA V100 datasheet (https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf)";
const MI250X: &str = "AMD Instinct MI250X product page; one GCD (ROCm device) = half the 2-GCD module (https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html)";
const MI250: &str = "AMD Instinct MI250 product page; one GCD (ROCm device) = half the 2-GCD module (https://www.amd.com/en/products/accelerators/instinct/mi200/mi250.html)";
const MI300X: &str = "AMD Instinct MI300X data sheet (https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html)";
const MI325X: &str = "AMD Instinct MI325X data sheet (https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html)";

const ANY_CC: (i64, i64) = (-1, -1);

macro_rules! chip {
    ($row:literal, $all:expr, $none:expr, $mem:expr, $sms:expr, $cc:expr,
     [$fp16:expr, $bf16:expr, $tf32:expr, $fp32:expr, $fp8:expr, $int8:expr], $gbps:expr, $src:expr) => {
        Chip {
            row: $row,
            all: $all,
            none: $none,
            mem_gb: $mem,
            sms: $sms,
            cc: $cc,
            fp16: $fp16,
            bf16: $bf16,
            tf32: $tf32,
            fp32: $fp32,
            fp8: $fp8,
            int8: $int8,
            gbps: $gbps,
            source: $src,
        }
    };
}

/// First match wins: specific rows before general ones.
pub const CHIPS: &[Chip] = &[
    chip!(
        "NVIDIA A100 PCIe 80GB",
        &["A100", "PCIE"],
        &[],
        (60, 100),
        0,
        ANY_CC,
        [312.0, 312.0, 156.0, 19.5, 0.0, 624.0],
        1935.0,
        A100
    ),
    chip!(
        "NVIDIA A100 PCIe 40GB",
        &["A100", "PCIE"],
        &[],
        (0, 59),
        0,
        ANY_CC,
        [312.0, 312.0, 156.0, 19.5, 0.0, 624.0],
        1555.0,
        A100
    ),
    chip!(
        "NVIDIA A100 SXM 80GB",
        &["A100"],
        &["PCIE"],
        (60, 100),
        0,
        ANY_CC,
        [312.0, 312.0, 156.0, 19.5, 0.0, 624.0],
        2039.0,
        A100
    ),
    chip!(
        "NVIDIA A100 SXM 40GB",
        &["A100"],
        &["PCIE"],
        (0, 59),
        0,
        ANY_CC,
        [312.0, 312.0, 156.0, 19.5, 0.0, 624.0],
        1555.0,
        A100
    ),
    chip!(
        "NVIDIA H100 NVL",
        &["H100", "NVL"],
        &[],
        (0, 0),
        0,
        ANY_CC,
        [835.5, 835.5, 417.5, 60.0, 1670.5, 1670.5],
        3900.0,
        H100
    ),
    chip!(
        "NVIDIA H100 PCIe",
        &["H100", "PCIE"],
        &[],
        (0, 0),
        0,
        ANY_CC,
        [756.5, 756.5, 378.0, 51.0, 1513.0, 1513.0],
        2000.0,
        H100
    ),
    chip!(
        "NVIDIA H100 SXM",
        &["H100"],
        &["NVL", "PCIE"],
        (0, 0),
        0,
        ANY_CC,
        [989.5, 989.5, 494.5, 67.0, 1979.0, 1979.0],
        3350.0,
        H100
    ),
    chip!(
        "NVIDIA H200 NVL",
        &["H200", "NVL"],
        &["GH200"],
        (0, 0),
        0,
        ANY_CC,
        [835.5, 835.5, 417.5, 60.0, 1670.5, 1670.5],
        4800.0,
        H200
    ),
    chip!(
        "NVIDIA H200 SXM",
        &["H200"],
        &["NVL", "GH200"],
        (0, 0),
        0,
        ANY_CC,
        [989.5, 989.5, 494.5, 67.0, 1979.0, 1979.0],
        4800.0,
        H200
    ),
    chip!(
        "NVIDIA B200",
        &["B200"],
        &[],
        (0, 0),
        0,
        ANY_CC,
        [2250.0, 2250.0, 1125.0, 75.0, 4500.0, 4500.0],
        8000.0,
        B200
    ),
    chip!(
        "NVIDIA V100S PCIe",
        &["V100S"],
        &[],
        (0, 0),
        0,
        ANY_CC,
        [130.0, 0.0, 0.0, 16.4, 0.0, 0.0],
        1134.0,
        V100
    ),
    chip!(
        "NVIDIA V100 PCIe",
        &["V100", "PCIE"],
        &[],
        (0, 0),
        0,
        ANY_CC,
        [112.0, 0.0, 0.0, 14.0, 0.0, 0.0],
        900.0,
        V100
    ),
    chip!(
        "NVIDIA V100 SXM2",
        &["V100"],
        &["PCIE"],
        (0, 0),
        0,
        ANY_CC,
        [125.0, 0.0, 0.0, 15.7, 0.0, 0.0],
        900.0,
        V100
    ),
    chip!(
        "AMD Instinct MI250X (one GCD)",
        &["MI250X"],
        &[],
        (0, 70),
        110,
        ANY_CC,
        [191.5, 191.5, 0.0, 47.85, 0.0, 191.5],
        1638.4,
        MI250X
    ),
    chip!(
        "AMD Instinct MI250X (one GCD)",
        &["AMD"],
        &["MI2", "MI3"],
        (60, 70),
        110,
        (9, 0),
        [191.5, 191.5, 0.0, 47.85, 0.0, 191.5],
        1638.4,
        MI250X
    ),
    chip!(
        "AMD Instinct MI250 (one GCD)",
        &["MI250"],
        &[],
        (0, 70),
        104,
        ANY_CC,
        [181.05, 181.05, 0.0, 45.25, 0.0, 181.05],
        1638.4,
        MI250
    ),
    chip!(
        "AMD Instinct MI250 (one GCD)",
        &["AMD"],
        &["MI2", "MI3"],
        (60, 70),
        104,
        (9, 0),
        [181.05, 181.05, 0.0, 45.25, 0.0, 181.05],
        1638.4,
        MI250
    ),
    chip!(
        "AMD Instinct MI325X",
        &["MI325X"],
        &[],
        (0, 0),
        0,
        ANY_CC,
        [1307.4, 1307.4, 653.7, 163.4, 2614.9, 2614.9],
        6000.0,
        MI325X
    ),
    chip!(
        "AMD Instinct MI325X",
        &["AMD"],
        &["MI2", "MI3"],
        (250, 300),
        304,
        (9, 4),
        [1307.4, 1307.4, 653.7, 163.4, 2614.9, 2614.9],
        6000.0,
        MI325X
    ),
    chip!(
        "AMD Instinct MI300X",
        &["MI300X"],
        &[],
        (0, 0),
        0,
        ANY_CC,
        [1307.4, 1307.4, 653.7, 163.4, 2614.9, 2614.9],
        5300.0,
        MI300X
    ),
    chip!(
        "AMD Instinct MI300X",
        &["AMD"],
        &["MI2", "MI3"],
        (180, 210),
        304,
        (9, 4),
        [1307.4, 1307.4, 653.7, 163.4, 2614.9, 2614.9],
        5300.0,
        MI300X
    ),
];

impl Chip {
    pub fn matches(&self, g: &GpuProps) -> bool {
        let name = g.name.to_ascii_uppercase();
        let gb = g.mem_bytes / 1_000_000_000;
        self.all.iter().all(|s| name.contains(s))
            && !self.none.iter().any(|s| name.contains(s))
            && (self.mem_gb == (0, 0) || (self.mem_gb.0..=self.mem_gb.1).contains(&gb))
            && (self.sms == 0 || self.sms == g.sms)
            && (self.cc == ANY_CC || self.cc == g.cc)
    }

    /// (dtype, dense TFLOPS) of every dtype the row lists.
    pub fn peaks(&self) -> Vec<(&'static str, f64)> {
        [
            ("fp16", self.fp16),
            ("bf16", self.bf16),
            ("tf32", self.tf32),
            ("fp32", self.fp32),
            ("fp8", self.fp8),
            ("int8", self.int8),
        ]
        .into_iter()
        .filter(|p| p.1 > 0.0)
        .collect()
    }
}

/// The row of a GPU, if any.
pub fn lookup(g: &GpuProps) -> Option<&'static Chip> {
    CHIPS.iter().find(|c| c.matches(g))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(name: &str, gb: u64, sms: u64, cc: (i64, i64)) -> GpuProps {
        GpuProps {
            name: name.into(),
            mem_bytes: gb * 1_000_000_000,
            sms,
            cc,
        }
    }

    #[test]
    fn the_shared_traces_devices() {
        // deviceProperties of torch-traces/: trace_diff/control (42505273344 B),
        // negative_queue_length_values_check (84990623744 B), amd_trace (68702699520 B, 104 CUs).
        let row = |g: &GpuProps| lookup(g).map(|c| c.row);
        assert_eq!(
            row(&gpu("NVIDIA A100-PG509-200", 42, 108, (8, 0))),
            Some("NVIDIA A100 SXM 40GB")
        );
        assert_eq!(
            row(&gpu("NVIDIA A100-SXM4-80GB", 84, 108, (8, 0))),
            Some("NVIDIA A100 SXM 80GB")
        );
        assert_eq!(
            row(&gpu("AMD Radeon Graphics", 68, 104, (9, 0))),
            Some("AMD Instinct MI250 (one GCD)")
        );
        assert_eq!(
            row(&gpu("Tesla V100-SXM2-16GB", 16, 80, (7, 0))),
            Some("NVIDIA V100 SXM2")
        );
        assert_eq!(
            row(&gpu("NVIDIA H100 80GB HBM3", 85, 132, (9, 0))),
            Some("NVIDIA H100 SXM")
        );
        assert_eq!(
            row(&gpu("NVIDIA H100 PCIe", 85, 114, (9, 0))),
            Some("NVIDIA H100 PCIe")
        );
        assert_eq!(row(&gpu("Quadro GP100", 17, 56, (6, 0))), None);
        assert_eq!(row(&gpu("AMD Radeon Graphics", 17, 60, (10, 3))), None);
    }
}
