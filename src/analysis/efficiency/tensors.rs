//! Tensor descriptions as the captures write them, parsed once per distinct string: shapes,
//! dtypes and formats of Ascend kernel details (`"32,1,224,224,8;121,4,16,8;64"`, `FLOAT;INT8`,
//! `NC1HWC0;FRACTAL_Z`), Kineto `Input Dims` / `Input type` / `Concrete Inputs` (JSON arrays)
//! and torch_npu's `;`-separated `Input Dims`. Dims that are not non-negative integers make the
//! whole list unreadable (None), never a guess.

/// An element type, with what the efficiency model needs of it: its size and the peak it is
/// charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    F64,
    F32,
    F16,
    Bf16,
    F8,
    I64,
    I32,
    I16,
    I8,
    U8,
    I4,
    Bool,
    C64,
}

impl Dtype {
    /// Ascend (`FLOAT16`, `DT_BF16`, `INT8`, `FLOAT8_E4M3FN`, `HIFLOAT8`) or PyTorch (`float`,
    /// `c10::Half`, `c10::BFloat16`, `c10::Float8_e4m3fn`, `signed char`, `long int`) spelling.
    pub fn parse(s: &str) -> Option<Dtype> {
        let s = s.trim();
        let u = s.trim_start_matches("DT_").to_ascii_uppercase();
        Some(match u.as_str() {
            "FLOAT" | "FLOAT32" => Dtype::F32,
            "FLOAT16" | "HALF" | "C10::HALF" => Dtype::F16,
            "BF16" | "BFLOAT16" | "C10::BFLOAT16" => Dtype::Bf16,
            "DOUBLE" | "FLOAT64" => Dtype::F64,
            "INT8" | "SIGNED CHAR" | "QINT8" => Dtype::I8,
            "UINT8" | "UNSIGNED CHAR" | "QUINT8" => Dtype::U8,
            "INT16" | "SHORT INT" | "UINT16" => Dtype::I16,
            "INT32" | "INT" | "UINT32" => Dtype::I32,
            "INT64" | "LONG INT" | "LONG" | "UINT64" => Dtype::I64,
            "INT4" => Dtype::I4,
            "BOOL" => Dtype::Bool,
            "COMPLEX64" | "C10::COMPLEX<FLOAT>" => Dtype::C64,
            _ if u.contains("FLOAT8") || u == "HIFLOAT8" => Dtype::F8,
            _ => return None,
        })
    }

    /// Bits per element.
    pub fn bits(self) -> u64 {
        match self {
            Dtype::F64 | Dtype::I64 | Dtype::C64 => 64,
            Dtype::F32 | Dtype::I32 => 32,
            Dtype::F16 | Dtype::Bf16 | Dtype::I16 => 16,
            Dtype::F8 | Dtype::I8 | Dtype::U8 | Dtype::Bool => 8,
            Dtype::I4 => 4,
        }
    }

    /// The name a peak is looked up by (`fp16`, `bf16`, `fp32`, `fp8`, `int8`, `int4`, `fp64`).
    pub fn peak_name(self) -> &'static str {
        match self {
            Dtype::F64 => "fp64",
            Dtype::F32 => "fp32",
            Dtype::F16 => "fp16",
            Dtype::Bf16 => "bf16",
            Dtype::F8 => "fp8",
            Dtype::I8 | Dtype::U8 => "int8",
            Dtype::I4 => "int4",
            Dtype::I64 => "int64",
            Dtype::I32 => "int32",
            Dtype::I16 => "int16",
            Dtype::Bool => "bool",
            Dtype::C64 => "complex64",
        }
    }
}

/// One tensor: its dims (empty for a scalar) and, when written, its dtype and format.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tensor {
    pub dims: Vec<u64>,
    pub dtype: Option<Dtype>,
    /// Ascend storage format without its `:n` suffix (`NC1HWC0`, `FRACTAL_Z`, `FRACTAL_NZ`,
    /// `ND`, `NCHW`); empty when not written.
    pub format: String,
    /// False for an absent optional input (an empty entry whose dtype is not written either).
    pub present: bool,
}

impl Tensor {
    pub fn numel(&self) -> u64 {
        self.dims.iter().product()
    }
    /// Bytes of the tensor (0 when its dtype is unknown or it is absent).
    pub fn bytes(&self) -> u64 {
        match self.dtype {
            Some(d) if self.present => (self.numel() * d.bits()).div_ceil(8),
            _ => 0,
        }
    }
    pub fn rank(&self) -> usize {
        self.dims.len()
    }
    /// Dim `i` from the end (1 = last).
    pub fn back(&self, i: usize) -> u64 {
        self.dims[self.dims.len() - i]
    }
}

