//! How random a value looks: Shannon entropy of its characters, and how many classes of
//! characters (lowercase, uppercase, digits, others) it mixes.

/// Shannon entropy in bits per character of `value` (by bytes; 0 for an empty value).
pub(crate) fn shannon(value: &str) -> f32 {
    let bytes = value.as_bytes();
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[usize::from(b)] += 1;
    }
    let len = bytes.len() as f32;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f32 / len;
            -p * p.log2()
        })
        .sum()
}

/// How many of lowercase letters, uppercase letters, digits and other characters `value` holds.
pub(crate) fn classes(value: &str) -> u8 {
    let mut seen = [false; 4];
    for c in value.chars() {
        let class = if c.is_lowercase() {
            0
        } else if c.is_uppercase() {
            1
        } else if c.is_ascii_digit() {
            2
        } else {
            3
        };
        seen[class] = true;
    }
    seen.iter().map(|&s| u8::from(s)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_tokens_score_higher_than_words_and_repeats() {
        assert_eq!(shannon(""), 0.0);
        assert_eq!(shannon("aaaaaaaa"), 0.0);
        assert!((shannon("abcd") - 2.0).abs() < 1e-6);
        assert!(shannon("wJalrXUtnFEMIK7MDENGbPxRfiCY4sd8a7Fs2") > 4.5);
        assert!(shannon("password") < 3.0);
    }

    #[test]
    fn classes_count_lower_upper_digits_and_the_rest() {
        assert_eq!(classes("abc"), 1);
        assert_eq!(classes("aB3"), 3);
        assert_eq!(classes("aB3!"), 4);
        assert_eq!(classes(""), 0);
    }
}
