//! `profscope memory` as sections (terminal and Markdown): per-device components with their
//! sources, a compact all-device table, the cross-check, what is missing, and two runs side by
//! side.

use super::sections::{Section, sec};
use crate::contract::{Attribution, Component, DeviceMemory, MIB, Source};
use crate::report::memory::{MemoryReport, RunMemory};

/// Devices shown with one table each; the rest only in the compact table (JSON has them all).
const DETAILED: usize = 4;

fn mib(b: Option<i64>) -> String {
    b.map_or("unknown".into(), |b| {
        format!("{:.0}", b as f64 / MIB as f64)
    })
}

fn gib(b: Option<i64>) -> String {
    b.map_or("unknown".into(), |b| {
        format!("{:.2}", b as f64 / crate::units::GIB as f64)
    })
}

fn src(s: &[Source]) -> String {
    if s.is_empty() {
        return "no evidence".into();
    }
    let base = |f: &str| f.rsplit('/').next().unwrap_or(f).to_string();
    let mut parts: Vec<String> = s
        .iter()
        .take(2)
        .map(|s| match s.line {
            Some(l) => format!("{}:{l}", base(&s.file)),
            None => base(&s.file),
        })
        .collect();
    if s.len() > 2 {
        parts.push(format!("+{} more", s.len() - 2));
    }
    parts.join(", ")
}

/// The sources in full (file path, line, what was read), for the notes under a table.
fn src_long(s: &Source) -> String {
    match s.line {
        Some(l) => format!("{}:{l}: {}", s.file, s.what),
        None => format!("{}: {}", s.file, s.what),
    }
}

fn dev_label(d: &DeviceMemory) -> String {
    match (d.device, d.npu, d.chip) {
        (Some(id), Some(n), Some(c)) => format!(
            "device {id} (NPU {n} chip {c}, {})",
            d.name.as_deref().unwrap_or("?")
        ),
        (Some(id), _, _) => format!("device {id}"),
        _ => "device unknown".into(),
    }
}

fn pct(p: Option<f64>) -> String {
    p.map_or("-".into(), |p| format!("{p:.1}%"))
}

fn component_row(c: &Component) -> Vec<String> {
    vec![
        format!("{}{}", c.name, if c.estimate { " (estimate)" } else { "" }),
        mib(c.bytes),
        gib(c.bytes),
        pct(c.share_pct),
        src(&c.sources),
    ]
}

fn device_section(title: &str, d: &DeviceMemory) -> Section {
    let mut s = sec(
        format!("{title}: {}", dev_label(d)),
        vec!["component", "MiB", "GiB", "share", "source"],
    );
    for c in &d.components {
        s.rows.push(component_row(c));
        if let Some(n) = &c.note {
            s.notes.push(format!("{}: {n}", c.name));
        }
    }
    for c in &d.components {
        for x in &c.sources {
            s.notes.push(format!("{} <- {}", c.name, src_long(x)));
        }
    }
    s.rows.push(vec![
        "residual (unattributed)".into(),
        mib(d.residual_bytes),
        gib(d.residual_bytes),
        pct(d.residual_share_pct),
        if d.residual_bytes.is_some() {
            "npu-smi used minus the known components".into()
        } else {
            "no npu-smi HBM used for this device".into()
        },
    ]);
    let x = &d.cross_check;
    s.rows.push(vec![
        "npu-smi HBM used".into(),
        mib(x.npu_smi_used_bytes),
        gib(x.npu_smi_used_bytes),
        pct(x.npu_smi_used_bytes.map(|_| 100.0)),
        src(&d.residual_sources),
    ]);
    if let Some(w) = &d.worker {
        s.notes.push(format!(
            "worker: pid {} `{w}` (the largest process on the chip)",
            d.worker_pid.unwrap_or(0)
        ));
    }
    s
}

fn run_sections(title: &str, r: &RunMemory, out: &mut Vec<Section>) {
    let a: &Attribution = &r.attribution;
    for d in a.devices.iter().take(DETAILED) {
        out.push(device_section(title, d));
    }
    out.push(all_devices(title, a));
    out.push(cross_check(title, a));
    out.push(status(title, r));
    out.extend(process_level(title, a));
}

