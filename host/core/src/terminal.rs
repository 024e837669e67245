//! Text from outside the user (file names, document titles and text, plugin manifests and
//! errors) made safe to print on a terminal: control characters (escape sequences among them)
//! and the invisible marks that reorder text (bidirectional overrides and isolates) are shown
//! as `\u{..}` escapes instead of acting on the terminal.

use std::borrow::Cow;

/// Whether `c` would act on a terminal or reorder what is shown instead of being shown.
fn acts(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` as it may be printed: unchanged when it holds nothing that acts.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn escape_sequences_and_reordering_marks_are_shown_not_acted_on() {
        assert_eq!(printable("report.pdf"), "report.pdf");
        assert_eq!(printable("東京 café"), "東京 café");
        assert_eq!(printable("evil\u{1b}[2J.txt"), "evil\\u{1b}[2J.txt");
        assert_eq!(printable("a\nb\tc\u{7f}"), "a\\u{a}b\\u{9}c\\u{7f}");
        assert_eq!(printable("abc\u{202E}fdp.exe"), "abc\\u{202e}fdp.exe");
        assert_eq!(printable("\u{9b}31m"), "\\u{9b}31m");
    }
}
