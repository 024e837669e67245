//! The tantivy schema, and the text analysis shared by indexing and queries.

use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer,
};

use quarry_core::script::is_cjk;

use crate::tokenizer::{MAX_WORD_BYTES, WordTokenizer};

/// Name under which [`analyzer`] is registered with the index.
pub(crate) const ANALYZER: &str = "quarry_words";

/// Words as the index keeps them: runs of letters and digits, and in Chinese, Japanese and
/// Korean text each character and each pair of characters ([`crate::tokenizer`]); lowercased,
/// accents and full-width forms folded (`Café`, `cafe` and `ｃａｆｅ` match), words over 40
/// bytes dropped.
pub(crate) fn analyzer() -> TextAnalyzer {
    words_analyzer(WordTokenizer::for_index())
}

/// Words as queries look for them: as [`analyzer`], but a CJK word of several characters is
/// its pairs of characters only (a phrase of them).
pub(crate) fn query_analyzer() -> TextAnalyzer {
    words_analyzer(WordTokenizer::for_queries())
}

/// The tokenizer lowercases words itself (see [`crate::tokenizer`]).
fn words_analyzer(tokenizer: WordTokenizer) -> TextAnalyzer {
    TextAnalyzer::builder(tokenizer)
        .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
        .filter(AsciiFoldingFilter)
        .build()
}

/// Name under which [`stems_analyzer`] is registered with the index.
pub(crate) const STEMS_ANALYZER: &str = "quarry_stems";

/// Words for ranking: as [`analyzer`] without CJK text (ranked by its pairs of characters in
/// the text fields) and without English stop words, reduced to their stems (Snowball), so
/// `flows` counts towards `flow`.
pub(crate) fn stems_analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(WordTokenizer::words_only())
        .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
        .filter(AsciiFoldingFilter)
        .dynamic();
    let builder = match StopWordFilter::new(Language::English) {
        Some(stop) => builder.filter_dynamic(stop),
        None => builder,
    };
    builder
        .filter_dynamic(Stemmer::new(Language::English))
        .build()
}

/// True when every word of `text` is an English stop word (and it has words).
pub(crate) fn only_stop_words(text: &str) -> bool {
    let all = words(&mut query_analyzer(), text);
    !all.is_empty()
        && !all.iter().any(|w| is_cjk_token(w))
        && words(&mut stems_analyzer(), text).is_empty()
}

/// Whether an analyzed token is Chinese, Japanese or Korean (a character or a pair of them).
pub(crate) fn is_cjk_token(token: &str) -> bool {
    token.chars().next().is_some_and(is_cjk)
}

/// The fields of the schema.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    /// `connector_id/doc_id`: the handle for replacing and deleting a document.
    pub key: Field,
    pub connector: Field,
    pub doc_id: Field,
    pub title: Field,
    pub path: Field,
    /// The text, searchable (not stored: see `text`).
    pub body: Field,
    /// The stored text: its first part in a document, a later part in a part document.
    pub text: Field,
    /// Where the text's later parts start, as little-endian u32s (`text_parts`).
    pub parts: Field,
    /// A part document's own key (`connector/doc#n`).
    pub part_key: Field,
    /// A part document's document (its `key`), for replacing and deleting them together.
    pub part_of: Field,
    /// A part document's connector, for removing a connector's documents.
    pub part_connector: Field,
    /// Lowercase file extension without the dot, or empty.
    pub ext: Field,
    pub mime: Field,
    pub url: Field,
    pub size: Field,
    /// Last modification, milliseconds since the Unix epoch.
    pub updated: Field,
    /// Byte offsets where pages start, as little-endian u32s.
    pub pages: Field,
    /// Connector metadata, a JSON object of strings.
    pub meta: Field,
    /// The passages' vectors, quantised ([`crate::vectors::Embedding`]'s encoding).
    pub vectors: Field,
    /// The passages' byte ranges in the text, as little-endian u32 pairs.
    pub passages: Field,
    /// The id of the model that made `vectors` (absent when the document has none).
    pub model: Field,
    /// Title and body as stems, for ranking (not stored).
    pub stems: Field,
    /// A number the writer gives each version of a document it writes (larger for later
    /// writes), so vectors computed from one version are never stored over another.
    pub revision: Field,
}

