//! Keyword queries as the API defines them: every result contains at least one query word,
//! results with all of them rank first (then BM25), quoted phrases are required as written, and
//! excluded words or phrases rule a document out. Filters apply inside the query.

use std::ops::Bound;

use quarry_core::ConnectorId;
use tantivy::Term;
use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, DisjunctionMaxQuery, Occur, PhraseQuery, Query,
    RangeQuery, TermQuery, TermSetQuery,
};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TextAnalyzer;

use crate::query_syntax::Part;
use crate::schema::{Fields, only_stop_words, stems_analyzer, words};

/// How much a match in a second field adds to the best field's score.
const TIE_BREAKER: f32 = 0.3;

/// What results must satisfy besides the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filters {
    /// Only these connectors (never empty: callers pass the connectors the caller may see).
    pub connectors: Vec<ConnectorId>,
    /// Update time from (inclusive), milliseconds since the Unix epoch.
    pub updated_from_ms: Option<i64>,
    /// Update time to (exclusive).
    pub updated_to_ms: Option<i64>,
    /// Only these extensions, lowercase without the dot.
    pub extensions: Option<Vec<String>>,
}

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
}

/// Compiles the parts of a query; `None` when nothing positive is left to look for (only
/// exclusions, or words the analyzer drops such as punctuation).
///
/// Matching is literal: a result contains a query word as written (case and accents aside).
/// English stop words (`the`, `of`, `what`...) neither make a document match nor are needed for
/// the all-words tier, unless the query has nothing else. Within a tier, documents are ranked
/// by BM25 over the stems of title and text (one field), so `flows` also counts for `flow`.
pub(crate) fn compile(
    parts: &[Part],
    filters: &Filters,
    fields: &Fields,
    analyzer: &mut TextAnalyzer,
) -> Option<Compiled> {
    let mut optional = Vec::new();
    let mut required = Vec::new();
    let mut excluded = Vec::new();
    // Stems and how often the query has them (a repeated word weighs more, as in BM25).
    let mut stems: Vec<(String, f32)> = Vec::new();
    let mut stemmer = stems_analyzer();
    for part in parts {
        let text = match part {
            Part::Word(t) | Part::Phrase(t) | Part::Exclude(t) => t,
        };
        let tokens = words(analyzer, text);
        if tokens.is_empty() {
            continue;
        }
        if !matches!(part, Part::Exclude(_)) {
            for stem in words(&mut stemmer, text) {
                match stems.iter_mut().find(|(s, _)| *s == stem) {
                    Some((_, n)) => *n += 1.0,
                    None => stems.push((stem, 1.0)),
                }
            }
        }
        match part {
            Part::Word(_) => optional.push((tokens, only_stop_words(text))),
            Part::Phrase(_) => required.push(tokens),
            Part::Exclude(_) => excluded.push(tokens),
        }
    }
    if optional.is_empty() && required.is_empty() {
        return None;
    }
    let has_content = !required.is_empty() || optional.iter().any(|(_, stop)| !stop);
    let optional: Vec<Vec<String>> = optional
        .into_iter()
        .filter(|(_, stop)| !has_content || !stop)
        .map(|(tokens, _)| tokens)
        .collect();
    let mut common: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for tokens in &required {
        common.push((Occur::Must, unit(fields, tokens)));
    }
    for tokens in &excluded {
        common.push((Occur::MustNot, unit(fields, tokens)));
    }
    for filter in filter_queries(filters, fields) {
        common.push((Occur::Must, Box::new(ConstScoreQuery::new(filter, 0.0))));
    }

    let with_common = |mut clauses: Vec<(Occur, Box<dyn Query>)>| -> Box<dyn Query> {
        clauses.extend(common.iter().map(|(o, q)| (*o, q.box_clone())));
        Box::new(BooleanQuery::new(clauses))
    };
    let literal = match optional.len() {
        0 => with_common(Vec::new()),
        1 => with_common(vec![(Occur::Must, unit(fields, &optional[0]))]),
        _ => {
            let words: Vec<(Occur, Box<dyn Query>)> = optional
                .iter()
                .map(|tokens| (Occur::Should, unit(fields, tokens)))
                .collect();
            with_common(vec![(Occur::Must, Box::new(BooleanQuery::new(words)))])
        }
    };
    let all = (optional.len() > 1).then(|| {
        with_common(
            optional
                .iter()
                .map(|tokens| (Occur::Must, unit(fields, tokens)))
                .collect(),
        )
    });
    // Scored by the stems: the literal query decides which documents match, adding nothing.
    let ranked = |matching: Box<dyn Query>| -> Box<dyn Query> {
        if stems.is_empty() {
            return matching;
        }
        let by_stems: Vec<(Occur, Box<dyn Query>)> = stems
            .iter()
            .map(|(stem, count)| {
                let term: Box<dyn Query> = Box::new(TermQuery::new(
                    Term::from_field_text(fields.stems, stem),
                    IndexRecordOption::WithFreqs,
                ));
                (
                    Occur::Should,
                    Box::new(BoostQuery::new(term, *count)) as Box<dyn Query>,
                )
            })
            .collect();
        Box::new(BooleanQuery::new(vec![
            (Occur::Must, Box::new(ConstScoreQuery::new(matching, 0.0))),
            (Occur::Should, Box::new(BooleanQuery::new(by_stems))),
        ]))
    };
    Some(Compiled {
        any: ranked(literal.box_clone()),
        all: all.map(ranked),
        allowed: with_common(Vec::new()),
        literal,
    })
}

/// One word (one token) or phrase (several), looked for in every searched field; the best
/// field's score counts, the others add a little.
fn unit(fields: &Fields, tokens: &[String]) -> Box<dyn Query> {
    let per_field: Vec<Box<dyn Query>> = fields
        .searched()
        .into_iter()
        .map(|(field, boost)| {
            let query: Box<dyn Query> = match tokens {
                [single] => Box::new(TermQuery::new(
                    Term::from_field_text(field, single),
                    IndexRecordOption::WithFreqs,
                )),
                _ => Box::new(PhraseQuery::new(
                    tokens
                        .iter()
                        .map(|t| Term::from_field_text(field, t))
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
    let mut out: Vec<Box<dyn Query>> =
        vec![Box::new(TermSetQuery::new(filters.connectors.iter().map(
            |c| Term::from_field_text(fields.connector, c.as_str()),
        )))];
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
        out.push(Box::new(TermSetQuery::new(
            extensions
                .iter()
                .map(|e| Term::from_field_text(fields.ext, &e.to_lowercase())),
        )));
    }
    out
}
