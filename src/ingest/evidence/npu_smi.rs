//! `npu-smi info` tables (serving-evidence.md section 1): the classic A2 layout, A3's two dies per
//! NPU (`Chip  Phy-ID`), and 26.x's wide layout with `Process id in container`. Rows are split on
//! `|` and read by cell, never by column offset, so all three layouts (98 and 118 columns) and
//! pastes without the closing border parse the same way. Lines inside the table that match no
//! known row are kept in `unparsed`, never dropped silently.

use super::EvidenceError;
use crate::model::serving::{NpuSmiChip, NpuSmiLayout, NpuSmiProcess, NpuSmiSnapshot};

/// True when `text` looks like an `npu-smi info` table (used to sniff evidence files).
pub fn looks_like(text: &str) -> bool {
    text.lines().take(40).any(|l| {
        let l = l.trim();
        (l.starts_with("| npu-smi ") && l.contains("Version:"))
            || (l.starts_with("| NPU") && l.contains("Health"))
    })
}

pub fn read(path: &std::path::Path) -> Result<NpuSmiSnapshot, EvidenceError> {
    let bytes =
        crate::ingest::source::read_regular(path, crate::ingest::source::MAX_COMPANION_BYTES)
            .map_err(|e| EvidenceError::io(path, e))?;
    parse(
        &String::from_utf8_lossy(&bytes),
        &path.display().to_string(),
    )
}

fn cells(line: &str) -> Option<Vec<&str>> {
    let l = line.trim_end();
    let inner = l.strip_prefix('|')?;
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    Some(inner.split('|').map(str::trim).collect())
}

/// `33429/ 65536`, `0    / 0`, `3112 / 65536` → the numbers, with `/` as its own token.
fn tokens(cell: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for w in cell.split_whitespace() {
        let mut rest = w;
        while let Some(i) = rest.find('/') {
            if i > 0 {
                out.push(&rest[..i]);
            }
            out.push("/");
            rest = &rest[i + 1..];
        }
        if !rest.is_empty() {
            out.push(rest);
        }
    }
    out
}

fn num(s: &str) -> Option<f64> {
    match s {
        "-" | "NA" | "N/A" => None,
        _ => s.parse().ok(),
    }
}

/// `a / b` pairs in the order they appear.
fn pairs(t: &[&str]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut i = 1;
    while i + 1 < t.len() {
        if t[i] == "/"
            && let (Ok(a), Ok(b)) = (t[i - 1].parse(), t[i + 1].parse())
        {
            out.push((a, b));
            i += 2;
        } else {
            i += 1;
        }
    }
    out
}

pub fn parse(text: &str, path: &str) -> Result<NpuSmiSnapshot, EvidenceError> {
    let mut s = NpuSmiSnapshot {
        path: path.to_string(),
        layout: NpuSmiLayout::Classic,
        ..Default::default()
    };
    let mut in_processes = false;
    // The first row of a chip waits for its second row.
    let mut pending: Option<NpuSmiChip> = None;
    let mut saw_table = false;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.starts_with('+') || line.is_empty() {
            continue;
        }
        let Some(c) = cells(line) else {
            if saw_table {
                s.unparsed.push((line_no, raw.to_string()));
            }
            continue;
        };
        saw_table = true;
        let first = c.first().copied().unwrap_or("");
        if let Some(v) = first.strip_prefix("npu-smi ") {
            s.version = v.split_whitespace().next().map(str::to_string);
            continue;
        }
        if first.starts_with("NPU") && c.iter().any(|x| x.starts_with("Process id")) {
            in_processes = true;
            if c.iter().any(|x| x.starts_with("Process id in container")) {
                s.layout = NpuSmiLayout::Wide;
            }
            continue;
        }
        if first.starts_with("NPU") || first.starts_with("Chip") {
            if first.contains("Phy-ID") {
                s.layout = NpuSmiLayout::A3;
            }
            if line.len() > 110 && s.layout == NpuSmiLayout::Classic {
                s.layout = NpuSmiLayout::Wide;
            }
            continue;
        }
        if let Some(n) = first.strip_prefix("No running processes found in NPU") {
            match n.trim().parse() {
                Ok(n) => s.idle_npus.push(n),
                Err(_) => s.unparsed.push((line_no, raw.to_string())),
            }
            in_processes = true;
            continue;
        }
        let head: Vec<&str> = first.split_whitespace().collect();
        if in_processes {
            if let Some(p) = process(&c, &head, line_no) {
                s.processes.push(p);
                continue;
            }
        } else if c.len() == 3 {
            let t = tokens(c[2]);
            let all_numeric = !head.is_empty() && head.iter().all(|h| h.parse::<u32>().is_ok());
            if !all_numeric && head.len() == 2 {
                // Row 1: NPU Name | Health | Power Temp HP-used / HP-total
                if let Ok(npu) = head[0].parse() {
                    pending = Some(NpuSmiChip {
                        npu,
                        name: head[1].to_string(),
                        health: c[1].to_string(),
                        power_w: t.first().and_then(|x| num(x)),
                        temp_c: t.get(1).and_then(|x| num(x)),
                        ..Default::default()
                    });
                    continue;
                }
            } else if all_numeric && head.len() <= 2 {
                // Row 2: Chip [Phy-ID] | Bus-Id | AICore Mem-used / Mem-total HBM-used / HBM-total
                let p = pairs(&t);
                if let (Some(mut chip), [mem, hbm]) = (pending.take(), p.as_slice()) {
                    chip.chip = head[0].parse().unwrap_or(0);
                    chip.phy_id = head.get(1).and_then(|x| x.parse().ok());
                    chip.bus_id = c[1].to_string();
                    chip.aicore_pct = t.first().and_then(|x| num(x));
                    (chip.mem_used_mb, chip.mem_total_mb) = *mem;
                    (chip.hbm_used_mb, chip.hbm_total_mb) = *hbm;
                    chip.line = line_no;
                    s.chips.push(chip);
                    continue;
                }
            }
        }
        s.unparsed.push((line_no, raw.to_string()));
    }
    if s.chips.is_empty() {
        return Err(EvidenceError::Bad {
            path: path.to_string(),
            what: "no npu-smi device rows (`| <npu> <name> | <health> | ...` then `| <chip> | <bus> | ... HBM used / total |`)".into(),
        });
    }
    Ok(s)
}

/// `| NPU Chip | PID | name | MB [| container pid] |`.
fn process(c: &[&str], head: &[&str], line: usize) -> Option<NpuSmiProcess> {
    if !(4..=5).contains(&c.len()) || head.len() != 2 {
        return None;
    }
    Some(NpuSmiProcess {
        npu: head[0].parse().ok()?,
        chip: head[1].parse().ok()?,
        pid: c[1].parse().ok()?,
        name: c[2].to_string(),
        memory_mb: c[3].parse().ok()?,
        container_pid: c.get(4).map(|x| x.to_string()),
        line,
    })
}