/// Splits an Ascend list (`;` between tensors; surrounding quotes and blanks trimmed). `N/A` or
/// an empty cell is no list; a quoted empty string (`""`) is one scalar.
fn ascend_items(s: &str) -> Option<Vec<&str>> {
    let s = s.trim();
    if s.is_empty() || s == "N/A" {
        return None;
    }
    Some(
        s.trim_matches('"')
            .trim()
            .split(';')
            .map(str::trim)
            .collect(),
    )
}

/// Dims `a,b,c` (empty: a scalar).
fn dims(s: &str) -> Option<Vec<u64>> {
    let s = s.trim();
    if s.is_empty() {
        return Some(Vec::new());
    }
    s.split(',').map(|d| d.trim().parse::<u64>().ok()).collect()
}

/// Ascend kernel details (shapes, dtypes, formats of one side, inputs or outputs) as tensors;
/// None when the shapes are absent or unreadable.
pub fn ascend(shapes: &str, dtypes: &str, formats: &str) -> Option<Vec<Tensor>> {
    let sh = ascend_items(shapes)?;
    let dt = ascend_items(dtypes).unwrap_or_default();
    let fm = ascend_items(formats).unwrap_or_default();
    sh.iter()
        .enumerate()
        .map(|(k, s)| {
            let dtype = dt.get(k).and_then(|d| Dtype::parse(d));
            let format = fm
                .get(k)
                .map(|f| {
                    f.split(':')
                        .next()
                        .unwrap_or("")
                        .trim_start_matches("FORMAT_")
                })
                .unwrap_or("")
                .to_string();
            Some(Tensor {
                dims: dims(s)?,
                dtype,
                format,
                present: !s.is_empty() || dtype.is_some(),
            })
        })
        .collect()
}

/// One recorded op argument (Kineto / torch_npu `Input Dims` entry).
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A tensor's dims (empty: a scalar or None, per `Input type`).
    Dims(Vec<u64>),
    /// A tensor list (`TensorList`): each tensor's dims.
    List(Vec<Vec<u64>>),
}

/// A recorded op's arguments: dims with their `Input type`, and `Concrete Inputs` values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpInputs {
    pub args: Vec<Arg>,
    /// `Input type` per argument (`float`, `c10::Half`, `Scalar`, `None`, `TensorList`).
    pub types: Vec<String>,
    /// `Concrete Inputs` per argument (`"[1, 1]"`, `"False"`, `""`); empty when not recorded.
    pub concrete: Vec<String>,
}

impl OpInputs {
    /// Argument `i` as a tensor (dims and dtype) when it is one.
    pub fn tensor(&self, i: usize) -> Option<Tensor> {
        let Arg::Dims(d) = self.args.get(i)? else {
            return None;
        };
        let dtype = self.types.get(i).and_then(|t| Dtype::parse(t));
        let ty = self.types.get(i).map_or("", |t| t.as_str());
        if dtype.is_none() && (ty == "Scalar" || ty == "None" || ty.is_empty() && d.is_empty()) {
            return None;
        }
        Some(Tensor {
            dims: d.clone(),
            dtype,
            format: String::new(),
            present: true,
        })
    }

    /// `Concrete Inputs` value `i` (trimmed), when recorded and non-empty.
    pub fn concrete(&self, i: usize) -> Option<&str> {
        self.concrete
            .get(i)
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
    }

    /// `Concrete Inputs` value `i` as a bool (`True` / `False`).
    pub fn flag(&self, i: usize) -> Option<bool> {
        match self.concrete(i)? {
            "True" | "true" | "1" => Some(true),
            "False" | "false" | "0" => Some(false),
            _ => None,
        }
    }

    /// `Concrete Inputs` value `i` as integers (`[1, 1]` or `2`).
    pub fn ints(&self, i: usize) -> Option<Vec<i64>> {
        let v = self.concrete(i)?.trim_matches(|c| c == '[' || c == ']');
        v.split(',').map(|x| x.trim().parse().ok()).collect()
    }
}

/// Parses `Input Dims`, `Input type` and `Concrete Inputs` as written: JSON arrays (Kineto) or
/// `;`-separated strings (torch_npu trace_view.json). None when the dims cannot be read.
pub fn op_inputs(dims_text: &str, types_text: &str, concrete_text: &str) -> Option<OpInputs> {
    let args = if dims_text.trim_start().starts_with('[') {
        let v: serde_json::Value = serde_json::from_str(dims_text).ok()?;
        v.as_array()?
            .iter()
            .map(json_arg)
            .collect::<Option<Vec<_>>>()?
    } else {
        dims_text
            .split(';')
            .map(|s| dims(s).map(Arg::Dims))
            .collect::<Option<Vec<_>>>()?
    };
    Some(OpInputs {
        args,
        types: strings(types_text),
        concrete: strings(concrete_text),
    })
}

