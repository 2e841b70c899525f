//! A JSON result bounded to a byte budget: the value cut into atoms (an object's scalar fields of
//! one tier together, each list entry on its own; tiers from `tiers.rs`), filled by importance
//! ([`super::fill`]) and written back with each object's fields in priority order (the verdict
//! and the headline first in the text, not alphabetically), wrapped as
//! `{schema_version, tool, truncated, full_bytes, result, cut}` (docs/mcp.md). `cut` says what
//! went and how to get it.

use super::tiers::{self, Seg};
use super::{Atom, Container, Plan, ROOT, Selection, SortKey, Tier, TooSmall, fit};
use serde_json::Value;

/// A bounded result: the wrapper's JSON text (fields in priority order) and what it says.
#[derive(Debug, Clone)]
pub struct Bounded {
    pub text: String,
    pub truncated: bool,
    /// Size of the whole result's JSON, bytes.
    pub full_bytes: usize,
}

/// What a container's member or entry is in the plan.
#[derive(Debug, Clone, Copy)]
enum Member {
    Atom(u32),
    Child(u32),
}

/// A list's shape for the notes of what was cut.
#[derive(Debug)]
struct ListInfo {
    container: u32,
    len: u32,
    /// Index into `Walk::patterns`: the list's path with `[*]` for indices below its area.
    pattern: u32,
}

/// The value cut into atoms, with what the writer and the notes need.
struct Walk<'v> {
    tool: &'v str,
    names: Vec<&'static str>,
    plan: Plan,
    /// Per container, its members (object, in the value's order) or entries (array).
    members: Vec<Vec<Member>>,
    /// Per container, the smallest key below it (the order of an object's fields).
    min_key: Vec<SortKey>,
    /// Per container and per atom, the area it belongs to (index into `areas`), for the notes.
    area_of: Vec<u32>,
    atom_area: Vec<u32>,
    areas: Vec<String>,
    /// Per area, its container when it is one.
    area_root: Vec<Option<u32>>,
    patterns: Vec<String>,
    lists: Vec<ListInfo>,
    path: Vec<Seg<'v>>,
    seq: u32,
}

/// Where an atom sits: the list level, the device entry, whether inside a list.
#[derive(Clone, Copy, Default)]
struct Ctx {
    level: u32,
    device: u32,
    in_list: bool,
    area: u32,
}

fn json_len(v: &Value) -> usize {
    serde_json::to_string(v).map_or(0, |s| s.len())
}

fn key_len(k: &str) -> usize {
    json_len(&Value::String(k.to_string())) + 1
}

/// A value written whole: scalars, empty containers, and arrays of scalars inside arrays
/// (tuples such as `[rank, ns]`).
fn whole(v: &Value, in_array: bool) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty() || (in_array && a.iter().all(|x| whole(x, false))),
        _ => true,
    }
}

const MAX_KEY: SortKey = SortKey {
    tier: Tier::List,
    level: u32::MAX,
    device: u32::MAX,
    group: u32::MAX,
    seq: u32::MAX,
};

impl<'v> Walk<'v> {
    fn new(tool: &'v str) -> Self {
        Walk {
            tool,
            names: crate::registry::names(),
            plan: Plan::default(),
            members: Vec::new(),
            min_key: Vec::new(),
            area_of: Vec::new(),
            atom_area: Vec::new(),
            areas: Vec::new(),
            area_root: Vec::new(),
            patterns: Vec::new(),
            lists: Vec::new(),
            path: Vec::new(),
            seq: 0,
        }
    }

    fn container(
        &mut self,
        parent: u32,
        overhead: usize,
        item_of: Option<(u32, u32)>,
        area: u32,
    ) -> u32 {
        let id = self.plan.containers.len() as u32;
        self.plan.containers.push(Container {
            parent,
            overhead: overhead as u32,
            item_of,
        });
        self.members.push(Vec::new());
        self.min_key.push(MAX_KEY);
        self.area_of.push(area);
        id
    }

    fn key(&mut self, ctx: Ctx) -> SortKey {
        let tier = tiers::named(self.tool, &self.path).unwrap_or(if ctx.in_list {
            Tier::List
        } else {
            Tier::Summary
        });
        self.seq += 1;
        SortKey {
            tier,
            level: if tier == Tier::List { ctx.level } else { 0 },
            device: ctx.device,
            group: tiers::group(&self.names, self.tool, &self.path),
            seq: self.seq,
        }
    }

