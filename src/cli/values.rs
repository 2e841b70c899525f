//! The command line's names for the library's closed sets (`--format`, `--phase`, `--export`):
//! clap stays in `cli/`, the enums stay plain in the layers that own them; and the value parsers
//! several commands share (`--only`, sizes).

use crate::analysis::phases::Phase;
use crate::collect::verify::Export as CollectExport;
use crate::render::Format;
use crate::render::query::QueryFormat;
use crate::synth::Export as SynthExport;
use clap::builder::PossibleValue;

/// `impl clap::ValueEnum` for an enum: each variant with its name on the command line.
macro_rules! value_enum {
    ($ty:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl clap::ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                &[$($ty::$variant),+]
            }
            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(match self {
                    $($ty::$variant => PossibleValue::new($name)),+
                })
            }
        }
    };
}

/// `4G`, `512M`, `100K`, `12345` → bytes (binary units: `G` is GiB).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s, crate::units::SizeBase::Binary)
        .map_err(|why| format!("bad size: {why} (use e.g. 4G, 512M)"))
}

value_enum!(Format { Table => "table", Json => "json", Md => "md" });
value_enum!(QueryFormat { Table => "table", Json => "json", Csv => "csv" });
value_enum!(Phase { Prefill => "prefill", Decode => "decode" });
value_enum!(CollectExport { Db => "db", Text => "text", Both => "both" });
value_enum!(SynthExport { Json => "json", Db => "db", Both => "both" });

/// `impl clap::ValueEnum` for a `closed_set!` enum: its report names are its command-line names.
macro_rules! closed_value_enum {
    ($ty:ty) => {
        impl clap::ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                <$ty>::ALL
            }
            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(PossibleValue::new(self.as_str()))
            }
        }
    };
}

closed_value_enum!(crate::report::detail::Detail);

/// `--only`'s values: every analysis of the registry with its help line.
pub(crate) fn only_parser() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        crate::registry::REGISTRY
            .iter()
            .map(|a| PossibleValue::new(a.name).help(a.help)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn names_match_the_serialized_names() {
        // The names people type are the names the JSON writes (serde snake_case).
        for p in Phase::value_variants() {
            assert_eq!(
                p.to_possible_value().unwrap().get_name(),
                serde_json::to_value(p).unwrap().as_str().unwrap()
            );
        }
        for e in CollectExport::value_variants() {
            assert_eq!(
                e.to_possible_value().unwrap().get_name(),
                serde_json::to_value(e).unwrap().as_str().unwrap()
            );
        }
        assert_eq!(Format::from_str("md", false), Ok(Format::Md));
        assert!(Phase::from_str("warmup", false).is_err());
    }
}
