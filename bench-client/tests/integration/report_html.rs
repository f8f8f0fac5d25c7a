//! `report.html` in a real browser: headless Chromium (Debian's
//! `chromium`, which `.ci/run` installs) loads the page of a suite's results
//! with no console message and draws a screenshot that is not blank; a page
//! with a console error and a blank page are told apart by the same checks.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use bench_client::model::Framework;
use bench_client::report::{self, charts, flames::FlameGraphs};
use bench_client::results::fixtures::{results, run};

use crate::util;

/// What headless Chromium said loading `page` and the share of the pixels
/// of its 1280 × 1600 screenshot that are not white.
fn browse(chromium: &Path, page: &Path) -> (Vec<String>, f64) {
    let shot = page.with_extension("png");
    let out = util::output_within(
        Command::new(chromium)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr"])
            .args(["--v=0", "--window-size=1280,1600", "--host-resolver-rules=MAP * ~NOTFOUND"])
            .arg(format!("--screenshot={}", shot.display()))
            .arg(format!("file://{}", page.display())),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "chromium: {}", String::from_utf8_lossy(&out.stderr));
    let console: Vec<String> =
        String::from_utf8_lossy(&out.stderr).lines().filter(|l| l.contains(":CONSOLE")).map(str::to_owned).collect();
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let drawn = pixels[..info.buffer_size()].chunks(channels).filter(|p| p.iter().take(3).any(|&c| c < 240)).count();
    (console, drawn as f64 / (info.width * info.height) as f64)
}

#[test]
fn the_report_page_loads_in_chromium_without_console_errors_and_is_not_blank() {
    let Some(chromium) = util::tool_or_skip("chromium", "report.html in headless Chromium") else { return };
    // Chromium takes most of a core for seconds: not beside a test that reads how fast.
    let _shared = util::shared();
    let dir = util::temp_dir("report-html");
    let mut runs = Vec::new();
    for round in 1..=3 {
        for (f, base) in [(Framework::Actix, 90_000), (Framework::Axum, 100_000)] {
            runs.push(run(f, "payload", "per_request", round, base + u64::from(round) * 1_000, true));
            runs.push(run(f, "payload", "preserialized", round, base * 11 / 10 + u64::from(round) * 900, true));
        }
    }
    let results = results(runs);
    let charts = charts::suite_charts(&dir, &results).unwrap();
    assert!(!charts.is_empty());
    let markdown = report::report(&results, &[], &charts, &FlameGraphs::default());
    let page = report::html_page(&markdown, &dir);
    // Self-contained: the charts are in the page, nothing is fetched.
    assert!(page.contains("src=\"data:image/svg+xml;base64,"), "{page}");
    assert!(!page.contains("src=\"charts/"), "every chart inline");
    std::fs::write(dir.join("report.html"), &page).unwrap();
    std::fs::remove_dir_all(dir.join("charts")).unwrap();
    let (console, drawn) = browse(&chromium, &dir.join("report.html"));
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert!(drawn > 0.02, "the screenshot is drawn: {:.1} % of its pixels", drawn * 100.0);

    // The same checks fail where they should.
    std::fs::write(dir.join("error.html"), "<!DOCTYPE html><p>x</p><script>console.error('boom')</script>").unwrap();
    let (console, _) = browse(&chromium, &dir.join("error.html"));
    assert!(console.iter().any(|l| l.contains("\"boom\"")), "{console:#?}");
    std::fs::write(dir.join("blank.html"), "<!DOCTYPE html><title>blank</title>").unwrap();
    let (_, blank) = browse(&chromium, &dir.join("blank.html"));
    assert!(blank < 0.001, "a blank page: {:.2} % drawn", blank * 100.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_front_page_charts_load_in_chromium_and_are_drawn() {
    let Some(chromium) = util::tool_or_skip("chromium", "the front page's charts in headless Chromium") else { return };
    let _shared = util::shared();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = util::temp_dir("front-page-charts");
    for name in ["frameworks", "changes"] {
        // A copy, so that the screenshot lands beside it and not in the checkout.
        let svg = dir.join(format!("{name}.svg"));
        std::fs::copy(root.join(format!("bench/runs/2026-12-07-frameworks/{name}.svg")), &svg).unwrap();
        let (console, drawn) = browse(&chromium, &svg);
        assert!(console.is_empty(), "{name}.svg: console messages: {console:#?}");
        // Lines and dots on white, 900 × 500 in a 1280 × 1600 screenshot: about 1 % of its
        // pixels; a blank page draws under 0.1 % (below).
        assert!(drawn > 0.005, "{name}.svg is drawn: {:.2} % of its pixels", drawn * 100.0);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
