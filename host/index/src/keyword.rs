//! Keyword queries and their ranking, as the API defines them: every result contains at least
//! one query word, results with all of them rank first (then BM25), quoted phrases are required
//! as written, and excluded words or phrases rule a document out. Filters apply inside the query.
//! Ranking: the relevance order (two tiers) or the update-time order, windows of either, and
//! each hit's relevance in [0, 1).

use std::ops::Bound;

use tantivy::collector::sort_key::SortBySimilarityScore;
use tantivy::collector::{Count, TopDocs};
use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, DisjunctionMaxQuery, EnableScoring, Occur,
    PhraseQuery, Query, RangeQuery, Scorer, TermQuery, TermSetQuery, Weight,
};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, DocSet, Order, Searcher, Term};

use crate::IndexError;
use crate::query_syntax::Part;
use crate::request::{Filters, SearchRequest, SortBy, SortOrder};
use crate::schema::{
    Fields, is_cjk_token, only_stop_words, positioned_words, stems_analyzer, words,
};

/// How much a match in a second field adds to the best field's score.
const TIE_BREAKER: f32 = 0.3;

/// BM25 scores are mapped to (0, 1) with s / (s + this).
const SCORE_HALF: f32 = 8.0;

/// A query compiled into the two tantivy queries of the ranking tiers.
pub(crate) struct Compiled {
    /// Documents with at least one word (and every phrase, no exclusion, the filters), scored
    /// for ranking.
    pub any: Box<dyn Query>,
    /// Documents with every word, scored the same way. `None` when that is the same set as `any`.
    pub all: Option<Box<dyn Query>>,
    /// Documents that pass the filters, contain every phrase and no exclusion, whatever their
    /// words: the documents semantic ranking may return.
    pub allowed: Box<dyn Query>,
    /// The words as written (what snippets highlight).
    pub literal: Box<dyn Query>,
    /// The query's Chinese, Japanese and Korean words, each as its pairs of characters: a
    /// snippet highlights such a word only where it is whole ([`crate::snippet`]).
    pub cjk_words: Vec<Vec<String>>,
    /// The words a result must have one of, as index terms (a fused search's title weight
    /// looks for them in titles).
    pub words: Vec<Tokens>,
    /// The stems that rank, with how often the query has each.
    pub stems: Vec<(String, f32)>,
    /// The CJK pairs of characters that rank, counted likewise.
    pub pairs: Vec<(String, f32)>,
}

/// A ranked document: where it is, its relevance in [0, 1], and for a semantic match the index
/// of its best passage.
pub(crate) struct Ranked {
    pub address: DocAddress,
    pub score: f32,
    pub passage: Option<usize>,
}

/// The page of a ranking a request asks for, and how many documents the ranking has in all.
pub(crate) struct Page {
    pub ranked: Vec<Ranked>,
    pub total: u64,
}

/// Clauses of a `BooleanQuery`.
type Clauses = Vec<(Occur, Box<dyn Query>)>;

/// A word or phrase as index terms, each with its position in the phrase.
pub(crate) type Tokens = Vec<(usize, String)>;

/// Compiles the parts of a query; `None` when nothing positive is left to look for (only
/// exclusions, or words the analyzer drops such as punctuation).
///
/// Matching is literal: a result contains a query word as written (case and accents aside).
/// English stop words (`the`, `of`, `what`...) neither make a document match nor are needed for
/// the all-words tier, unless the query has nothing else. Within a tier, documents are ranked
/// by BM25 over the stems of title and text (one field), so `flows` also counts for `flow`, and
/// CJK words by BM25 over their pairs of characters in title and text.
pub(crate) fn compile(
    parts: &[Part],
    filters: &Filters,
    fields: &Fields,
    analyzer: &mut TextAnalyzer,
) -> Option<Compiled> {
    let Analysed {
        words,
        phrases,
        excluded,
        stems,
        pairs,
    } = analyse(parts, analyzer);
    if words.is_empty() && phrases.is_empty() {
        return None;
    }
    let cjk_words = cjk_sequences(words.iter().map(|(tokens, _)| tokens).chain(&phrases));
    let words = drop_stop_words(words, !phrases.is_empty());
    let common = common_clauses(&phrases, &excluded, filters, fields);
    let literal = any_word(&words, &common, fields);
    let all = (words.len() > 1).then(|| with_common(units(Occur::Must, &words, fields), &common));
    let ranked = |matching| scored_by_stems(matching, &stems, &pairs, fields);
    Some(Compiled {
        any: ranked(literal.box_clone()),
        all: all.map(ranked),
        allowed: with_common(Vec::new(), &common),
        literal,
        cjk_words,
        words,
        stems,
        pairs,
    })
}

