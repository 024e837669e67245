//! What a word is, in every script: the tokenizer of every text field and of queries.
//!
//! Scripts that separate words with spaces or punctuation give words as runs of letters and
//! digits, lowercased here (the analyzers have no lower-casing filter of their own). Chinese,
//! Japanese and Korean text has no such separators (Korean separates phrases, not words), so a
//! run of their characters becomes overlapping pairs of characters ("bigrams", as Lucene's CJK
//! analyzer does): any word of two or more characters inside a run is then a phrase of its
//! bigrams, found wherever it stands, without a dictionary that would have to know the word.
//! When indexing, each character is also kept on its own (at the same position as the bigram it
//! starts), so a one-character query finds it. The ranking field takes words only
//! ([`WordTokenizer::words_only`]).
//!
//! Inside CJK runs, characters are read in their usual composed form (decomposed kana and
//! Hangul composed, half-width katakana full-width, compatibility ideographs unified), and
//! traditional Chinese characters are folded to simplified ones, each on its own (a search in
//! either form finds both; Japanese kanji fold the same way on both sides). A line wrapped inside
//! Chinese or Japanese text does not break a word. Full-width Latin letters and digits are
//! ordinary words, folded to ASCII by the analyzer's ASCII folding.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

use quarry_core::script::is_cjk;

/// The most characters of a CJK run taken at once: a longer run (a text without punctuation,
/// a hostile one) is read as runs of this length, the pair across each cut left out, so that
/// the run's buffer stays about 24 KiB whatever the text.
const MAX_RUN: usize = 1024;

/// Words of this many bytes or more are not indexed (`RemoveLongFilter`).
pub(crate) const MAX_WORD_BYTES: usize = 40;

/// The tokenizer, for indexing, for queries, or for words only.
#[derive(Clone, Debug)]
pub(crate) struct WordTokenizer {
    /// Whether single characters of Chinese, Japanese and Korean runs are emitted beside their
    /// bigrams (indexing), or only where a run is one character long (queries).
    unigrams: bool,
    /// Whether CJK runs give no tokens at all ([`WordTokenizer::words_only`]).
    skip_cjk: bool,
    token: Token,
    /// The current run of CJK characters, reused from text to text.
    run: Vec<RunChar>,
}

impl WordTokenizer {
    /// The tokenizer of indexed text: every CJK character and every bigram.
    pub(crate) fn for_index() -> Self {
        WordTokenizer::new(true, false)
    }

    /// The tokenizer of queries: bigrams only (a query word of one character stays one).
    pub(crate) fn for_queries() -> Self {
        WordTokenizer::new(false, false)
    }

    /// Words only: CJK text gives no tokens (the ranking field, whose stems are English; CJK
    /// words are ranked by their pairs in the text fields).
    pub(crate) fn words_only() -> Self {
        WordTokenizer::new(false, true)
    }

    fn new(unigrams: bool, skip_cjk: bool) -> Self {
        WordTokenizer {
            unigrams,
            skip_cjk,
            token: Token::default(),
            run: Vec::new(),
        }
    }
}

/// A character of a CJK run: where it is in the text, and what it folds to.
#[derive(Clone, Copy, Debug)]
struct RunChar {
    from: usize,
    to: usize,
    folded: char,
}

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = WordStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordStream<'a> {
        self.token.reset();
        self.run.clear();
        WordStream {
            text,
            rest: 0,
            unigrams: self.unigrams,
            skip_cjk: self.skip_cjk,
            token: &mut self.token,
            run: &mut self.run,
            next_in_run: None,
            position: 0,
        }
    }
}

/// The tokens of one text.
pub(crate) struct WordStream<'a> {
    text: &'a str,
    /// Byte offset where scanning resumes.
    rest: usize,
    unigrams: bool,
    skip_cjk: bool,
    token: &'a mut Token,
    run: &'a mut Vec<RunChar>,
    /// The next token of the current CJK run: the index of its character, and whether the
    /// unigram of that character was already given.
    next_in_run: Option<(usize, bool)>,
    /// The position of the next word, or of the current run's first character.
    position: usize,
}

