//! Helpers for extracted text.

/// Tidies extracted text: trims trailing spaces on each line and collapses runs of blank lines
/// into one, so paragraphs stay apart and nothing else is blank.
pub fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank_run += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank_run > 0 { "\n\n" } else { "\n" });
        }
        blank_run = 0;
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_keeps_paragraphs_apart() {
        assert_eq!(tidy("  a  \n\n\n\n b\nc \n\n"), "  a\n\n b\nc");
    }
}