/// The runs of CJK tokens of each word or phrase (tokens one position apart), as their texts.
pub(crate) fn cjk_sequences<'a>(units: impl Iterator<Item = &'a Tokens>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for tokens in units {
        let mut run: Vec<String> = Vec::new();
        let mut last = None;
        for (position, token) in tokens {
            let cjk = is_cjk_token(token);
            let continues_run = cjk && last.is_some_and(|p| p + 1 == *position);
            if !(run.is_empty() || continues_run) {
                out.push(std::mem::take(&mut run));
            }
            if cjk {
                run.push(token.clone());
            }
            last = Some(*position);
        }
        if !run.is_empty() {
            out.push(run);
        }
    }
    out
}

/// A query's parts as the index sees them (parts the analyzer leaves nothing of are gone).
struct Analysed {
    /// The words' tokens, each with whether it is only stop words.
    words: Vec<(Tokens, bool)>,
    phrases: Vec<Tokens>,
    excluded: Vec<Tokens>,
    /// Stems of the words and phrases, and how often the query has them (a repeated word weighs
    /// more, as in BM25).
    stems: Vec<(String, f32)>,
    /// The CJK tokens of the words and phrases (pairs of characters, or one), counted likewise:
    /// the stems leave CJK text out, so these rank it.
    pairs: Vec<(String, f32)>,
}

fn analyse(parts: &[Part], analyzer: &mut TextAnalyzer) -> Analysed {
    let mut out = Analysed {
        words: Vec::new(),
        phrases: Vec::new(),
        excluded: Vec::new(),
        stems: Vec::new(),
        pairs: Vec::new(),
    };
    let mut stemmer = stems_analyzer();
    for part in parts {
        let text = match part {
            Part::Word(t) | Part::Phrase(t) | Part::Exclude(t) => t,
        };
        let tokens = positioned_words(analyzer, text);
        if tokens.is_empty() {
            continue;
        }
        if !matches!(part, Part::Exclude(_)) {
            count_stems(&mut out.stems, words(&mut stemmer, text));
            let pairs = tokens.iter().map(|(_, t)| t).filter(|t| is_cjk_token(t));
            count_stems(&mut out.pairs, pairs.cloned().collect());
        }
        match part {
            Part::Word(_) => out.words.push((tokens, only_stop_words(text))),
            Part::Phrase(_) => out.phrases.push(tokens),
            Part::Exclude(_) => out.excluded.push(tokens),
        }
    }
    out
}

/// Adds `new` stems to the counted ones.
fn count_stems(counted: &mut Vec<(String, f32)>, new: Vec<String>) {
    for stem in new {
        match counted.iter_mut().find(|(s, _)| *s == stem) {
            Some((_, n)) => *n += 1.0,
            None => counted.push((stem, 1.0)),
        }
    }
}

/// The words a result must have one of: stop words only count when the query has nothing else
/// (no phrase, no other word).
fn drop_stop_words(words: Vec<(Tokens, bool)>, has_phrases: bool) -> Vec<Tokens> {
    let has_content = has_phrases || words.iter().any(|(_, stop)| !stop);
    words
        .into_iter()
        .filter(|(_, stop)| !has_content || !stop)
        .map(|(tokens, _)| tokens)
        .collect()
}

/// What every query of a search requires: its phrases, none of its exclusions, the filters
/// (scoring nothing).
fn common_clauses(
    phrases: &[Tokens],
    excluded: &[Tokens],
    filters: &Filters,
    fields: &Fields,
) -> Clauses {
    let mut common = units(Occur::Must, phrases, fields);
    common.extend(units(Occur::MustNot, excluded, fields));
    for filter in filter_queries(filters, fields) {
        common.push((Occur::Must, Box::new(ConstScoreQuery::new(filter, 0.0))));
    }
    common
}

/// `clauses` and the common ones, as one query.
fn with_common(mut clauses: Clauses, common: &Clauses) -> Box<dyn Query> {
    clauses.extend(common.iter().map(|(o, q)| (*o, q.box_clone())));
    Box::new(BooleanQuery::new(clauses))
}

