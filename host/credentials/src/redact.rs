//! A text with its secrets replaced by a marker, its page starts moved to match.

use crate::Secret;

/// What stands in a redacted text where a secret was.
pub const MARKER: &str = "[credential redacted]";

/// `text` with every secret's bytes replaced by [`MARKER`], and `page_starts` (byte offsets into
/// `text`) moved to the same places in the result. Secrets may come in any order and overlap.
pub fn redact(text: &str, page_starts: &[u32], secrets: &[Secret]) -> (String, Vec<u32>) {
    let mut spans: Vec<(usize, usize)> = secrets
        .iter()
        .filter(|s| s.span.start < s.span.end && s.span.end <= text.len())
        .filter(|s| text.is_char_boundary(s.span.start) && text.is_char_boundary(s.span.end))
        .map(|s| (s.span.start, s.span.end))
        .collect();
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(start, end) in &merged {
        out.push_str(&text[at..start]);
        out.push_str(MARKER);
        at = end;
    }
    out.push_str(&text[at..]);
    let moved = page_starts
        .iter()
        .map(|&start| u32::try_from(moved(start as usize, &merged)).unwrap_or(u32::MAX))
        .collect();
    (out, moved)
}

/// Where byte `start` of the text lands once the `merged` spans (sorted, apart) are replaced by
/// the marker; a start inside a span lands after its marker.
fn moved(start: usize, merged: &[(usize, usize)]) -> usize {
    let mut shift = 0isize;
    for &(s, e) in merged {
        if e <= start {
            shift += MARKER.len() as isize - (e - s) as isize;
        } else if s < start {
            return s.saturating_add_signed(shift) + MARKER.len();
        } else {
            break;
        }
    }
    start.saturating_add_signed(shift)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rule;

    const RULE: Rule = Rule {
        id: "test",
        what: "a test secret",
    };

    fn secret(text: &str, value: &str) -> Secret {
        let start = text.find(value).expect("value in text");
        Secret {
            rule: RULE,
            span: start..start + value.len(),
        }
    }

    #[test]
    fn secrets_are_replaced_and_pages_keep_their_text() {
        let text = "page one token=abc123XYZ end\u{c}page two key ghp_secret and more";
        let second = text.find("page two").expect("page") as u32;
        let found = [secret(text, "abc123XYZ"), secret(text, "ghp_secret")];
        let (out, pages) = redact(text, &[0, second], &found);
        assert_eq!(
            out,
            format!("page one token={MARKER} end\u{c}page two key {MARKER} and more")
        );
        assert_eq!(pages[0], 0);
        assert!(out[pages[1] as usize..].starts_with("page two"));
    }

    #[test]
    fn overlapping_secrets_leave_one_marker() {
        let text = "a=SECRETVALUE b";
        let whole = secret(text, "SECRETVALUE");
        let part = secret(text, "VALUE");
        let (out, _) = redact(text, &[], &[part, whole]);
        assert_eq!(out, format!("a={MARKER} b"));
    }
}
