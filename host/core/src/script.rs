//! Which writing system a character belongs to, where Quarry treats scripts differently: the
//! index's tokenizer (words of Chinese, Japanese and Korean text) and the embedder's passages.

/// Whether `c` is written without spaces between words: Han ideographs (Chinese characters,
/// kanji, hanja), kana, Hangul and Bopomofo, with their iteration and length marks.
pub fn is_cjk(c: char) -> bool {
    // Most text is below the first range (Latin, Greek, Cyrillic, Arabic...): one comparison.
    if (c as u32) < 0x1100 {
        return false;
    }
    matches!(c as u32,
        0x1100..=0x11FF // Hangul Jamo
        | 0x2E80..=0x2FDF // CJK and Kangxi radicals
        | 0x3005..=0x3007 // 々 〆 〇
        | 0x3021..=0x3029 // Hangzhou numerals
        | 0x3031..=0x3035 // kana repeat marks
        | 0x303B..=0x303C // 〻 〼
        | 0x3041..=0x3096 // Hiragana
        | 0x3099..=0x309F // (semi-)voicing marks, hiragana iteration marks
        | 0x30A1..=0x30FF // Katakana, ー, katakana iteration marks
        | 0x3105..=0x312F // Bopomofo
        | 0x3131..=0x318E // Hangul compatibility Jamo
        | 0x31A0..=0x31BF // Bopomofo extended
        | 0x31F0..=0x31FF // Katakana phonetic extensions
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xA960..=0xA97F // Hangul Jamo extended A
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0xD7B0..=0xD7FF // Hangul Jamo extended B
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0xFF65..=0xFF9F // half-width katakana, their middle dot and voicing marks
        | 0xFFA0..=0xFFDC // half-width Hangul
        | 0x1B000..=0x1B16F // kana supplement and extensions
        | 0x20000..=0x323AF // CJK extensions B to H (and compatibility supplement)
    )
}

#[cfg(test)]
mod tests {
    use super::is_cjk;

    #[test]
    fn han_kana_and_hangul_are_cjk_and_latin_is_not() {
        for c in ['搜', '索', 'ひ', 'カ', 'ｶ', '한', '々', 'ㄅ', '𠀀'] {
            assert!(is_cjk(c), "{c}");
        }
        for c in ['a', 'é', 'Ж', 'α', '1', '。', '、', 'Ａ', ' '] {
            assert!(!is_cjk(c), "{c}");
        }
    }
}
