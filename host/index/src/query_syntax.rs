//! The keyword query language of the API: words, `"quoted phrases"` that must appear as written,
//! and `-word` or `-"a phrase"` to exclude. Nothing else is special: every other character is
//! part of a word, and the analyzer decides what a word is.

/// One part of a query, before analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// A word: results contain at least one of the words; those with all rank first.
    Word(String),
    /// A quoted phrase: every result contains it, as written.
    Phrase(String),
    /// A word or phrase after `-`: no result contains it.
    Exclude(String),
}

/// Splits a query into parts. An unterminated quote runs to the end of the query; a `-` on its
/// own, or inside a word (`e-mail`), is not an exclusion.
pub fn parse(query: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut rest = query.trim_start();
    while !rest.is_empty() {
        let (excluded, body) = match rest.strip_prefix('-') {
            Some(after) if !after.is_empty() && !after.starts_with(char::is_whitespace) => {
                (true, after)
            }
            _ => (false, rest),
        };
        let (text, quoted, after) = if let Some(inner) = body.strip_prefix('"') {
            match inner.find('"') {
                Some(end) => (&inner[..end], true, &inner[end + 1..]),
                None => (inner, true, ""),
            }
        } else {
            let end = body.find(char::is_whitespace).unwrap_or(body.len());
            (&body[..end], false, &body[end..])
        };
        if !text.trim().is_empty() {
            parts.push(match (excluded, quoted) {
                (true, _) => Part::Exclude(text.to_owned()),
                (false, true) => Part::Phrase(text.to_owned()),
                (false, false) => Part::Word(text.to_owned()),
            });
        }
        rest = after.trim_start();
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use Part::*;

    fn w(s: &str) -> Part {
        Word(s.into())
    }

    #[test]
    fn splits_words_phrases_and_exclusions() {
        assert_eq!(
            parse(r#"  quarterly "revenue grew" -draft -"old plan" e-mail - x "#),
            vec![
                w("quarterly"),
                Phrase("revenue grew".into()),
                Exclude("draft".into()),
                Exclude("old plan".into()),
                w("e-mail"),
                w("-"),
                w("x"),
            ]
        );
    }

    #[test]
    fn tolerates_odd_quotes() {
        assert_eq!(
            parse(r#""unterminated phrase"#),
            vec![Phrase("unterminated phrase".into())]
        );
        assert_eq!(parse(r#"a "" b"#), vec![w("a"), w("b")]);
        assert_eq!(parse(r#"x"y"#), vec![w(r#"x"y"#)]);
        assert!(parse("   ").is_empty());
    }
}
