//! `report.html`: the run's `report.md` as one self-contained page, to open
//! in a browser or attach to a CI run. The Markdown is rendered by
//! pulldown-cmark (tables included), and every chart the report shows is
//! put inline as a `data:` URI, so the page needs neither the run folder
//! nor a network; links (flame graphs, other files of the folder) stay
//! relative.

use std::path::Path;

use base64::Engine as _;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag};

/// The page's style: readable tables and charts no wider than the page.
const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;\
    line-height:1.45;color:#1a1a1a}table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}\
    th,td{border:1px solid #ccc;padding:.25rem .5rem}th{background:#f3f3f3}img{max-width:100%}\
    code{background:#f3f3f3;padding:0 .2rem}blockquote{border-left:4px solid #d33;margin:1rem 0;padding:.25rem 1rem}";

/// `markdown` (a report whose images are paths relative to `dir`) as a
/// self-contained HTML page; an image that cannot be read keeps its path.
pub fn html_page(markdown: &str, dir: &Path) -> String {
    let title = markdown.lines().find_map(|l| l.strip_prefix("# ")).unwrap_or("Benchmark report");
    let events = Parser::new_ext(markdown, Options::ENABLE_TABLES).map(|event| match event {
        Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
            let dest_url = inline_svg(dir, &dest_url).map_or(dest_url, CowStr::from);
            Event::Start(Tag::Image { link_type, dest_url, title, id })
        }
        other => other,
    });
    let mut body = String::with_capacity(markdown.len() * 2);
    pulldown_cmark::html::push_html(&mut body, events);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// The SVG at `path` (relative to `dir`, inside it) as a `data:` URI.
fn inline_svg(dir: &Path, path: &str) -> Option<String> {
    if !path.ends_with(".svg") || path.contains("..") || path.contains("://") {
        return None;
    }
    let svg = std::fs::read(dir.join(path)).ok()?;
    Some(format!("data:image/svg+xml;base64,{}", base64::engine::general_purpose::STANDARD.encode(svg)))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_render_and_charts_are_inline_and_nothing_else_is_fetched() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("charts")).unwrap();
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"/>";
        std::fs::write(dir.path().join("charts/changes.svg"), svg).unwrap();
        let markdown = "# Suite: <3 frameworks>\n\n![every change](charts/changes.svg)\n\n\
            | framework | change |\n|---|--:|\n| axum | +6.8 % |\n\n![gone](charts/missing.svg) [flame](flames/a.svg)\n";
        let page = html_page(markdown, dir.path());
        assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
        assert!(page.contains("<title>Suite: &lt;3 frameworks&gt;</title>"), "{page}");
        assert!(
            page.contains("<td>axum</td>") && page.contains("<td style=\"text-align: right\">+6.8 %</td>"),
            "{page}"
        );
        let inline =
            format!("src=\"data:image/svg+xml;base64,{}\"", base64::engine::general_purpose::STANDARD.encode(svg));
        assert!(page.contains(&inline), "the chart inline: {page}");
        assert!(page.contains("src=\"charts/missing.svg\""), "an unreadable chart keeps its path: {page}");
        assert!(page.contains("href=\"flames/a.svg\""), "links stay relative: {page}");
        assert!(!page.contains("<script") && !page.contains("<link"), "nothing to fetch: {page}");
    }
}
