//! HTML to text: tags removed, scripts and styles dropped, entities decoded, blocks on their own
//! lines. Tolerant of broken markup: it never fails, it only loses structure.

/// Elements whose content is not text for people.
const SKIPPED: [&str; 6] = ["script", "style", "noscript", "template", "head", "svg"];

/// Elements that start a new line.
const BLOCKS: [&str; 32] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "tr",
    "ul",
    "body",
];

/// The text of an HTML document and its `<title>`, if any.
pub fn to_text(html: &str) -> (String, Option<String>) {
    let mut out = String::with_capacity(html.len() / 2);
    let mut title = None;
    let mut pre_depth = 0usize;
    let mut rest = html;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            push_text(&mut out, rest, pre_depth > 0);
            break;
        };
        push_text(&mut out, &rest[..lt], pre_depth > 0);
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |end| &after[end + 3..]);
            continue;
        }
        let Some(tag) = Tag::parse(rest) else {
            push_text(&mut out, "<", pre_depth > 0);
            rest = &rest[1..];
            continue;
        };
        rest = &rest[tag.len..];
        let name = tag.name.as_str();
        if tag.closing {
            if name == "pre" {
                pre_depth = pre_depth.saturating_sub(1);
            }
            if BLOCKS.contains(&name) || name == "td" || name == "th" {
                out.push(if name == "td" || name == "th" {
                    '\t'
                } else {
                    '\n'
                });
            }
            continue;
        }
        if name == "title" {
            let (inner, after) = until_closing(rest, "title");
            let t = collapse(&htmlize::unescape(inner));
            if title.is_none() && !t.is_empty() {
                title = Some(t);
            }
            rest = after;
        } else if SKIPPED.contains(&name) && !tag.self_closing {
            // <head> holds <title>, which is taken from it before the rest is skipped.
            let (inner, after) = until_closing(rest, name);
            if name == "head" && title.is_none() {
                title = to_text(inner).1;
            }
            rest = after;
        } else {
            if name == "pre" {
                pre_depth += 1;
            }
            if BLOCKS.contains(&name) {
                out.push('\n');
            }
        }
    }
    (crate::text::tidy(&out), title)
}

/// Appends a run of character data, entities decoded; whitespace collapses outside `<pre>`.
fn push_text(out: &mut String, raw: &str, preformatted: bool) {
    if raw.is_empty() {
        return;
    }
    let decoded = htmlize::unescape(raw);
    if preformatted {
        out.push_str(&decoded);
        return;
    }
    let starts_with_space = decoded.starts_with(char::is_whitespace);
    let ends_with_space = decoded.ends_with(char::is_whitespace);
    let words = collapse(&decoded);
    if words.is_empty() {
        if starts_with_space && !out.ends_with(char::is_whitespace) {
            out.push(' ');
        }
        return;
    }
    if starts_with_space && !out.ends_with(char::is_whitespace) && !out.is_empty() {
        out.push(' ');
    }
    out.push_str(&words);
    if ends_with_space {
        out.push(' ');
    }
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Splits `rest` at the closing tag `</name>` (case-insensitive): the content and what follows it.
fn until_closing<'a>(rest: &'a str, name: &str) -> (&'a str, &'a str) {
    let bytes = rest.as_bytes();
    let mut i = 0;
    while let Some(off) = rest[i..].find("</") {
        let start = i + off;
        let name_end = start + 2 + name.len();
        if name_end <= bytes.len()
            && bytes[start + 2..name_end].eq_ignore_ascii_case(name.as_bytes())
        {
            let end = rest[name_end..]
                .find('>')
                .map_or(rest.len(), |e| name_end + e + 1);
            return (&rest[..start], &rest[end..]);
        }
        i = start + 2;
    }
    (rest, "")
}

/// A start or end tag at the beginning of the input.
struct Tag {
    name: String,
    closing: bool,
    self_closing: bool,
    /// Bytes the tag spans, `<` to `>` inclusive.
    len: usize,
}

impl Tag {
    fn parse(s: &str) -> Option<Tag> {
        let bytes = s.as_bytes();
        let mut i = 1;
        let closing = bytes.get(i) == Some(&b'/');
        if closing {
            i += 1;
        }
        if bytes.get(1).is_some_and(|b| *b == b'!' || *b == b'?') {
            // Doctype, CDATA or processing instruction: skipped whole.
            let end = s.find('>')?;
            return Some(Tag {
                name: String::new(),
                closing: true,
                self_closing: true,
                len: end + 1,
            });
        }
        let name_start = i;
        while bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b':')
        {
            i += 1;
        }
        if i == name_start || !bytes[name_start].is_ascii_alphabetic() {
            return None;
        }
        let name = s[name_start..i].to_ascii_lowercase();
        // Find the end of the tag, stepping over quoted attribute values.
        let mut quote = None;
        while let Some(&b) = bytes.get(i) {
            match (quote, b) {
                (Some(q), _) if b == q => quote = None,
                (Some(_), _) => {}
                (None, b'"' | b'\'') => quote = Some(b),
                (None, b'>') => break,
                _ => {}
            }
            i += 1;
        }
        let len = (i + 1).min(s.len());
        let self_closing = len >= 2 && bytes.get(len - 2) == Some(&b'/');
        Some(Tag {
            name,
            closing,
            self_closing,
            len,
        })
    }
}

/// The text of an XML entity reference by its name (`amp`, `#233`, `#xE9`): the five XML
/// entities and character references; empty for anything else.
pub fn resolve_xml_entity(name: &str) -> String {
    match name {
        "amp" => "&".into(),
        "lt" => "<".into(),
        "gt" => ">".into(),
        "quot" => "\"".into(),
        "apos" => "'".into(),
        _ => {
            let code = name
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()));
            code.and_then(char::from_u32)
                .map(String::from)
                .unwrap_or_default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_tags_and_keeps_blocks_apart() {
        let html = "<!DOCTYPE html><html><head><title>The &amp; Title</title>\
            <style>p{color:red}</style></head><body><h1>Hello</h1>\
            <p>First <b>bold</b> para&nbsp;graph.</p><!-- hidden --><script>var x = '<p>';</script>\
            <p>Second &lt;one&gt; &#233;t&eacute;</p><pre>a\n  b</pre></body></html>";
        let (text, title) = to_text(html);
        assert_eq!(title.as_deref(), Some("The & Title"));
        assert_eq!(
            text,
            "Hello\n\nFirst bold para graph.\n\nSecond <one> été\n\na\n  b"
        );
    }

    #[test]
    fn survives_broken_markup() {
        let (text, _) = to_text("a < b and <p class=\"x>y\">c</p> <unclosed");
        assert!(text.starts_with("a < b and"), "{text}");
        assert!(text.contains('c'));
    }
}
