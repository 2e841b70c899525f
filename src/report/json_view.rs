//! Reading JSON into typed views, bounded and with every bad value's place named: the machinery
//! `diff_input` declares the parts of a report that `diff` reads with ([`view!`]). Each field
//! is read through [`Field`]: `null` or a missing field reads as the type's default, a value of
//! another type is an error naming its path (`analyses.cross_rank.cohorts[0].ranks[3]
//! .samples.step_ns[17]`), unknown fields are skipped without being kept. Every list entry and
//! string byte kept is charged to a memory budget ([`read_root`]), so a report of any size on
//! disk costs at most that budget to read, streamed from a reader (no tree of the whole file).

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;

/// One step of the path to the value being read.
enum Seg {
    Field(&'static str),
    Index(usize),
}

/// The read in progress on this thread: where it is, and the memory it has kept.
struct State {
    path: Vec<Seg>,
    spent: usize,
    budget: usize,
}

thread_local! {
    static STATE: RefCell<State> = const {
        RefCell::new(State {
            path: Vec::new(),
            spent: 0,
            budget: usize::MAX,
        })
    };
}

/// The path of the value being read (`report` at the top).
pub fn path() -> String {
    STATE.with(|s| {
        let s = s.borrow();
        let mut out = String::new();
        for seg in &s.path {
            match seg {
                Seg::Field(f) if out.is_empty() => out.push_str(f),
                Seg::Field(f) => {
                    out.push('.');
                    out.push_str(f);
                }
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        if out.is_empty() { "report".into() } else { out }
    })
}

fn push(seg: Seg) {
    STATE.with(|s| s.borrow_mut().path.push(seg));
}

fn pop() {
    STATE.with(|s| {
        s.borrow_mut().path.pop();
    });
}

/// An error about the value being read: its path, then `what`.
pub fn invalid<E: de::Error>(what: impl fmt::Display) -> E {
    E::custom(format!("{}: {what}", path()))
}

/// Charges `bytes` of kept memory to the read; an error naming the budget once it is spent.
pub fn charge<E: de::Error>(bytes: usize) -> Result<(), E> {
    let over = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.spent = s.spent.saturating_add(bytes);
        (s.spent > s.budget).then_some(s.budget)
    });
    match over {
        Some(budget) => Err(invalid(format_args!(
            "reading the report would keep more than {budget} bytes of entries and text, the most a report is read with (none that profscope writes holds that much: save it with `--detail capped`, the default)"
        ))),
        None => Ok(()),
    }
}

/// Reads a `T` from `d` as a fresh read: an empty path and `budget` bytes of memory to keep.
pub fn read_root<'de, T: Field, D: Deserializer<'de>>(d: D, budget: usize) -> Result<T, D::Error> {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.path.clear();
        s.spent = 0;
        s.budget = budget;
    });
    let out = T::read(d);
    STATE.with(|s| s.borrow_mut().path.clear());
    out
}

/// A type a view is made of: read from any JSON value, `null` handled by the caller.
pub trait Field: Sized + Default {
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}

/// What a visitor expected, with the path (serde's type errors print it).
pub fn expecting(f: &mut fmt::Formatter<'_>, what: &str) -> fmt::Result {
    write!(f, "{what} at {}", path())
}

/// Reads `null` as `T`'s default, anything else as a `T`.
struct Nullable<T>(PhantomData<T>);

impl<'de, T: Field> Visitor<'de> for Nullable<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        expecting(f, "a value")
    }
    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        T::read(d)
    }
}

/// Reads `T` (or `null`) at `seg` of the path.
fn at<'de, T: Field, D: Deserializer<'de>>(seg: Seg, d: D) -> Result<T, D::Error> {
    push(seg);
    let v = d.deserialize_option(Nullable::<T>(PhantomData))?;
    pop();
    Ok(v)
}

/// The value of field `name` of an object.
pub struct Named<T>(pub &'static str, PhantomData<T>);

impl<T> Named<T> {
    pub fn new(name: &'static str) -> Self {
        Named(name, PhantomData)
    }
}

impl<'de, T: Field> DeserializeSeed<'de> for Named<T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        at(Seg::Field(self.0), d)
    }
}

/// Entry `i` of a list.
struct Entry<T>(usize, PhantomData<T>);

impl<'de, T: Field> DeserializeSeed<'de> for Entry<T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        at(Seg::Index(self.0), d)
    }
}

/// A member name matched against a view's fields (None: a field the view does not read).
pub struct Key(pub &'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Option<&'static str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Option<&'static str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        expecting(f, "a member name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.0.iter().find(|f| **f == v).copied())
    }
}

/// Reads the entries of a list of `T`, each charged; more than `max` is an error saying `why`
/// no more can be.
fn each_entry<'de, T: Field, A: SeqAccess<'de>>(
    mut s: A,
    max: usize,
    why: &str,
) -> Result<Vec<T>, A::Error> {
    let mut out = Vec::new();
    while let Some(x) = s.next_element_seed(Entry::<T>(out.len(), PhantomData))? {
        if out.len() == max {
            return Err(invalid(format_args!("more than {max} entries ({why})")));
        }
        charge::<A::Error>(std::mem::size_of::<T>())?;
        out.push(x);
    }
    Ok(out)
}

/// A list of at most `max` entries (`why` says why no more can be).
struct ListV<'w, T> {
    max: usize,
    why: &'w str,
    of: PhantomData<T>,
}

impl<'de, T: Field> Visitor<'de> for ListV<'_, T> {
    type Value = Vec<T>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        expecting(f, "a list")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, s: A) -> Result<Vec<T>, A::Error> {
        each_entry(s, self.max, self.why)
    }
}