impl WordStream<'_> {
    /// Sets the token to characters `first..=last` of the current run.
    fn set_run_token(&mut self, first: usize, last: usize) {
        let (Some(a), Some(b)) = (self.run.get(first), self.run.get(last)) else {
            return;
        };
        self.token.text.clear();
        self.token
            .text
            .extend(self.run[first..=last].iter().map(|c| c.folded));
        self.token.offset_from = a.from;
        self.token.offset_to = b.to;
        self.token.position = self.position + first;
        self.token.position_length = 1;
    }

    /// The next token of the current run, if any is left.
    fn advance_in_run(&mut self) -> bool {
        let Some((i, unigram_given)) = self.next_in_run else {
            return false;
        };
        let len = self.run.len();
        let has_pair = i + 1 < len;
        if !unigram_given && (self.unigrams || len == 1) {
            self.set_run_token(i, i);
            self.next_in_run = Some((i, true));
            if !has_pair {
                self.next_in_run = None;
            }
            return true;
        }
        if has_pair {
            self.set_run_token(i, i + 1);
            self.next_in_run = Some((i + 1, false));
            if !(self.unigrams || i + 2 < len) {
                // The last pair of a query's run: its second character needs no token.
                self.next_in_run = None;
            }
            return true;
        }
        self.next_in_run = None;
        false
    }

    /// Collects the CJK run starting at byte `start`, returning where it ends.
    fn collect_run(&mut self, start: usize) -> usize {
        self.run.clear();
        let text = self.text;
        let mut at = start;
        let mut end = start;
        while let Some(c) = text[at..].chars().next() {
            if self.run.len() == MAX_RUN {
                break;
            }
            if !is_cjk(c) {
                // A line break inside Chinese or Japanese text is not a word break.
                match self
                    .run
                    .last()
                    .and_then(|last| joined_line(text, at, last.folded))
                {
                    Some(next) => {
                        at = next;
                        continue;
                    }
                    None => break,
                }
            }
            let (from, to) = (at, at + c.len_utf8());
            at = to;
            end = to;
            let folded = fold_form(c);
            // A voicing mark joins the kana before it, and Hangul jamo their syllable, as in
            // composed (NFC) text: `カ` + U+3099 and `ｶﾞ` are `ガ`, decomposed `학` is `학`.
            let composed = self
                .run
                .last()
                .and_then(|last| unicode_normalization::char::compose(last.folded, folded));
            match (composed, self.run.last_mut()) {
                (Some(composed), Some(last)) => {
                    last.folded = composed;
                    last.to = to;
                }
                _ => self.run.push(RunChar { from, to, folded }),
            }
        }
        fold_traditional(self.run);
        end
    }
}

/// Where the run goes on when the whitespace at byte `at` of `text`, after the run's character
/// `before`, is one line break between Chinese or Japanese characters (a hard-wrapped line, as
/// browsers join them): the byte offset of the character after it; `None` when it is a word
/// break. Korean separates words with spaces, so its lines break between words.
fn joined_line(text: &str, at: usize, before: char) -> Option<usize> {
    if !wraps_without_space(before) {
        return None;
    }
    let mut breaks = 0;
    for (offset, c) in text[at..].char_indices() {
        match c {
            '\n' => breaks += 1,
            c if is_line_space(c) => {}
            c if wraps_without_space(c) && breaks == 1 => return Some(at + offset),
            _ => return None,
        }
        if breaks > 1 {
            return None;
        }
    }
    None
}

/// Whether `c` is whitespace a wrapped line may have around its break (the break itself
/// aside): indentation, a carriage return.
pub(crate) fn is_line_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\u{3000}')
}

