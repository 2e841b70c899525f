//! `closed_set!`: an enum whose variants are written in reports as fixed names (a verdict, a
//! status, a source). The JSON name of each variant is given once beside it; `as_str` and
//! `Display` return the same name, so renderers and the JSON can never disagree, and a typo in
//! code that sets or matches a value is a compile error instead of a silent new value.

/// Declares `enum Name { Variant = "json name", ... }` with `Serialize` (the given names),
/// `as_str`, `Display` and `ALL`.
macro_rules! closed_set {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        $vis enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            /// Every variant, in declaration order.
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The name written in reports.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        /// Compares with a report name (tests read reports by name).
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use closed_set;

#[cfg(test)]
mod tests {
    closed_set! {
        /// A test set.
        enum Sample {
            First = "first",
            /// Documented.
            SecondOne = "second_one",
        }
    }

    #[test]
    fn json_name_equals_display_and_as_str() {
        for &v in Sample::ALL {
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(json, format!("\"{}\"", v.as_str()));
            assert_eq!(v.to_string(), v.as_str());
        }
        assert_eq!(Sample::SecondOne.as_str(), "second_one");
        assert_eq!(Sample::First, "first");
        assert_eq!(Sample::ALL.len(), 2);
    }
}
