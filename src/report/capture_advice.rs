//! The advisor's `capture` rule: each reason the verdict is not confident (docs/evidence.md)
//! becomes a finding that says what to capture instead. It runs here, after the verdict, because
//! the verdict is built from every analysis (the advisor's other rules run inside the analyses).

use crate::analysis::advisor::finding;
use crate::contract::{Advisor, ReasonCode, Status, Verdict};

pub const RULE: &str = "capture";

/// What to capture instead, per reason.
fn instead(code: ReasonCode) -> &'static str {
    match code {
        ReasonCode::NoDeviceActivity => {
            "capture device activity too: torch_npu.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]) (Kineto: ProfilerActivity.CUDA), or msprof with --task-time=on"
        }
        ReasonCode::GraphCapture | ReasonCode::PartialGraphCapture => {
            "start the profiler after the graphs are captured (vLLM-Ascend: after start-up and warm-up, e.g. /start_profile on a running server), so the trace holds graph replays, not the capture; then analyse the replays (docs/analyses/graph_mode.md)"
        }
        ReasonCode::LaunchCoverageLow => {
            "capture host and device over the same window with device tracing on for all of it (torch_npu: ProfilerActivity.NPU, profiler_level Level1; one schedule for every rank), and let analyse() finish before copying the folder"
        }
        ReasonCode::DeviceSliver => {
            "widen the device capture to the host's window (same schedule for both; do not stop device tracing early), or trim the host window to the steps of interest"
        }
        ReasonCode::VendorDisagreement | ReasonCode::ExportIncomplete => {
            "re-export the rank (torch_npu_profiler analyse() / msprof --export=on) and let it finish; export_type=db keeps every table in one file"
        }
        ReasonCode::IdleUnexplained => {
            "capture what the idle waited on: the host side with its launch calls (torch_npu: profiler_level Level1 writes the CANN calls; Kineto: ProfilerActivity.CPU with the CUDA runtime) and every process and device that feeds this one (a kernel_details.csv alone has no host side); with_stack=True names the Python line of a blocking call"
        }
        ReasonCode::TruncatedInput => {
            "the file ends mid-event (a dump or copy that died): copy or re-export that rank again, and check free disk space where the profiler writes"
        }
        ReasonCode::MissingRanks => {
            "capture every rank with the same schedule and copy every rank folder (or pass --expected-ranks with the world size you meant)"
        }
        ReasonCode::ClockDisjoint | ReasonCode::ClockUnverified => {
            "capture the ranks over the same steps so their windows overlap and share at least 3 collectives (one schedule on every rank); keep the hosts' clocks NTP-synchronised"
        }
    }
}

/// Adds one `capture` finding per reason of `v` (no time at stake: a capture's shortfall costs
/// no device time; it costs the answers), when the advisor ran (`--only` may leave it out).
pub fn add(a: &mut Advisor, v: &Verdict) {
    if a.rules.is_empty() {
        return;
    }
    for r in &v.reasons {
        let mut f = finding(RULE, "profscope (docs/evidence.md: the verdict's reasons)");
        f.subject = r.code.as_str().to_string();
        f.severity = "info".into();
        f.statement = format!(
            "{} ({}): {}",
            r.code.as_str(),
            if r.effect == Status::Withheld {
                "verdict withheld"
            } else {
                "verdict qualified"
            },
            r.detail
        );
        f.estimate =
            "not estimated: the capture cannot support an answer here; a better capture can".into();
        f.evidence = r.evidence.clone();
        f.recommendation = instead(r.code).to_string();
        a.findings.push(f);
    }
    if !a.rules.iter().any(|r| r == RULE) {
        a.rules.push(RULE.to_string());
    }
}