    fn atom(
        &mut self,
        (key, area): (SortKey, u32),
        bytes: usize,
        parent: u32,
        item_of: Option<(u32, u32)>,
    ) -> u32 {
        let id = self.plan.atoms.len() as u32;
        self.atom_area.push(area);
        self.plan.atoms.push(Atom {
            key,
            bytes: bytes as u32,
            parent,
            item_of,
        });
        id
    }

    /// The area (an analysis, or a top-level field) of the current path, registered once.
    fn area(&mut self) -> u32 {
        let deep = matches!(self.path.first(), Some(Seg::Key("analyses" | "run")));
        let n = if deep { 2 } else { 1 };
        let name = pattern(&self.path[..self.path.len().min(n)]);
        if self.path.len() < n {
            // `analyses` itself: its fields are areas of their own.
            return 0;
        }
        match self.areas.iter().position(|a| *a == name) {
            Some(i) => i as u32,
            None => {
                self.areas.push(name);
                self.area_root.push(None);
                (self.areas.len() - 1) as u32
            }
        }
    }

    fn object(&mut self, m: &'v serde_json::Map<String, Value>, c: u32, ctx: Ctx) {
        // One atom per tier of this object's scalar fields; above the areas (the report's own
        // fields, the analyses), one per field.
        let mut by_tier: Vec<(Tier, u32)> = Vec::new();
        let top = self.path.len() < 2;
        for (k, x) in m {
            self.path.push(Seg::Key(k));
            let ctx = if top {
                Ctx {
                    area: self.area(),
                    ..ctx
                }
            } else {
                ctx
            };
            if whole(x, false) {
                let key = self.key(ctx);
                let bytes = key_len(k) + json_len(x) + 1;
                let id = match by_tier.iter().find(|t| t.0 == key.tier && !top) {
                    Some(&(_, id)) => {
                        self.plan.atoms[id as usize].bytes += bytes as u32;
                        id
                    }
                    None => {
                        let id = self.atom((key, ctx.area), bytes, c, None);
                        by_tier.push((key.tier, id));
                        id
                    }
                };
                self.members[c as usize].push(Member::Atom(id));
            } else {
                let child = self.container(c, key_len(k) + 3, None, ctx.area);
                if top {
                    self.area_root[ctx.area as usize].get_or_insert(child);
                }
                self.members[c as usize].push(Member::Child(child));
                self.value(x, child, ctx);
            }
            self.path.pop();
        }
    }

    fn array(&mut self, a: &'v [Value], c: u32, ctx: Ctx) {
        let per_device = tiers::per_device(self.tool, &self.path);
        let pattern = self.pattern_id();
        self.lists.push(ListInfo {
            container: c,
            len: a.len() as u32,
            pattern,
        });
        for (i, x) in a.iter().enumerate() {
            self.path.push(Seg::Index(i));
            let ctx = if per_device {
                Ctx {
                    device: i as u32,
                    ..ctx
                }
            } else {
                Ctx {
                    level: ctx.level.max(i as u32),
                    in_list: true,
                    ..ctx
                }
            };
            let entry = Some((c, i as u32));
            if whole(x, true) {
                let key = self.key(ctx);
                let id = self.atom((key, ctx.area), json_len(x) + 1, c, entry);
                self.members[c as usize].push(Member::Atom(id));
            } else {
                let child = self.container(c, 3, entry, ctx.area);
                self.members[c as usize].push(Member::Child(child));
                self.value(x, child, ctx);
            }
            self.path.pop();
        }
    }

    fn value(&mut self, v: &'v Value, c: u32, ctx: Ctx) {
        match v {
            Value::Object(m) => self.object(m, c, ctx),
            Value::Array(a) => self.array(a, c, ctx),
            _ => {}
        }
    }

    fn pattern_id(&mut self) -> u32 {
        let p = pattern(&self.path);
        match self.patterns.iter().position(|x| *x == p) {
            Some(i) => i as u32,
            None => {
                self.patterns.push(p);
                (self.patterns.len() - 1) as u32
            }
        }
    }

    /// Each container's smallest key below it.
    fn finish(&mut self) {
        for a in &self.plan.atoms {
            let mut c = a.parent;
            while c != ROOT && self.min_key[c as usize] > a.key {
                self.min_key[c as usize] = a.key;
                c = self.plan.containers[c as usize].parent;
            }
        }
    }
}