/// Documents with at least one of `words` as written (and the common clauses).
fn any_word(words: &[Tokens], common: &Clauses, fields: &Fields) -> Box<dyn Query> {
    match words {
        [] => with_common(Vec::new(), common),
        [word] => with_common(vec![(Occur::Must, unit(fields, word))], common),
        _ => {
            let any = BooleanQuery::new(units(Occur::Should, words, fields));
            with_common(vec![(Occur::Must, Box::new(any))], common)
        }
    }
}

/// The documents of `matching`, scored by BM25 over the stems and, for CJK words, over their
/// pairs of characters in title and text: the literal query decides which documents match,
/// adding nothing to the score.
pub(crate) fn scored_by_stems(
    matching: Box<dyn Query>,
    stems: &[(String, f32)],
    pairs: &[(String, f32)],
    fields: &Fields,
) -> Box<dyn Query> {
    if stems.is_empty() && pairs.is_empty() {
        return matching;
    }
    let weighted = |field, text: &str, count: f32| {
        let term: Box<dyn Query> = Box::new(TermQuery::new(
            Term::from_field_text(field, text),
            IndexRecordOption::WithFreqs,
        ));
        (
            Occur::Should,
            Box::new(BoostQuery::new(term, count)) as Box<dyn Query>,
        )
    };
    let by_stems: Clauses = stems
        .iter()
        .map(|(stem, count)| weighted(fields.stems, stem, *count))
        .chain(pairs.iter().flat_map(|(pair, count)| {
            [fields.title, fields.body].map(|field| weighted(field, pair, *count))
        }))
        .collect();
    Box::new(BooleanQuery::new(vec![
        (Occur::Must, Box::new(ConstScoreQuery::new(matching, 0.0))),
        (Occur::Should, Box::new(BooleanQuery::new(by_stems))),
    ]))
}

/// Each word or phrase of `units` as a clause that `occur`s.
fn units(occur: Occur, units: &[Tokens], fields: &Fields) -> Clauses {
    units
        .iter()
        .map(|tokens| (occur, unit(fields, tokens)))
        .collect()
}

/// One word (one token) or phrase (several, at their positions), looked for in every searched
/// field; the best field's score counts, the others add a little.
fn unit(fields: &Fields, tokens: &[(usize, String)]) -> Box<dyn Query> {
    let per_field: Vec<Box<dyn Query>> = fields
        .searched()
        .into_iter()
        .map(|(field, boost)| {
            let query: Box<dyn Query> = match tokens {
                [(_, single)] => Box::new(TermQuery::new(
                    Term::from_field_text(field, single),
                    IndexRecordOption::WithFreqs,
                )),
                _ => Box::new(PhraseQuery::new_with_offset(
                    tokens
                        .iter()
                        .map(|(position, t)| (*position, Term::from_field_text(field, t)))
                        .collect(),
                )),
            };
            Box::new(BoostQuery::new(query, boost)) as Box<dyn Query>
        })
        .collect();
    Box::new(DisjunctionMaxQuery::with_tie_breaker(
        per_field,
        TIE_BREAKER,
    ))
}

/// The filters as queries (each a required clause).
pub(crate) fn filter_queries(filters: &Filters, fields: &Fields) -> Vec<Box<dyn Query>> {
    let mut out = vec![one_of(
        filters
            .connectors
            .iter()
            .map(|c| Term::from_field_text(fields.connector, c.as_str()))
            .collect(),
    )];
    if filters.updated_from_ms.is_some() || filters.updated_to_ms.is_some() {
        let bound = |ms: Option<i64>, included: bool| match ms {
            Some(ms) if included => Bound::Included(Term::from_field_i64(fields.updated, ms)),
            Some(ms) => Bound::Excluded(Term::from_field_i64(fields.updated, ms)),
            None => Bound::Unbounded,
        };
        out.push(Box::new(RangeQuery::new(
            bound(filters.updated_from_ms, true),
            bound(filters.updated_to_ms, false),
        )));
    }
    if let Some(extensions) = &filters.extensions {
        out.push(one_of(
            extensions
                .iter()
                .map(|e| Term::from_field_text(fields.ext, &e.to_lowercase()))
                .collect(),
        ));
    }
    out
}

/// Terms of a filter that are looked up one by one rather than through a term set: a term set
/// builds an FST per search (its builder alone allocates thousands of cells), which cost a
/// fifth of a search's CPU for a one-connector filter.
const FEW_TERMS: usize = 64;