/// Reads a list of at most `max` entries of `T` (an error saying `why` past that).
pub fn read_list<'de, T: Field, D: Deserializer<'de>>(
    d: D,
    max: usize,
    why: &str,
) -> Result<Vec<T>, D::Error> {
    d.deserialize_seq(ListV {
        max,
        why,
        of: PhantomData,
    })
}

impl<T: Field> Field for Vec<T> {
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_list(d, usize::MAX, "")
    }
}

impl<T: Field> Field for Option<T> {
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::read(d).map(Some)
    }
}

struct TextV;

impl<'de> Visitor<'de> for TextV {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        expecting(f, "a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        charge::<E>(v.len())?;
        Ok(v.to_string())
    }
}

impl Field for String {
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(TextV)
    }
}

/// A JSON number as f64; `null` (or a missing field) reads as 0. Anything else, and a number no
/// 64-bit integer holds (what profscope writes counts and nanoseconds in), is an error.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Num(pub f64);

/// The largest magnitude a number of a report may have: 2^64 (u64 counts, i64 nanoseconds).
const NUM_LIMIT: f64 = 18_446_744_073_709_551_616.0;

struct NumV;

impl<'de> Visitor<'de> for NumV {
    type Value = Num;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        expecting(f, "a number")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
        Ok(Num(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
        Ok(Num(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
        if v.is_finite() && v.abs() <= NUM_LIMIT {
            Ok(Num(v))
        } else {
            Err(invalid(format_args!(
                "{v:e} is past the 64-bit range profscope writes numbers in"
            )))
        }
    }
}

impl Field for Num {
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumV)
    }
}

/// Declares view structs, each read through [`Field`] (every field defaults when missing or
/// null; members the view does not name are skipped).
macro_rules! view {
    ($( $(#[$meta:meta])* $name:ident { $( $field:ident : $ty:ty ),* $(,)? } )*) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Clone, Default)]
            pub struct $name {
                $( pub $field: $ty, )*
            }

            impl $crate::report::json_view::Field for $name {
                fn read<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    struct V;
                    impl<'de> serde::de::Visitor<'de> for V {
                        type Value = $name;
                        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                            $crate::report::json_view::expecting(f, "an object")
                        }
                        fn visit_map<A: serde::de::MapAccess<'de>>(
                            self,
                            mut m: A,
                        ) -> Result<$name, A::Error> {
                            let mut out = $name::default();
                            let names = &[$(stringify!($field)),*];
                            while let Some(k) =
                                m.next_key_seed($crate::report::json_view::Key(names))?
                            {
                                match k {
                                    $(Some(stringify!($field)) => {
                                        out.$field = m.next_value_seed(
                                            $crate::report::json_view::Named::new(stringify!($field)),
                                        )?;
                                    })*
                                    _ => {
                                        m.next_value::<serde::de::IgnoredAny>()?;
                                    }
                                }
                            }
                            Ok(out)
                        }
                    }
                    d.deserialize_map(V)
                }
            }
        )*
    };
}
pub(crate) use view;

/// Reads the members of a map one by one with `f(name, map)`: for views with hand-written
/// fields (the per-step samples), each member's value read through [`Named`] by `f`.
pub fn members<'de, A: MapAccess<'de>>(
    mut m: A,
    names: &'static [&'static str],
    mut f: impl FnMut(&'static str, &mut A) -> Result<(), A::Error>,
) -> Result<(), A::Error> {
    while let Some(k) = m.next_key_seed(Key(names))? {
        match k {
            Some(name) => f(name, &mut m)?,
            None => {
                m.next_value::<de::IgnoredAny>()?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    view! {
        Outer { a: Vec<Inner>, b: Num, c: Option<String> }
        Inner { x: Num, s: String }
    }

    fn read(text: &str, budget: usize) -> Result<Outer, String> {
        let mut de = serde_json::Deserializer::from_str(text);
        read_root::<Outer, _>(&mut de, budget).map_err(|e| e.to_string())
    }

    #[test]
    fn nulls_default_unknown_members_skipped_and_errors_name_the_path() {
        let o = read(
            r#"{"a": [{"x": 1}, null, {"s": "t", "y": [1, {"z": 2}]}], "b": null, "zz": 3}"#,
            1 << 20,
        )
        .unwrap();
        assert_eq!(o.a.len(), 3);
        assert_eq!((o.a[0].x, o.a[2].s.as_str()), (Num(1.0), "t"));
        assert_eq!((o.b, o.c), (Num(0.0), None));
        let e = read(r#"{"a": [{"x": 1}, {"x": "7"}]}"#, 1 << 20).unwrap_err();
        assert!(
            e.starts_with("invalid type: string \"7\", expected a number at a[1].x"),
            "{e}"
        );
        let e = read(r#"{"a": [{"x": 1e30}]}"#, 1 << 20).unwrap_err();
        assert!(
            e.starts_with("a[0].x: 1e30 is past the 64-bit range"),
            "{e}"
        );
        let e = read(r#"{"a": 7}"#, 1 << 20).unwrap_err();
        assert!(e.contains("expected a list at a"), "{e}");
    }

    #[test]
    fn kept_memory_is_bounded() {
        let many = format!("{{\"a\": [{}{{}}]}}", "{},".repeat(10_000));
        let e = read(&many, 100_000).unwrap_err();
        assert!(e.contains("more than 100000 bytes"), "{e}");
        assert_eq!(read(&many, 10 << 20).unwrap().a.len(), 10_001);
        let long = format!("{{\"c\": \"{}\"}}", "x".repeat(5000));
        assert!(read(&long, 4000).is_err());
        assert_eq!(read(&long, 6000).unwrap().c.unwrap().len(), 5000);
    }
}