/// One row per device: npu-smi used, every component and the residual, MiB.
fn all_devices(title: &str, a: &Attribution) -> Section {
    let mut t = sec(
        format!("{title}: all devices (MiB)"),
        vec![
            "device",
            "npu-smi used",
            "fixed",
            "weights",
            "kv",
            "graph",
            "hccl",
            "runtime",
            "activations",
            "residual",
        ],
    );
    for d in &a.devices {
        let mut row = vec![
            d.device.map_or("?".into(), |x| x.to_string()),
            mib(d.cross_check.npu_smi_used_bytes),
        ];
        row.extend(d.components.iter().map(|c| mib(c.bytes)));
        row.push(mib(d.residual_bytes));
        t.rows.push(row);
    }
    t.notes
        .push(format!("shares are of: {}", a.share_denominator));
    if a.devices.len() > DETAILED {
        t.notes.push(format!(
            "{} more devices have per-component sources in --format json",
            a.devices.len() - DETAILED
        ));
    }
    t
}

/// Per device: npu-smi used against the component sum, msprof, processes and both weights.
fn cross_check(title: &str, a: &Attribution) -> Section {
    let mut x = sec(
        format!("{title}: cross-check (MiB)"),
        vec![
            "device",
            "npu-smi used",
            "component sum",
            "msprof APP",
            "npu-smi processes",
            "no process (driver)",
            "vLLM weights",
            "checkpoint weights",
        ],
    );
    for d in &a.devices {
        let c = &d.cross_check;
        x.rows.push(vec![
            d.device.map_or("?".into(), |x| x.to_string()),
            mib(c.npu_smi_used_bytes),
            mib(Some(c.component_sum_bytes)),
            mib(c.msprof_app_bytes),
            mib(c.npu_smi_process_bytes),
            mib(c.npu_smi_unowned_bytes),
            mib(c.vllm_weights_bytes),
            mib(c.checkpoint_weights_bytes),
        ]);
    }
    x
}

/// Status, the reference snapshot, the evidence read, what is missing, statements, errors.
fn status(title: &str, r: &RunMemory) -> Section {
    let a: &Attribution = &r.attribution;
    let mut st = sec(format!("{title}: status {}", a.status), vec![]);
    match &a.reference {
        Some(r) => st.notes.push(format!(
            "reference snapshot: {} ({}, npu-smi {}, {} layout)",
            r.file,
            r.role,
            r.version.as_deref().unwrap_or("?"),
            r.layout
        )),
        None => st
            .notes
            .push("no npu-smi snapshot of the loaded service".into()),
    }
    for s in &a.snapshots {
        st.notes.push(format!("npu-smi: {} as {}", s.file, s.role));
    }
    for l in &r.logs {
        st.notes.push(format!(
            "vLLM log: {} ({} memory lines of {})",
            l.file,
            l.records.len(),
            l.lines
        ));
    }
    for m in &a.missing {
        st.notes.push(format!("missing: {m}"));
    }
    for s in &a.statements {
        st.notes.push(s.clone());
    }
    for e in &r.errors {
        st.notes.push(format!("error: {e}"));
    }
    if r.skipped > 0 {
        st.notes.push(format!(
            "{} file(s) skipped (not evidence), e.g. {}",
            r.skipped,
            r.skipped_examples
                .first()
                .map_or(String::new(), |(f, w)| format!("{f}: {w}"))
        ));
    }
    st
}

/// msprof module memory not tied to an npu-smi device (shown, never added).
fn process_level(title: &str, a: &Attribution) -> Option<Section> {
    if a.process_level.is_empty() {
        return None;
    }
    let mut p = sec(
        format!("{title}: msprof module memory not tied to an npu-smi device (not added)"),
        vec!["file", "device", "module", "max MiB", "samples"],
    );
    for m in a.process_level.iter().filter(|m| m.max_bytes > 0) {
        p.rows.push(vec![
            m.file.clone(),
            m.device.to_string(),
            m.component.clone(),
            format!("{:.1}", m.max_bytes as f64 / MIB as f64),
            m.samples.to_string(),
        ]);
    }
    p.notes
        .push("modules whose maximum is 0 are left out".into());
    Some(p)
}

pub fn sections(r: &MemoryReport) -> Vec<Section> {
    let mut out = Vec::new();
    let title = if r.compare.is_some() { "Run A" } else { "HBM" };
    run_sections(title, &r.run, &mut out);
    if let Some(b) = &r.compare {
        run_sections("Run B", b, &mut out);
        let mut s = sec(
            "Run A vs run B: mean per device (MiB)",
            vec!["component", "A", "A devices", "B", "B devices", "B - A"],
        );
        let f = |x: Option<f64>| x.map_or("unknown".into(), |v| format!("{:.0}", v / MIB as f64));
        for c in &r.side_by_side {
            s.rows.push(vec![
                c.component.into(),
                f(c.a_mean_bytes),
                c.a_devices.to_string(),
                f(c.b_mean_bytes),
                c.b_devices.to_string(),
                f(c.delta_bytes),
            ]);
        }
        out.push(s);
    }
    out
}
