//! `profscope report --html` on the real ../shared/samples/ascend-pt/db/level1 root (plus the
//! real 5606 npu-smi table as memory evidence): the page is self-contained (no script, no
//! external resource), shows the report's numbers and every section, and, when Debian's
//! `chromium` is installed (.ci/run installs it when it can), renders headless with no console
//! message and a non-empty screenshot. Without chromium the browser part says SKIPPED.

/// A SKIPPED line written straight to stderr: libtest captures `eprintln!`, not this, so the
/// line shows in a plain `cargo test` run.
macro_rules! skipped {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

use serde_json::Value;
use std::process::Command;

const ROOT: &str = "../shared/samples/ascend-pt/db/level1";
const SMI: &str =
    "../shared/samples/npu-smi/vllm-ascend-5606_a2-910b4-1_2card_vllmworker-tp_npu-smi-25.2.2.txt";

#[test]
fn html_report_is_self_contained_and_renders() {
    let dir = std::env::temp_dir().join(format!("profscope-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    let o = crate::common::profscope_command()
        .args(["report", ROOT, "--quiet", "--html"])
        .arg(&page)
        .args(["--memory", SMI, ROOT])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(!html.contains("<script"), "no script");
    for bad in [
        "src=\"http",
        "href=\"http",
        "src='http",
        "href='http",
        "@import",
        "url(",
    ] {
        assert!(!html.contains(bad), "external resource: {bad}");
    }
    // The numbers of the JSON report for the same root are on the page.
    let j = crate::common::profscope_command()
        .args(["analyze", "--quiet", "--format", "json", ROOT])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&j.stdout).unwrap();
    for d in r["analyses"]["device_time"].as_array().unwrap() {
        let pct = d["computing_pct_of_window"].as_f64().unwrap();
        assert!(
            html.contains(&format!("computing {pct:.1}%")),
            "computing {pct:.1}% on the page"
        );
    }
    assert_eq!(
        html.matches("— largest gaps on the timeline").count(),
        2,
        "one bubble strip per device"
    );
    // Issue 57: the answer before any chart: the verdict card (status, kind, statement) and the
    // advisor's top 3 findings as cards (statement, recommendation, time at stake), in the
    // JSON's order, all under the headline and above the first chart.
    let first_chart = html.find("<svg").unwrap();
    let verdict_card = html
        .find("<div class=k>Verdict</div>")
        .expect("a verdict card");
    assert!(html.find("</ul>").unwrap() < verdict_card && verdict_card < first_chart);
    let v = &r["verdict"];
    assert!(html[verdict_card..first_chart].contains(&format!(
        "{} · {}",
        v["status"].as_str().unwrap(),
        v["kind"].as_str().unwrap()
    )));
    let findings = r["analyses"]["advisor"]["findings"].as_array().unwrap();
    assert!(
        findings.len() > 3,
        "the real root has {} findings",
        findings.len()
    );
    let mut at = verdict_card;
    for (k, f) in findings.iter().take(3).enumerate() {
        let card = html[at..]
            .find(&format!(
                "<div class=k>#{} · {} · ",
                k + 1,
                f["rule"].as_str().unwrap()
            ))
            .map(|i| at + i)
            .unwrap_or_else(|| panic!("card {}", k + 1));
        assert!(card < first_chart);
        // The card ends where the next one (or the answer section) begins.
        let end = ["<div class='card ", "</section>"]
            .iter()
            .filter_map(|m| html[card + 1..].find(m))
            .min()
            .unwrap()
            + card
            + 1;
        for field in ["statement", "recommendation"] {
            let text = profscope::render::html::esc(f[field].as_str().unwrap());
            assert!(html[card..end].contains(&text), "card {}: {field}", k + 1);
        }
        let stake = profscope::render::human_ns(f["time_at_stake_ns"].as_i64().unwrap());
        assert!(
            html[card..end].contains(&format!("{stake} at stake")),
            "{stake}"
        );
        at = end;
    }
    assert!(!html[..first_chart].contains("<div class=k>#4 · "));
    assert!(html[..first_chart].contains(&format!(
        "{} more finding(s) in the Advisor table below",
        findings.len() - 3
    )));
    assert!(
        html.contains("HBM by component") && html.contains("HBM: device 0 (NPU 0 chip 0, 910B4-1)")
    );
    for title in [
        "Diagnostics",
        "Per-rank step breakdown",
        "Compute streams and kernel families",
        "Communication shares",
    ] {
        assert!(html.contains(title), "{title}");
    }
    // Charts say what they show: the full family names (no 9-character cut), bins as ranges
    // with whole counts, a time axis under each gap strip.
    assert!(html.contains(">Foreach (optimizer)<") && html.contains(">TransData/Transpose<"));
    assert!(
        html.contains(">[10.000 µs, 100.000 µs)<"),
        "histogram bins as ranges"
    );
    assert!(
        !html.contains(">52.0<") && html.contains(">52<"),
        "counts are whole numbers"
    );
    assert!(html.contains(">+0.000 ns<"), "time axis of the gap strip");
    let svgs = html.matches("<svg").count();
    assert!(svgs >= 12, "{svgs} charts");

    let Some(chromium) = ["chromium", "chromium-browser"].iter().find(|c| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {c}"))
            .output()
            .is_ok_and(|o| o.status.success())
    }) else {
        skipped!("SKIPPED browser check: no chromium on PATH (apt-get install chromium)");
        return;
    };
    // The first screen (1280 × 900): what a person sees before scrolling (kept under the temp
    // dir as first-screen.png for a look).
    let first = dir.join("first-screen.png");
    let url = format!("file://{}", std::path::absolute(&page).unwrap().display());
    let o = Command::new(chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=1280,900",
        ])
        .arg(format!("--screenshot={}", first.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let shot = dir.join("shot.png");
    let o = Command::new(chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,3000",
        ])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let console: Vec<&str> = err.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 50_000,
        "screenshot {} bytes",
        png.len()
    );
    // The browser parsed every chart.
    let dom = Command::new(chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--dump-dom",
        ])
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(dom.matches("<svg").count(), svgs);
    // The browser keeps the cards before the first chart.
    let card = dom
        .find(">Verdict</div>")
        .expect("the verdict card in the DOM");
    assert!(card < dom.find("<svg").unwrap());
    assert_eq!(
        dom.matches("class=\"card ").count(),
        4,
        "the verdict and 3 findings"
    );
    // Every axis line is its own element (an unquoted `class=ax/>` once swallowed the rest of
    // the chart into the line, so nothing after it showed).
    let lines = html.matches("<line ").count();
    assert!(lines > 0);
    assert_eq!(dom.matches("<line ").count(), lines);
    let closed_at_once = dom
        .match_indices("<line ")
        .filter(|(at, _)| {
            let rest = &dom[*at..];
            rest.find('>')
                .is_some_and(|end| rest[end + 1..].starts_with("</line>"))
        })
        .count();
    assert_eq!(closed_at_once, lines, "each axis line is empty");
    if std::env::var_os("PROFSCOPE_KEEP_HTML").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
