//! The answer at the top of the HTML page, under the headline and before any chart: the verdict
//! as a card (status, kind, statement; its reasons when it is not confident; how sure the
//! cross-rank claims are) and the advisor's top findings as cards (what to change, the time at
//! stake, how it was estimated), the same top findings every bounded output keeps first
//! (`report::budget::TOP_FINDINGS`).

use super::esc_html as esc;
use crate::contract::{Finding, Scope, Status};
use crate::report::Report;

/// The cards' styles (added to the page's CSS).
pub const CSS: &str = ".answer{margin:14px 0 8px}.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(280px,1fr));gap:12px;margin:10px 0}.card{overflow-wrap:anywhere;border:1px solid #ddd;border-left:6px solid #888;border-radius:6px;padding:8px 12px;background:#fafafa}.card .k{font-size:12px;color:#555;text-transform:uppercase;letter-spacing:.04em}.card .big{font-size:18px;font-weight:600;margin:2px 0 4px}.card p{margin:4px 0}.card ul{margin:4px 0;padding-left:18px}.card .rec{background:#fff;border:1px solid #e4e4e4;border-radius:4px;padding:4px 6px}.s-confident{border-left-color:#59a14f}.s-qualified{border-left-color:#edc948}.s-withheld{border-left-color:#e15759}.sev-high{border-left-color:#e15759}.sev-medium{border-left-color:#f28e2b}.sev-low{border-left-color:#4e79a7}.sev-info{border-left-color:#bab0ac}";

/// The verdict card and the top findings' cards.
pub fn answer(r: &Report) -> String {
    let mut o = String::from("<section class=answer>");
    o += &verdict(r);
    let a = &r.analyses.advisor;
    let top = crate::report::budget::TOP_FINDINGS;
    if !a.findings.is_empty() {
        o += "<div class=cards>";
        for (k, f) in a.findings.iter().take(top).enumerate() {
            o += &finding(k, f);
        }
        o += "</div>";
        if a.findings.len() > top {
            o += &format!(
                "<p class=n>{} more finding(s) in the Advisor table below (largest time at stake first).</p>",
                a.findings.len() - top
            );
        }
    } else if !a.rules.is_empty() {
        o += &format!(
            "<p class=n>The advisor found nothing to change ({} rules run; the Advisor table below says which could not check some files).</p>",
            a.rules.len()
        );
    }
    o + "</section>"
}

fn verdict(r: &Report) -> String {
    let v = &r.verdict;
    let kind = v.kind.as_deref().unwrap_or("no bound verdict");
    let mut o = format!(
        "<div class='card s-{}'><div class=k>Verdict</div><div class=big>{} · {}</div><p>{}</p>",
        v.status,
        v.status,
        esc(kind),
        esc(&v.statement)
    );
    if v.status != Status::Confident && !v.reasons.is_empty() {
        o += "<ul>";
        for x in &v.reasons {
            o += &format!(
                "<li><b>{}</b> ({} {}): {}</li>",
                x.code,
                x.effect,
                if x.scope == Scope::Run {
                    "the run"
                } else {
                    "cross-rank claims"
                },
                esc(&x.detail)
            );
        }
        o += "</ul>";
    }
    o += &format!(
        "<p class=n>cross-rank claims: {}; each signal and its threshold: docs/evidence.md</p></div>",
        v.cross_rank_status
    );
    o
}

fn finding(k: usize, f: &Finding) -> String {
    let stake = if f.time_at_stake_ns > 0 {
        format!("{} at stake", super::human_ns(f.time_at_stake_ns))
    } else {
        "time at stake not estimated".to_string()
    };
    format!(
        "<div class='card sev-{}'><div class=k>#{} · {} · {}</div><div class=big>{}</div><p>{}</p><p class=rec><b>Change:</b> {}</p><p class=n>{}</p></div>",
        esc(&f.severity),
        k + 1,
        esc(&f.rule),
        esc(&f.severity),
        esc(&stake),
        esc(&f.statement),
        esc(&f.recommendation),
        esc(&f.estimate)
    )
}