fn json_arg(v: &serde_json::Value) -> Option<Arg> {
    let a = v.as_array()?;
    if a.iter().all(|x| x.is_array()) && !a.is_empty() {
        return Some(Arg::List(
            a.iter()
                .map(|t| t.as_array()?.iter().map(|d| d.as_u64()).collect())
                .collect::<Option<Vec<_>>>()?,
        ));
    }
    Some(Arg::Dims(
        a.iter().map(|d| d.as_u64()).collect::<Option<Vec<_>>>()?,
    ))
}

/// A JSON array of strings, or a `;`-separated list.
fn strings(text: &str) -> Vec<String> {
    let t = text.trim();
    if t.is_empty() {
        return Vec::new();
    }
    if t.starts_with('[')
        && let Ok(v) = serde_json::from_str::<Vec<serde_json::Value>>(t)
    {
        return v
            .into_iter()
            .map(|x| match x {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            })
            .collect();
    }
    t.split(';').map(|s| s.trim().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascend_conv_inputs_as_the_db_writes_them() {
        // ascend-pt/db/level1 rank 0, Conv2D1 (COMPUTE_TASK_INFO via STRING_IDS, quotes included).
        let t = ascend(
            "\"32,1,224,224,8;121,4,16,8;64\"",
            "FLOAT;FLOAT;FLOAT",
            "NC1HWC0;FRACTAL_Z;NCHW",
        )
        .unwrap();
        assert_eq!(t[0].dims, vec![32, 1, 224, 224, 8]);
        assert_eq!(t[1].format, "FRACTAL_Z");
        assert_eq!(t[1].numel(), 121 * 4 * 16 * 8);
        assert_eq!(t[2].bytes(), 64 * 4);
        // `NC1HWC0:1`, `FORMAT_ND`: suffix and prefix dropped; an empty entry is a scalar.
        let t = ascend("\"1000,4096;\"", "FLOAT;FLOAT", "NC1HWC0:1;FORMAT_ND").unwrap();
        assert_eq!(
            (t[0].format.as_str(), t[1].format.as_str()),
            ("NC1HWC0", "ND")
        );
        assert_eq!((t[1].dims.len(), t[1].bytes()), (0, 4));
        assert!(ascend("N/A", "N/A", "N/A").is_none());
        assert!(ascend("\"3,-1\"", "FLOAT", "ND").is_none());
    }

    #[test]
    fn kineto_inputs_as_json_arrays() {
        // torch-traces/trace_diff/control/control.json.gz, the first aten::addmm.
        let o = op_inputs(
            "[[512], [1024, 1705], [1705, 512], [], []]",
            "[\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]",
            "",
        )
        .unwrap();
        assert_eq!(o.tensor(1).unwrap().dims, vec![1024, 1705]);
        assert_eq!(o.tensor(1).unwrap().dtype, Some(Dtype::F32));
        assert!(o.tensor(3).is_none());
        let o = op_inputs(
            "[[2, 3], [[4, 5], [6]]]",
            "[\"c10::BFloat16\", \"TensorList\"]",
            "[\"\", \"[1, 1]\"]",
        )
        .unwrap();
        assert_eq!(o.args[1], Arg::List(vec![vec![4, 5], vec![6]]));
        assert_eq!(o.ints(1), Some(vec![1, 1]));
        assert_eq!(o.tensor(0).unwrap().dtype, Some(Dtype::Bf16));
    }

    #[test]
    fn torch_npu_inputs_as_strings() {
        // ascend-pt/text/level1 trace_view.json, aten::to: `Input Dims` "0;\r\n;\r\n..."
        let o = op_inputs("0;\r\n;\r\n", "float;\r\nNone;\r\nScalar", "").unwrap();
        assert_eq!(o.args[0], Arg::Dims(vec![0]));
        assert_eq!(o.types, vec!["float", "None", "Scalar"]);
        assert!(o.tensor(1).is_none());
    }

    #[test]
    fn dtype_spellings() {
        for (s, d) in [
            ("FLOAT16", Dtype::F16),
            ("DT_BF16", Dtype::Bf16),
            ("c10::Half", Dtype::F16),
            ("c10::Float8_e4m3fn", Dtype::F8),
            ("HIFLOAT8", Dtype::F8),
            ("long int", Dtype::I64),
            ("float", Dtype::F32),
        ] {
            assert_eq!(Dtype::parse(s), Some(d), "{s}");
        }
        assert_eq!(Dtype::parse("Scalar"), None);
    }
}
