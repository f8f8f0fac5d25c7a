//! The profiling pipeline: `perf script` text from this project's own axum
//! server (a committed fixture: 24 samples of `perf record -e cpu-clock -g`
//! on the profiling build under load on `/state/fat`) folded and drawn as a
//! flame graph with known frames, its shape counted, and a differential
//! flame graph drawn from it (`perf_unavailable.rs` has the suites whose
//! perf cannot record).

use crate::util;

use bench_client::measure;
use bench_client::report::flames::{self, Shape, Widths};

const FIXTURE: &str = include_str!("fixtures/perf-script-server-axum.txt");

/// The fixture's samples folded and merged, as the suite merges a variant's runs.
fn fixture_stacks() -> std::collections::BTreeMap<String, u64> {
    let mut stacks = std::collections::BTreeMap::new();
    flames::merge(&mut stacks, &measure::fold(FIXTURE.as_bytes()).unwrap());
    stacks
}

#[test]
fn perf_script_fixture_folds_into_a_flamegraph_with_known_frames() {
    let _exclusive = util::exclusive();
    let stacks = fixture_stacks();
    // inferno weighs each sample by its period: cpu-clock nanoseconds.
    let weighted_ns: u64 = stacks.values().sum();
    let in_fixture_ns: u64 = FIXTURE
        .lines()
        .filter(|l| l.ends_with("cpu-clock: ") || l.contains(" cpu-clock:"))
        .map(|l| l.split_whitespace().rev().nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(FIXTURE.matches(" cpu-clock:").count(), 24);
    assert_eq!(weighted_ns, in_fixture_ns, "every sample lands in exactly one folded stack");
    let foreign: Vec<&String> = stacks.keys().filter(|s| !s.starts_with("tokio-rt-worker;")).collect();
    assert!(foreign.is_empty(), "stacks start with the worker thread's name: {foreign:?}");

    let dir = util::temp_dir("flame");
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("axum.svg");
    flames::flamegraph(&flames::lines(&stacks), "axum fixture", Some("24 samples"), &svg).unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    let options = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(&text, options).expect("the flame graph is XML");
    let titles: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("title")).filter_map(|n| n.text()).collect();
    for frame in ["server_axum::state_layer", "hyper::proto::h1", "FatState"] {
        assert!(titles.iter().any(|t| t.contains(frame)), "a frame of {frame} in the flame graph");
    }
    let all = flames::top_self(&stacks, usize::MAX);
    let total: f64 = all.iter().map(|t| t.1).sum();
    assert!((total - 100.0).abs() < 1e-9, "self times add up to 100 %: {total}");
    let top = flames::top_self(&stacks, 3);
    assert_eq!(top.len(), 3);
    assert_eq!(top[..], all[..3]);
    assert!(top.windows(2).all(|w| w[0].1 >= w[1].1), "descending");

    // Recorded at 99 Hz with frame pointers: 4 of the 24 stacks stop at an
    // [unknown] return address instead of reaching start_thread.
    let shape = Shape::of(&stacks, 10_101_010);
    assert_eq!(shape, Shape { samples: 24, cut: 4, unknown: 4 });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn differential_flamegraph_keeps_what_the_change_removed_visible_in_blue() {
    let _exclusive = util::exclusive();
    let before = fixture_stacks();
    // "After": the same server without the state's drops, on twice the requests.
    let after: std::collections::BTreeMap<String, u64> = before
        .iter()
        .filter(|(s, _)| !s.contains("drop_in_place<common::state::FatState>"))
        .map(|(s, &w)| (s.clone(), w))
        .collect();
    assert!(after.len() < before.len(), "the fixture drops FatState");
    let (b, a) = (flames::per_thousand_requests(&before, 1000), flames::per_thousand_requests(&after, 2000));
    let dir = util::temp_dir("flame-diff");
    for (widths, name) in [(Widths::Before, "before.svg"), (Widths::After, "after.svg")] {
        flames::differential(&b, &a, widths, "fixture: drops removed", &dir.join(name)).unwrap();
    }
    let titles = |name: &str| -> Vec<String> {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let options = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
        let doc = roxmltree::Document::parse_with_options(&text, options).expect("the flame graph is XML");
        doc.descendants().filter(|n| n.has_tag_name("title")).filter_map(|n| n.text().map(str::to_owned)).collect()
    };
    let drop_frames = |titles: &[String]| -> Vec<String> {
        titles.iter().filter(|t| t.starts_with("core::ptr::drop_in_place<common::state::FatState>")).cloned().collect()
    };
    let removed = drop_frames(&titles("before.svg"));
    assert!(!removed.is_empty(), "widths of before: the removed frames are drawn");
    assert!(removed.iter().all(|t| t.contains("; -")), "and shrank (blue): {removed:?}");
    assert!(drop_frames(&titles("after.svg")).is_empty(), "widths of after: they are gone");
    let all = titles("after.svg").into_iter().find(|t| t.starts_with("all (")).unwrap();
    assert!(all.contains("per 1,000 requests"), "{all}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fill of every frame of an inferno flame graph, by its title's
/// function (the text before ` (`).
fn fills(svg: &str) -> Vec<(String, String)> {
    let options = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(svg, options).expect("the flame graph is XML");
    doc.descendants()
        .filter(|n| n.has_tag_name("g"))
        .filter_map(|g| {
            let title = g.children().find(|c| c.has_tag_name("title"))?.text()?;
            let fill = g.children().find(|c| c.has_tag_name("rect"))?.attribute("fill")?;
            Some((title.split(" (").next()?.to_owned(), fill.to_owned()))
        })
        .collect()
}

#[test]
fn a_known_difference_is_the_only_colour_once_both_sides_are_per_request() {
    let _exclusive = util::exclusive();
    // Before: 1,000 requests; after: 3,000 requests (a faster server), the
    // same cost per request everywhere but one function, whose self time per
    // request doubles: the one known difference.
    let stack = |leaf: &str| format!("server;main;handle;{leaf}");
    let before: std::collections::BTreeMap<String, u64> =
        [(stack("parse"), 4_000_000), (stack("respond"), 3_000_000), (stack("clone_state"), 1_000_000)]
            .into_iter()
            .collect();
    let after: std::collections::BTreeMap<String, u64> =
        [(stack("parse"), 12_000_000), (stack("respond"), 9_000_000), (stack("clone_state"), 6_000_000)]
            .into_iter()
            .collect();
    let dir = util::temp_dir("flame-known-difference");
    let draw = |b: Vec<String>, a: Vec<String>, name: &str| {
        flames::differential(&b, &a, Widths::After, "known difference", &dir.join(name)).unwrap();
        fills(&std::fs::read_to_string(dir.join(name)).unwrap())
    };
    let neutral = "rgb(250,250,250)";
    let per_request = draw(
        flames::per_thousand_requests(&before, 1_000),
        flames::per_thousand_requests(&after, 3_000),
        "per-request.svg",
    );
    let coloured: Vec<&str> = per_request.iter().filter(|(_, fill)| fill != neutral).map(|(f, _)| f.as_str()).collect();
    assert_eq!(coloured, ["clone_state"], "only the change is coloured: {per_request:?}");
    let clone = per_request.iter().find(|(f, _)| f == "clone_state").unwrap();
    assert_eq!(clone.1, "rgb(255,100,100)", "the largest change at full strength (red: it grew)");
    // Raw sample counts would colour every leaf red: 3× the requests, 3× the time.
    let raw = |m: &std::collections::BTreeMap<String, u64>| flames::per_thousand_requests(m, 1_000);
    let counts = draw(raw(&before), raw(&after), "raw.svg");
    let red: Vec<&str> =
        counts.iter().filter(|(_, fill)| fill.starts_with("rgb(255,")).map(|(f, _)| f.as_str()).collect();
    for leaf in ["parse", "respond", "clone_state"] {
        assert!(red.contains(&leaf), "without the normalisation the change drowns: {leaf} red too: {counts:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