/// Documents with any of `terms` (the filter's scores are not used).
fn one_of(mut terms: Vec<Term>) -> Box<dyn Query> {
    match terms.len() {
        1 => Box::new(TermQuery::new(terms.remove(0), IndexRecordOption::Basic)),
        2..=FEW_TERMS => Box::new(BooleanQuery::new(
            terms
                .into_iter()
                .map(|t| {
                    let query: Box<dyn Query> =
                        Box::new(TermQuery::new(t, IndexRecordOption::Basic));
                    (Occur::Should, query)
                })
                .collect(),
        )),
        _ => Box::new(TermSetQuery::new(terms)),
    }
}

/// The page of the keyword ranking that `request` asks for: its order, its window, the exact
/// total.
pub(crate) fn page(
    searcher: &Searcher,
    compiled: &Compiled,
    request: &SearchRequest,
) -> Result<Page, IndexError> {
    let total = searcher.search(&*compiled.any, &Count)?;
    let limit = request.limit.max(1);
    let ranked = match request.sort_by {
        SortBy::Relevance => by_relevance(
            searcher,
            &*compiled.any,
            compiled.all.as_deref(),
            Window::new(total, request.offset, limit, request.order),
        )?,
        SortBy::UpdateTime => by_time(searcher, compiled, request.offset, limit, request.order)?,
    };
    Ok(Page {
        ranked: ranked
            .into_iter()
            .map(|(address, score)| Ranked {
                address,
                score,
                passage: None,
            })
            .collect(),
        total: total as u64,
    })
}

/// The first `limit` documents of the relevance order of `any` (the documents with at least
/// one word) and `all` (those with every word), best first, with their scores in [0, 1).
pub(crate) fn best(
    searcher: &Searcher,
    any: &dyn Query,
    all: Option<&dyn Query>,
    limit: usize,
) -> Result<Vec<(DocAddress, f32)>, IndexError> {
    let window = Window {
        start: 0,
        len: limit,
        reversed: false,
    };
    by_relevance(searcher, any, all, window)
}

/// Where a page lies in the descending relevance order: `len` documents from `start`, reversed
/// for an ascending page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Window {
    start: usize,
    len: usize,
    reversed: bool,
}

impl Window {
    /// The window `[offset, offset + limit)` of `order` over `total` documents. Ascending order is
    /// the descending order reversed, so its window is taken from the other end.
    fn new(total: usize, offset: usize, limit: usize, order: SortOrder) -> Window {
        match order {
            SortOrder::Descending => Window {
                start: offset,
                len: limit,
                reversed: false,
            },
            SortOrder::Ascending => {
                let end = total.saturating_sub(offset);
                let start = end.saturating_sub(limit);
                Window {
                    start,
                    len: end - start,
                    reversed: true,
                }
            }
        }
    }
}

/// A window of the relevance order: documents with every word first (tier 1), then the others
/// (tier 2), each by BM25.
fn by_relevance(
    searcher: &Searcher,
    any: &dyn Query,
    all: Option<&dyn Query>,
    Window {
        start,
        len,
        reversed,
    }: Window,
) -> Result<Vec<(DocAddress, f32)>, IndexError> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let mut window = Vec::with_capacity(len);
    match all {
        None => window.extend(top(searcher, any, start, len, true)?),
        Some(all) => {
            let tier1 = searcher.search(all, &Count)?;
            if start < tier1 {
                window.extend(top(searcher, all, start, len.min(tier1 - start), true)?);
            }
            if window.len() < len {
                let rest: Box<dyn Query> = Box::new(BooleanQuery::new(vec![
                    (Occur::Must, any.box_clone()),
                    (Occur::MustNot, all.box_clone()),
                ]));
                let skip = start.saturating_sub(tier1);
                window.extend(top(searcher, &*rest, skip, len - window.len(), false)?);
            }
        }
    }
    if reversed {
        window.reverse();
    }
    Ok(window)
}

/// Top documents by score, with their scores mapped into their tier's half of [0, 1).
fn top(
    searcher: &Searcher,
    query: &dyn Query,
    offset: usize,
    limit: usize,
    tier1: bool,
) -> Result<Vec<(DocAddress, f32)>, IndexError> {
    Ok(scored(searcher, query, offset, limit)?
        .into_iter()
        .map(|(address, score)| (address, tiered_score(score, tier1)))
        .collect())
}