/// Whether a line break next to `c` (on both sides) is no word break: Chinese and Japanese
/// text, not Korean.
pub(crate) fn wraps_without_space(c: char) -> bool {
    is_cjk(c) && !is_hangul(c)
}

/// Whether `c` is Korean (Hangul syllables and jamo).
fn is_hangul(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF | 0x3131..=0x318E | 0xA960..=0xA97F | 0xAC00..=0xD7FF | 0xFFA0..=0xFFDC
    )
}

impl TokenStream for WordStream<'_> {
    fn advance(&mut self) -> bool {
        if self.advance_in_run() {
            return true;
        }
        if !self.run.is_empty() {
            self.position += self.run.len();
            self.run.clear();
        }
        let text = self.text;
        while let Some((offset, c)) = text[self.rest..].char_indices().next() {
            let start = self.rest + offset;
            if is_cjk(c) && self.skip_cjk {
                self.rest = start + c.len_utf8();
                continue;
            }
            if is_cjk(c) {
                self.rest = self.collect_run(start);
                self.next_in_run = Some((0, false));
                if self.advance_in_run() {
                    return true;
                }
                continue;
            }
            if !c.is_alphanumeric() {
                self.rest = start + c.len_utf8();
                continue;
            }
            let end = text[start..]
                .char_indices()
                .find(|&(_, c)| !c.is_alphanumeric() || is_cjk(c))
                .map_or(text.len(), |(o, _)| start + o);
            self.rest = end;
            if end - start >= 3 * MAX_WORD_BYTES {
                // Dropped by the analyzer anyway, however lowercasing shrinks it (3 bytes to 1
                // at most): not copied, as a hostile text may be one word.
                self.position += 1;
                continue;
            }
            self.token.text.clear();
            push_lowercase(&mut self.token.text, &text[start..end]);
            self.token.offset_from = start;
            self.token.offset_to = end;
            self.token.position = self.position;
            self.token.position_length = 1;
            self.position += 1;
            return true;
        }
        false
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

/// Appends `word` lowercased, character by character (CJK characters have no case, so their
/// tokens skip this).
fn push_lowercase(out: &mut String, word: &str) {
    if word.is_ascii() {
        out.push_str(word);
        out.make_ascii_lowercase();
    } else {
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
}

/// A character of a run in its usual form: half-width katakana, Hangul and `･` as full-width
/// (their compatibility mapping; a half-width voicing mark as the combining mark it stands for),
/// a CJK compatibility ideograph as the unified ideograph it is canonically equal to.
fn fold_form(c: char) -> char {
    let mut folded = c;
    match c as u32 {
        0xFF65..=0xFFDC => {
            unicode_normalization::char::decompose_compatible(c, |d| folded = d);
        }
        0xF900..=0xFAFF | 0x2F800..=0x2FA1F => {
            unicode_normalization::char::decompose_canonical(c, |d| folded = d);
        }
        _ => {}
    }
    folded
}

/// Folds the run's traditional Chinese characters to simplified ones, each on its own: the same
/// character folds the same way wherever it stands, in a document or in a query. (`fast2s`
/// converts a few characters by their neighbours, e.g. `乾` stays in `乾隆`; that would make a
/// query of the character alone miss it there, so each is converted between spaces.)
fn fold_traditional(run: &mut [RunChar]) {
    if !run.iter().any(|c| is_han(c.folded)) {
        return;
    }
    let spaced: String = run.iter().flat_map(|c| [c.folded, ' ']).collect();
    let simplified = fast2s::convert(&spaced);
    if simplified.chars().count() != run.len() * 2 {
        return;
    }
    for (c, s) in run.iter_mut().zip(simplified.chars().step_by(2)) {
        c.folded = s;
    }
}

/// Whether `c` is a Han character (Chinese characters, kanji, hanja).
fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x323AF
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (text, start, end, position) of each token.
    fn tokens(mut tokenizer: WordTokenizer, text: &str) -> Vec<(String, usize, usize, usize)> {
        let mut stream = tokenizer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            let t = stream.token();
            out.push((t.text.clone(), t.offset_from, t.offset_to, t.position));
        }
        out
    }

    fn texts(tokenizer: WordTokenizer, text: &str) -> Vec<String> {
        tokens(tokenizer, text).into_iter().map(|t| t.0).collect()
    }

    #[test]
    fn latin_words_are_runs_of_letters_and_digits() {
        assert_eq!(
            tokens(WordTokenizer::for_index(), "Hello, tax-payer 2026!"),
            [
                ("hello".to_owned(), 0, 5, 0),
                ("tax".to_owned(), 7, 10, 1),
                ("payer".to_owned(), 11, 16, 2),
                ("2026".to_owned(), 17, 21, 3),
            ]
        );
    }

    #[test]
    fn chinese_runs_become_characters_and_bigrams_when_indexed() {
        // 搜索引擎: 搜 搜索 索 索引 引 引擎 擎, each bigram at its first character's position.
        let got = tokens(WordTokenizer::for_index(), "用搜索");
        assert_eq!(
            got,
            [
                ("用".to_owned(), 0, 3, 0),
                ("用搜".to_owned(), 0, 6, 0),
                ("搜".to_owned(), 3, 6, 1),
                ("搜索".to_owned(), 3, 9, 1),
                ("索".to_owned(), 6, 9, 2),
            ]
        );
    }

    #[test]
    fn queries_use_bigrams_and_keep_single_characters() {
        assert_eq!(
            tokens(WordTokenizer::for_queries(), "搜索引"),
            [("搜索".to_owned(), 0, 6, 0), ("索引".to_owned(), 3, 9, 1)]
        );
        assert_eq!(texts(WordTokenizer::for_queries(), "猫"), ["猫"]);
    }

    #[test]
    fn scripts_split_where_they_meet_and_positions_stay_in_step() {
        // Index and query give `rust` and `x` the same positions around the run, so a phrase
        // across scripts matches.
        let index = tokens(WordTokenizer::for_index(), "Rust语言x");
        let positions: Vec<(&str, usize)> = index.iter().map(|t| (t.0.as_str(), t.3)).collect();
        assert_eq!(
            positions,
            [("rust", 0), ("语", 1), ("语言", 1), ("言", 2), ("x", 3)]
        );
        let query = tokens(WordTokenizer::for_queries(), "Rust语言x");
        let positions: Vec<(&str, usize)> = query.iter().map(|t| (t.0.as_str(), t.3)).collect();
        assert_eq!(positions, [("rust", 0), ("语言", 1), ("x", 3)]);
    }

    #[test]
    fn words_only_leaves_cjk_text_out() {
        assert_eq!(
            texts(WordTokenizer::words_only(), "Rust语言，東京 and 학교 2026"),
            ["rust", "and", "2026"]
        );
    }

    #[test]
    fn japanese_and_korean_runs_are_bigrams_too() {
        assert_eq!(
            texts(WordTokenizer::for_queries(), "東京タワー"),
            ["东京", "京タ", "タワ", "ワー"]
        );
        assert_eq!(
            texts(WordTokenizer::for_queries(), "학교에서 공부"),
            ["학교", "교에", "에서", "공부"]
        );
    }

    #[test]
    fn traditional_characters_fold_to_simplified() {
        assert_eq!(
            texts(WordTokenizer::for_queries(), "搜尋引擎"),
            texts(WordTokenizer::for_queries(), "搜寻引擎")
        );
        assert_eq!(texts(WordTokenizer::for_queries(), "軟體"), ["软体"]);
    }

    #[test]
    fn half_width_katakana_fold_to_full_width_with_their_marks() {
        let got = tokens(WordTokenizer::for_queries(), "ｶﾞｲﾄﾞ");
        assert_eq!(
            got.iter().map(|t| t.0.as_str()).collect::<Vec<_>>(),
            ["ガイ", "イド"]
        );
        // Offsets stay those of the original characters (ｶﾞ is two of them, 6 bytes).
        assert_eq!((got[0].1, got[0].2), (0, 9));
    }

    #[test]
    fn each_character_folds_the_same_way_wherever_it_stands() {
        // fast2s alone keeps 乾 in 乾隆 and folds it to 干 elsewhere: a query of the character
        // would then miss the name.
        assert_eq!(texts(WordTokenizer::for_queries(), "乾"), ["干"]);
        assert_eq!(
            texts(WordTokenizer::for_index(), "乾隆"),
            ["干", "干隆", "隆"]
        );
        assert_eq!(
            texts(WordTokenizer::for_queries(), "計畫書"),
            ["计画", "画书"]
        );
        assert_eq!(texts(WordTokenizer::for_queries(), "畫書"), ["画书"]);
    }

    #[test]
    fn decomposed_kana_and_hangul_are_their_composed_selves() {
        use unicode_normalization::UnicodeNormalization;
        for word in ["ガイドブック", "학교에서", "한국어"] {
            let decomposed: String = word.nfd().collect();
            assert_ne!(decomposed, word);
            assert_eq!(
                texts(WordTokenizer::for_queries(), &decomposed),
                texts(WordTokenizer::for_queries(), word),
                "{word}"
            );
        }
        // A compatibility ideograph is the unified one; the half-width middle dot the
        // full-width one, inside the run.
        assert_eq!(
            texts(WordTokenizer::for_queries(), "\u{F900}"),
            texts(WordTokenizer::for_queries(), "\u{8C48}")
        );
        assert_eq!(
            texts(WordTokenizer::for_queries(), "ｼﾞｮﾝ･ｽﾐｽ"),
            texts(WordTokenizer::for_queries(), "ジョン・スミス")
        );
    }

    #[test]
    fn a_word_too_long_to_index_is_skipped_and_keeps_its_place() {
        let text = format!("alpha {} omega", "x".repeat(500));
        let got = tokens(WordTokenizer::for_index(), &text);
        assert_eq!(
            got.iter().map(|t| (t.0.as_str(), t.3)).collect::<Vec<_>>(),
            [("alpha", 0), ("omega", 2)]
        );
    }

    #[test]
    fn a_line_break_inside_chinese_or_japanese_text_does_not_break_a_word() {
        let got = tokens(WordTokenizer::for_queries(), "全文搜\r\n   索引擎");
        assert_eq!(got[2], ("搜索".to_owned(), 6, 17, 2));
        assert_eq!(
            texts(WordTokenizer::for_queries(), "進数の\n乱数"),
            ["进数", "数の", "の乱", "乱数"]
        );
        // A blank line, a space within a line, and Korean lines are breaks.
        assert_eq!(
            texts(WordTokenizer::for_queries(), "中文\n\n日文"),
            ["中文", "日文"]
        );
        assert_eq!(
            texts(WordTokenizer::for_queries(), "中文 日文"),
            ["中文", "日文"]
        );
        assert_eq!(
            texts(WordTokenizer::for_queries(), "학교\n공부"),
            ["학교", "공부"]
        );
    }

    #[test]
    fn a_run_without_end_is_read_in_bounded_pieces() {
        let text = "字".repeat(MAX_RUN * 3 + 5);
        let got = tokens(WordTokenizer::for_index(), &text);
        // Every character, and every pair but the three across the cuts.
        assert_eq!(got.len(), (MAX_RUN * 3 + 5) * 2 - 1 - 3);
        let last = got.last().expect("tokens");
        assert_eq!((last.2, last.3), (text.len(), MAX_RUN * 3 + 4));
    }

    #[test]
    fn punctuation_between_runs_separates_them() {
        assert_eq!(
            texts(WordTokenizer::for_queries(), "中文，日本語。"),
            ["中文", "日本", "本语"]
        );
    }
}