/// `$.analyses.bubbles[*].largest` for a path.
fn pattern(p: &[Seg]) -> String {
    let mut s = String::from("$");
    for x in p {
        match x {
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Index(_) => s.push_str("[*]"),
        }
    }
    s
}

/// The writer: `v` as JSON keeping what `sel` kept, fields in priority order.
fn write(w: &Walk, v: &Value, c: u32, sel: &Selection, out: &mut String) {
    let kept = |m: &Member| match *m {
        Member::Atom(a) => sel.atoms[a as usize],
        Member::Child(c) => sel.containers[c as usize],
    };
    let members = &w.members[c as usize];
    match v {
        Value::Object(m) => {
            let mut fields: Vec<(SortKey, &String, &Value, Member)> = m
                .iter()
                .zip(members)
                .filter(|(_, mb)| kept(mb))
                .map(|((k, x), &mb)| {
                    let key = match mb {
                        Member::Atom(a) => w.plan.atoms[a as usize].key,
                        Member::Child(c) => w.min_key[c as usize],
                    };
                    (SortKey { seq: 0, ..key }, k, x, mb)
                })
                .collect();
            // Tier, then the value's own order (stable sort).
            fields.sort_by_key(|f| (f.0.tier, f.0.group));
            out.push('{');
            for (n, (_, k, x, mb)) in fields.into_iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                one(w, x, mb, sel, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (n, (x, &mb)) in a.iter().zip(members).filter(|(_, mb)| kept(mb)).enumerate() {
                if n > 0 {
                    out.push(',');
                }
                one(w, x, mb, sel, out);
            }
            out.push(']');
        }
        x => out.push_str(&x.to_string()),
    }
}

fn one(w: &Walk, x: &Value, mb: Member, sel: &Selection, out: &mut String) {
    match mb {
        Member::Atom(_) => out.push_str(&x.to_string()),
        Member::Child(c) => write(w, x, c, sel, out),
    }
}

/// How to get a cut part back.
fn how(tool: &str, area: &str) -> String {
    match area.strip_prefix("$.analyses.") {
        Some(name) if tool == "analyze" => format!("only [\"{name}\"] returns it whole"),
        _ => "a larger budget returns it".into(),
    }
}

/// What one area (an analysis, a top-level field) lost.
struct AreaCut {
    atoms: u32,
    kept: u32,
    first: SortKey,
    /// Per list pattern: (pattern, entries kept, entries in all).
    lists: Vec<(u32, u32, u32)>,
}

fn tally(w: &Walk, sel: &Selection) -> Vec<AreaCut> {
    let mut areas: Vec<AreaCut> = (0..w.areas.len())
        .map(|_| AreaCut {
            atoms: 0,
            kept: 0,
            first: MAX_KEY,
            lists: Vec::new(),
        })
        .collect();
    for (i, a) in w.plan.atoms.iter().enumerate() {
        let x = &mut areas[w.atom_area[i] as usize];
        x.atoms += 1;
        x.kept += u32::from(sel.atoms[i]);
        x.first = x.first.min(a.key);
    }
    for l in &w.lists {
        let kept = w.members[l.container as usize]
            .iter()
            .filter(|m| match **m {
                Member::Atom(a) => sel.atoms[a as usize],
                Member::Child(c) => sel.containers[c as usize],
            })
            .count() as u32;
        let lists = &mut areas[w.area_of[l.container as usize] as usize].lists;
        match lists.iter_mut().find(|x| x.0 == l.pattern) {
            Some(x) => {
                x.1 += kept;
                x.2 += l.len;
            }
            None => lists.push((l.pattern, kept, l.len)),
        }
    }
    areas
}

/// The notes of what `sel` cut: per area partly kept, its lists cut (entries kept of all) and
/// what it lost whole, most important area first; the areas left out whole in one note per
/// kind (analyses, other fields); what the report itself capped (`detail`).
fn notes(w: &Walk, v: &Value, sel: &Selection) -> Vec<String> {
    let areas = tally(w, sel);
    let mut order: Vec<usize> = (0..areas.len()).collect();
    order.sort_by_key(|&i| areas[i].first);
    let (mut analyses, mut fields, mut out) = (Vec::new(), Vec::new(), Vec::new());
    for i in order {
        let a = &areas[i];
        let name = &w.areas[i];
        if a.kept == a.atoms {
            continue;
        }
        if a.kept > 0 {
            out.push(area_note(w, v, i, a, sel));
        } else if let Some(x) = name
            .strip_prefix("$.analyses.")
            .filter(|_| w.tool == "analyze")
        {
            analyses.push(x.to_string());
        } else {
            fields.push(name.trim_start_matches("$.").to_string());
        }
    }
    if !analyses.is_empty() {
        out.push(format!(
            "analyses left out: {}; only [\"<name>\"] returns one whole",
            analyses.join(", ")
        ));
    }
    if !fields.is_empty() {
        out.push(format!(
            "left out: {}; a larger budget returns them",
            fields.join(", ")
        ));
    }
    if w.tool == "analyze" && v["detail_capped"].as_array().is_some_and(|a| !a.is_empty()) {
        out.push(
            "$.detail_capped: the report lists the devices that matter and the first steps; detail \"full\" lists all".into(),
        );
    }
    out
}

/// `$.analyses.advisor: findings 3/8 kept; left out: findings[*].evidence, rules; only [...]`.
fn area_note(w: &Walk, v: &Value, i: usize, a: &AreaCut, sel: &Selection) -> String {
    let area = &w.areas[i];
    let label = |p: u32| {
        let p = &w.patterns[p as usize];
        match p.strip_prefix(area.as_str()).unwrap_or(p) {
            "" => "devices".to_string(),
            s => s.trim_start_matches('.').to_string(),
        }
    };
    let partial: Vec<String> = a
        .lists
        .iter()
        .filter(|x| x.1 > 0 && x.1 < x.2)
        .map(|x| format!("{} {}/{}", label(x.0), x.1, x.2))
        .collect();
    let mut gone = gone_children(w, v, w.area_root[i], sel);
    for x in a.lists.iter().filter(|x| x.1 == 0) {
        let l = label(x.0);
        // A list inside a field already named as gone is implied.
        if !gone
            .iter()
            .any(|g| l == *g || l.starts_with(&format!("{g}[")) || l.starts_with(&format!("{g}.")))
        {
            gone.push(l);
        }
    }
    let mut what = Vec::new();
    if !partial.is_empty() {
        what.push(format!("{} kept", first_few(partial)));
    }
    if !gone.is_empty() {
        what.push(format!("left out: {}", first_few(gone)));
    }
    if what.is_empty() {
        what.push("some fields left out".into());
    }
    format!("{area}: {}; {}", what.join("; "), how(w.tool, area))
}

/// The first three names and how many more.
fn first_few(mut names: Vec<String>) -> String {
    if names.len() > 3 {
        let n = names.len() - 3;
        names.truncate(3);
        names.push(format!("{n} more"));
    }
    names.join(", ")
}

/// The fields of an area's object that were cut whole.
fn gone_children(w: &Walk, v: &Value, root: Option<u32>, sel: &Selection) -> Vec<String> {
    let Some(c) = root.filter(|&c| sel.containers[c as usize]) else {
        return Vec::new();
    };
    // The area's value: found again by walking the path of its container.
    let Some(Value::Object(m)) = value_at(w, v, c) else {
        return Vec::new();
    };
    m.keys()
        .zip(&w.members[c as usize])
        .filter(|(_, mb)| match **mb {
            Member::Atom(a) => !sel.atoms[a as usize],
            Member::Child(c) => !sel.containers[c as usize],
        })
        .map(|(k, _)| k.clone())
        .collect()
}

/// The value a container stands for.
fn value_at<'v>(w: &Walk, v: &'v Value, c: u32) -> Option<&'v Value> {
    let mut up = vec![c];
    while let Some(&p) = up.last() {
        match w.plan.containers[p as usize].parent {
            ROOT => break,
            q => up.push(q),
        }
    }
    up.pop();
    let mut at = v;
    let mut parent = 0u32;
    for &c in up.iter().rev() {
        let i = w.members[parent as usize]
            .iter()
            .position(|m| matches!(*m, Member::Child(x) if x == c))?;
        at = match at {
            Value::Object(m) => m.values().nth(i)?,
            Value::Array(a) => a.get(i)?,
            _ => return None,
        };
        parent = c;
    }
    Some(at)
}