impl Fields {
    /// Name of `connector`, which only documents have (not the parts of their texts).
    pub(crate) const CONNECTOR: &'static str = "connector";
    /// Name of `updated`, read as a fast field for sorting by update time.
    pub(crate) const UPDATED: &'static str = "updated";
    /// Name of `vectors`, read as a fast field by semantic ranking.
    pub(crate) const VECTORS: &'static str = "vectors";
    /// Name of `revision`, read as a fast field.
    pub(crate) const REVISION: &'static str = "revision";

    /// The schema and its fields.
    pub(crate) fn schema() -> (Schema, Fields) {
        let mut builder = Schema::builder();
        let indexed_words = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(ANALYZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        let words = indexed_words.clone().set_stored();
        let fields = Fields {
            key: builder.add_text_field("key", STRING),
            connector: builder.add_text_field(Fields::CONNECTOR, STRING | FAST | STORED),
            doc_id: builder.add_text_field("doc_id", STRING | STORED),
            title: builder.add_text_field("title", words.clone()),
            path: builder.add_text_field("path", words.clone()),
            body: builder.add_text_field("body", indexed_words),
            text: builder.add_text_field("text", STORED),
            parts: builder.add_bytes_field("parts", STORED),
            part_key: builder.add_text_field("part_key", STRING),
            part_of: builder.add_text_field("part_of", STRING),
            part_connector: builder.add_text_field("part_connector", STRING),
            ext: builder.add_text_field("ext", STRING | FAST | STORED),
            mime: builder.add_text_field("mime", STRING | FAST | STORED),
            url: builder.add_text_field("url", STORED),
            size: builder.add_u64_field("size", FAST | STORED),
            updated: builder.add_i64_field(Fields::UPDATED, INDEXED | FAST | STORED),
            pages: builder.add_bytes_field("pages", STORED),
            meta: builder.add_text_field("meta", STORED),
            vectors: builder.add_bytes_field(Fields::VECTORS, FAST),
            passages: builder.add_bytes_field("passages", STORED),
            model: builder.add_text_field("model", STRING),
            stems: builder.add_text_field(
                "stems",
                TextOptions::default().set_indexing_options(
                    TextFieldIndexing::default()
                        .set_tokenizer(STEMS_ANALYZER)
                        .set_index_option(IndexRecordOption::WithFreqs),
                ),
            ),
            revision: builder.add_u64_field(Fields::REVISION, FAST),
        };
        (builder.build(), fields)
    }

    /// The fields a query's words are looked for in, with their boosts.
    pub(crate) fn searched(&self) -> [(Field, f32); 3] {
        [(self.title, 2.0), (self.body, 1.0), (self.path, 0.5)]
    }
}

/// The words of `text`, as `analyzer` sees them.
pub(crate) fn words(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    positioned_words(analyzer, text)
        .into_iter()
        .map(|(_, word)| word)
        .collect()
}

/// The words of `text` with their positions, counted from the first word's (a phrase's words
/// need not be one apart: a CJK word's last character has no pair of its own in a query).
pub(crate) fn positioned_words(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(usize, String)> {
    let mut stream = analyzer.token_stream(text);
    let mut out: Vec<(usize, String)> = Vec::new();
    while let Some(token) = stream.next() {
        out.push((token.position, token.text.clone()));
    }
    let first = out.first().map_or(0, |(p, _)| *p);
    for (position, _) in &mut out {
        *position = position.saturating_sub(first);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lowercased_and_accent_folded() {
        let mut a = analyzer();
        assert_eq!(
            words(&mut a, "Café CRÈME, e-mail 2026!"),
            ["cafe", "creme", "e", "mail", "2026"]
        );
        assert!(words(&mut a, "--- ...").is_empty());
    }

    #[test]
    fn stems_drop_stop_words_and_endings() {
        assert_eq!(
            words(&mut stems_analyzer(), "The flows of Heated plates"),
            ["flow", "heat", "plate"]
        );
        assert!(only_stop_words("it is the"));
        assert!(!only_stop_words("what flows"));
        assert!(!only_stop_words("..."));
    }
}