/// `limit` documents of `query` from `offset` by its score alone (BM25), best first, with it.
pub(crate) fn scored(
    searcher: &Searcher,
    query: &dyn Query,
    offset: usize,
    limit: usize,
) -> Result<Vec<(DocAddress, f32)>, IndexError> {
    let docs = searcher.search(
        query,
        &TopDocs::with_limit(limit.max(1))
            .and_offset(offset)
            .order_by((SortBySimilarityScore, Order::Desc)),
    )?;
    Ok(docs
        .into_iter()
        .map(|(score, address)| (address, score))
        .collect())
}

/// The window of the update-time order; each hit's relevance is computed for its score: its
/// score under `any`, and whether it is in `all` (tier 1).
fn by_time(
    searcher: &Searcher,
    compiled: &Compiled,
    offset: usize,
    limit: usize,
    order: SortOrder,
) -> Result<Vec<(DocAddress, f32)>, IndexError> {
    let order = match order {
        SortOrder::Descending => Order::Desc,
        SortOrder::Ascending => Order::Asc,
    };
    let docs: Vec<(Option<i64>, DocAddress)> = searcher.search(
        &*compiled.any,
        &TopDocs::with_limit(limit.max(1))
            .and_offset(offset)
            .order_by_fast_field::<i64>(Fields::UPDATED, order),
    )?;
    let addresses: Vec<DocAddress> = docs.into_iter().map(|(_, address)| address).collect();
    let scoring = EnableScoring::enabled_from_searcher(searcher);
    let any = compiled.any.weight(scoring)?;
    let tier1 = match &compiled.all {
        Some(all) => matches_of(searcher, &*all.weight(scoring)?, &addresses)?,
        None => vec![true; addresses.len()],
    };
    Ok(addresses
        .into_iter()
        .zip(tier1)
        .map(|(address, tier1)| {
            let segment = searcher.segment_reader(address.segment_ord);
            let score = any
                .explain(segment, address.doc_id)
                .map_or(0.0, |e| e.value());
            (address, tiered_score(score, tier1))
        })
        .collect())
}

/// Whether each of `addresses` matches `weight`'s query. A segment's scorer is only ever moved
/// forward, as tantivy requires, so the addresses are visited in index order.
fn matches_of(
    searcher: &Searcher,
    weight: &dyn Weight,
    addresses: &[DocAddress],
) -> Result<Vec<bool>, IndexError> {
    let mut in_order: Vec<(usize, DocAddress)> = addresses.iter().copied().enumerate().collect();
    in_order.sort_by_key(|(_, a)| (a.segment_ord, a.doc_id));
    let mut found = vec![false; addresses.len()];
    let mut scorer: Option<(u32, Box<dyn Scorer>)> = None;
    for (position, address) in in_order {
        if scorer
            .as_ref()
            .is_none_or(|(segment, _)| *segment != address.segment_ord)
        {
            let reader = searcher.segment_reader(address.segment_ord);
            scorer = Some((address.segment_ord, weight.scorer(reader, 1.0)?));
        }
        if let Some((_, s)) = scorer.as_mut() {
            let doc = if s.doc() < address.doc_id {
                s.seek(address.doc_id)
            } else {
                s.doc()
            };
            found[position] = doc == address.doc_id;
        }
    }
    Ok(found)
}

/// Maps a BM25 score into [0.5, 1) for tier 1 and [0, 0.5) for tier 2, so that scores never
/// increase down a relevance-ordered list.
fn tiered_score(bm25: f32, tier1: bool) -> f32 {
    let unit = if bm25 > 0.0 {
        bm25 / (bm25 + SCORE_HALF)
    } else {
        0.0
    };
    if tier1 { 0.5 + unit / 2.0 } else { unit / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tier_one_always_scores_above_tier_two() {
        assert!(tiered_score(0.01, true) >= 0.5);
        assert!(tiered_score(1e9, false) <= 0.5);
        assert!(tiered_score(3.0, true) < tiered_score(4.0, true));
        assert_eq!(tiered_score(0.0, false), 0.0);
    }

    #[test]
    fn an_ascending_window_is_taken_from_the_end() {
        let w = Window::new(10, 2, 3, SortOrder::Ascending);
        assert_eq!((w.start, w.len, w.reversed), (5, 3, true));
        let w = Window::new(10, 9, 5, SortOrder::Ascending);
        assert_eq!((w.start, w.len), (0, 1));
        assert_eq!(Window::new(3, 5, 2, SortOrder::Ascending).len, 0);
        let w = Window::new(10, 2, 3, SortOrder::Descending);
        assert_eq!((w.start, w.len, w.reversed), (2, 3, false));
    }
}