/// The wrapper around a result's text.
fn wrap(tool: &str, truncated: bool, full: usize, result: &str, cut: &[String]) -> String {
    format!(
        "{{\"schema_version\":{},\"tool\":{},\"truncated\":{truncated},\"full_bytes\":{full},\"result\":{result},\"cut\":{}}}",
        Value::from(crate::report::SCHEMA_VERSION),
        Value::from(tool),
        Value::from(cut.to_vec())
    )
}

/// `v` (the JSON of `tool`'s result) bounded to `max` bytes of wrapper text, filled by the
/// priority order (docs/json-output.md, "Bounded outputs"); an error naming the smallest
/// budget when even the verdict and the headline do not fit.
pub fn bound(tool: &str, v: &Value, max: usize) -> Result<Bounded, TooSmall> {
    let mut w = Walk::new(tool);
    let root = w.container(ROOT, 0, None, 0);
    w.areas.push("$".into());
    w.area_root.push(None);
    w.value(v, root, Ctx::default());
    w.finish();
    let result = |sel: &Selection| {
        let mut s = String::new();
        write(&w, v, root, sel, &mut s);
        s
    };
    let all = w.plan.all();
    let full = result(&all);
    let whole = wrap(tool, false, full.len(), &full, &[]);
    if whole.len() <= max {
        return Ok(Bounded {
            text: whole,
            truncated: false,
            full_bytes: full.len(),
        });
    }
    let reserve = wrap(tool, true, full.len(), "", &[]).len();
    let text = fit(&w.plan, max, reserve, |sel| {
        wrap(tool, true, full.len(), &result(sel), &notes(&w, v, sel))
    })?;
    Ok(Bounded {
        text,
        truncated: true,
        full_bytes: full.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A report-shaped value: verdict, headline, two devices with a summary field and a list.
    fn report() -> Value {
        json!({
            "schema_version": "x",
            "verdict": {"status": "confident", "reasons": []},
            "headline": ["first line", "second line"],
            "analyses": {
                "bubbles": [
                    {"gaps": 3, "largest": [30, 20, 10]},
                    {"gaps": 2, "largest": [9, 8]}
                ]
            }
        })
    }

    fn result(b: &Bounded) -> Value {
        let v: Value = serde_json::from_str(&b.text).unwrap();
        assert!(b.text.len() >= 2);
        v["result"].clone()
    }

    #[test]
    fn whole_when_it_fits_and_in_priority_order() {
        let b = bound("analyze", &report(), 10_000).unwrap();
        assert!(!b.truncated);
        assert_eq!(result(&b), report());
        // The verdict before the headline before the analyses in the text.
        let at = |s: &str| b.text.find(s).unwrap();
        assert!(at("\"verdict\"") < at("\"headline\"") && at("\"headline\"") < at("\"analyses\""));
    }

    #[test]
    fn lists_lose_their_tails_after_the_summaries() {
        let full = bound("analyze", &report(), 10_000).unwrap().text.len();
        // Shrink the budget byte by byte: the result always fits, the headline stays whole, a
        // list keeps a head of its entries, and no entry is kept while a summary is cut.
        let mut last_error = None;
        for max in (100..full).rev() {
            match bound("analyze", &report(), max) {
                Ok(b) => {
                    assert!(b.text.len() <= max, "{} > {max}", b.text.len());
                    let r = result(&b);
                    assert_eq!(r["headline"], report()["headline"], "{max}");
                    let devs = r["analyses"]["bubbles"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default();
                    let summaries = devs.iter().filter(|d| d.get("gaps").is_some()).count();
                    let entries: usize = devs
                        .iter()
                        .map(|d| d["largest"].as_array().map_or(0, Vec::len))
                        .sum();
                    assert!(entries == 0 || summaries == 2, "{max}: {r}");
                    for (k, d) in devs.iter().enumerate() {
                        if let Some(l) = d["largest"].as_array() {
                            let whole = report()["analyses"]["bubbles"][k]["largest"].clone();
                            assert_eq!(l[..], whole.as_array().unwrap()[..l.len()], "{max}");
                        }
                    }
                }
                Err(e) => {
                    assert_eq!(e.max, max);
                    last_error.get_or_insert(e.need);
                }
            }
        }
        // The smallest budget the error names is one that works.
        let need = last_error.expect("100 bytes is too small");
        assert!(bound("analyze", &report(), need).is_ok());
        assert!(bound("analyze", &report(), need - 1).is_err());
    }
}
