//! The fortunes page: the rows plus the one added at request time, sorted by
//! message, rendered by a compile-time askama template
//! (`templates/fortunes.html`) that escapes every message for HTML.

use askama::Template;
use bytes::Bytes;

use super::{ADDITIONAL_FORTUNE, Fortune, seed};

/// The template; askama escapes `{{ … }}` for HTML (`.html` extension).
#[derive(Template)]
#[template(path = "fortunes.html")]
struct Page<'a> {
    fortunes: &'a [Fortune],
}

/// The page of `fortunes`: adds [`ADDITIONAL_FORTUNE`] (id 0), sorts by
/// message (by bytes, which for UTF-8 is by code point; equal messages by
/// id, so every server lists them alike) and renders the HTML.
pub fn render(mut fortunes: Vec<Fortune>) -> Bytes {
    fortunes.push(Fortune { id: 0, message: ADDITIONAL_FORTUNE.to_owned() });
    fortunes.sort_unstable_by(|a, b| a.message.cmp(&b.message).then(a.id.cmp(&b.id)));
    let html = Page { fortunes: &fortunes }.render().expect("integers and strings always format");
    Bytes::from(html)
}

/// The page of a fresh database ([`super::SEED`]): the body the route
/// table expects of `/fortunes` and `/fortunes/cached`.
pub fn seed_page() -> Bytes {
    render(seed())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written out by hand: the escaping, the order and the bytes are the
    /// test, not what the template happens to produce.
    const SEED_PAGE: &str = "<!DOCTYPE html>
<html>
<head><title>Fortunes</title></head>
<body>
<table>
<tr><th>id</th><th>message</th></tr>
<tr><td>11</td><td>&#60;script&#62;alert(&#34;This should not be displayed in a browser alert box.&#34;);&#60;/script&#62;</td></tr>
<tr><td>4</td><td>A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1</td></tr>
<tr><td>5</td><td>A computer program does what you tell it to do, not what you want it to do.</td></tr>
<tr><td>2</td><td>A computer scientist is someone who fixes things that aren&#39;t broken.</td></tr>
<tr><td>8</td><td>A list is only as strong as its weakest link. — Donald Knuth</td></tr>
<tr><td>0</td><td>Additional fortune added at request time.</td></tr>
<tr><td>3</td><td>After enough decimal places, nobody gives a damn.</td></tr>
<tr><td>7</td><td>Any program that runs right is obsolete.</td></tr>
<tr><td>10</td><td>Computers make very fast, very accurate mistakes.</td></tr>
<tr><td>6</td><td>Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen</td></tr>
<tr><td>9</td><td>Feature: A bug with seniority.</td></tr>
<tr><td>1</td><td>fortune: No such file or directory</td></tr>
<tr><td>12</td><td>フレームワークのベンチマーク</td></tr>
</table>
</body>
</html>";

    #[test]
    fn seed_page_is_escaped_sorted_and_utf8_byte_for_byte() {
        let page = seed_page();
        assert_eq!(std::str::from_utf8(&page).unwrap(), SEED_PAGE);
        assert!(!page.windows(7).any(|w| w == b"<script"), "the script tag is escaped");
        // The Japanese row and the em dash as their exact UTF-8 bytes.
        let japanese = "フレームワークのベンチマーク".as_bytes();
        assert_eq!(&japanese[..3], [0xE3, 0x83, 0x95], "フ is U+30D5");
        assert!(page.windows(japanese.len()).any(|w| w == japanese));
        assert!(page.windows(3).any(|w| w == [0xE2, 0x80, 0x94]), "— is U+2014");
    }

    #[test]
    fn rows_sort_by_message_bytes_then_id_with_the_request_time_row() {
        let rows = vec![
            Fortune { id: 7, message: "b".to_owned() },
            Fortune { id: 3, message: "é".to_owned() },
            Fortune { id: 5, message: "b".to_owned() },
            Fortune { id: 9, message: "Z".to_owned() },
            Fortune { id: 4, message: ADDITIONAL_FORTUNE.to_owned() },
        ];
        let page = String::from_utf8(render(rows).to_vec()).unwrap();
        let ids: Vec<&str> = page.lines().filter_map(|l| l.strip_prefix("<tr><td>")?.split('<').next()).collect();
        // "A…" < "Z" < "b" < "é" (0xC3 0xA9); equal messages by id, the request-time row (id 0) first.
        assert_eq!(ids, ["0", "4", "9", "5", "7", "3"]);
    }

    #[test]
    fn every_markup_character_is_escaped() {
        let page = render(vec![Fortune { id: 1, message: r#"<a href="x">&'</a>"#.to_owned() }]);
        let page = std::str::from_utf8(&page).unwrap();
        assert!(page.contains("<td>&#60;a href=&#34;x&#34;&#62;&#38;&#39;&#60;/a&#62;</td>"), "{page}");
    }
}
