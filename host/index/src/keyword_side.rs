//! The keyword ranking of a fused search, with [`Fusion`]'s keyword levers: the two tiers of
//! keyword mode or BM25 alone, an extra weight for query words in titles, and RM3-like
//! expansion from a first pass's best results. Keyword mode itself never uses them: its ranking is
//! the API's (every result has a query word; those with all of them first).

use std::collections::HashMap;

use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, Occur, PhraseQuery, Query, TermQuery,
};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, Searcher, TantivyDocument, Term};

use crate::IndexError;
use crate::document::IndexDoc;
use crate::keyword::{self, Compiled, Tokens, scored_by_stems};
use crate::request::{Fusion, TermFeedback};
use crate::schema::{Fields, stems_analyzer, words};

/// Bytes of a feedback document's text that its stems are drawn from.
const FEEDBACK_TEXT_BYTES: usize = 16 * 1024;

/// The `pool` best documents of the keyword side of `fusion`, best first, with their scores.
/// With term feedback and `feedback` documents (a first pass's best, with their scores), the
/// query is expanded from them.
pub(crate) fn ranking(
    searcher: &Searcher,
    fields: &Fields,
    compiled: &Compiled,
    fusion: Fusion,
    pool: usize,
    feedback: &[(DocAddress, f32)],
) -> Result<Vec<(DocAddress, f32)>, IndexError> {
    let titled = |query: &dyn Query| with_title(query, &compiled.words, fields, fusion.title);
    if let Some(terms) = fusion.term_feedback.filter(|_| !feedback.is_empty())
        && let Some(query) = expanded(searcher, fields, compiled, feedback, terms)?
    {
        return keyword::scored(searcher, &*titled(&*query), 0, pool);
    }
    let any = titled(&*compiled.any);
    if fusion.tiers {
        let all = compiled.all.as_deref().map(titled);
        keyword::best(searcher, &*any, all.as_deref(), pool)
    } else {
        keyword::scored(searcher, &*any, 0, pool)
    }
}

/// `query`, with `weight` times the score of the query's words in the title added (`query`
/// itself when the weight is 0).
fn with_title(query: &dyn Query, words: &[Tokens], fields: &Fields, weight: f32) -> Box<dyn Query> {
    if weight <= 0.0 || words.is_empty() {
        return query.box_clone();
    }
    let in_title: Vec<(Occur, Box<dyn Query>)> = words
        .iter()
        .map(|tokens| {
            let query: Box<dyn Query> = match &tokens[..] {
                [(_, single)] => Box::new(TermQuery::new(
                    Term::from_field_text(fields.title, single),
                    IndexRecordOption::WithFreqs,
                )),
                _ => Box::new(PhraseQuery::new_with_offset(
                    tokens
                        .iter()
                        .map(|(position, t)| (*position, Term::from_field_text(fields.title, t)))
                        .collect(),
                )),
            };
            (Occur::Should, query)
        })
        .collect();
    Box::new(BooleanQuery::new(vec![
        (Occur::Must, query.box_clone()),
        (
            Occur::Should,
            Box::new(BoostQuery::new(
                Box::new(BooleanQuery::new(in_title)),
                weight,
            )),
        ),
    ]))
}

/// The query's stems joined by the `feedback.terms` stems most typical of the best
/// `feedback.docs` documents of `first` (each document's stems by frequency, weighted by its
/// share of their scores: RM3's relevance model), as a query over the documents `compiled`
/// allows that have any of them. `None` without stems or documents to draw from.
fn expanded(
    searcher: &Searcher,
    fields: &Fields,
    compiled: &Compiled,
    first: &[(DocAddress, f32)],
    feedback: TermFeedback,
) -> Result<Option<Box<dyn Query>>, IndexError> {
    let docs = &first[..feedback.docs.min(first.len())];
    let own: f32 = compiled.stems.iter().map(|(_, n)| n).sum();
    if docs.is_empty() || own <= 0.0 {
        return Ok(None);
    }
    let model = relevance_model(searcher, fields, docs)?;
    let mut typical: Vec<(String, f32)> = model.into_iter().collect();
    typical.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    typical.truncate(feedback.terms);
    let theirs: f32 = typical.iter().map(|(_, p)| p).sum();
    let original = feedback.original.clamp(0.0, 1.0);
    let mut weights: Vec<(String, f32)> = compiled
        .stems
        .iter()
        .map(|(stem, n)| (stem.clone(), original * n / own))
        .collect();
    if theirs > 0.0 {
        for (stem, p) in typical {
            let weight = (1.0 - original) * p / theirs;
            match weights.iter_mut().find(|(s, _)| *s == stem) {
                Some((_, w)) => *w += weight,
                None => weights.push((stem, weight)),
            }
        }
    }
    let any_stem: Vec<(Occur, Box<dyn Query>)> = weights
        .iter()
        .map(|(stem, _)| {
            let term: Box<dyn Query> = Box::new(TermQuery::new(
                Term::from_field_text(fields.stems, stem),
                IndexRecordOption::Basic,
            ));
            (Occur::Should, term)
        })
        .collect();
    let matching: Box<dyn Query> = Box::new(BooleanQuery::new(vec![
        (Occur::Must, compiled.allowed.box_clone()),
        (
            Occur::Must,
            Box::new(ConstScoreQuery::new(
                Box::new(BooleanQuery::new(any_stem)),
                0.0,
            )),
        ),
    ]));
    let pairs: Vec<(String, f32)> = compiled
        .pairs
        .iter()
        .map(|(pair, n)| (pair.clone(), original * n / own))
        .collect();
    Ok(Some(scored_by_stems(matching, &weights, &pairs, fields)))
}

/// Each stem's probability in the feedback documents: its share of a document's stems, times
/// the document's share of their scores, summed.
fn relevance_model(
    searcher: &Searcher,
    fields: &Fields,
    docs: &[(DocAddress, f32)],
) -> Result<HashMap<String, f32>, IndexError> {
    let total: f32 = docs.iter().map(|(_, s)| s.max(0.0)).sum();
    let mut analyzer = stems_analyzer();
    let mut model: HashMap<String, f32> = HashMap::new();
    for (address, score) in docs {
        let share = if total > 0.0 {
            score.max(0.0) / total
        } else {
            1.0 / docs.len() as f32
        };
        let stored: TantivyDocument = searcher.doc(*address)?;
        let Some(doc) = IndexDoc::from_tantivy(&stored, fields) else {
            continue;
        };
        let text = format!("{}\n{}", doc.info.meta.title, head(&doc.text));
        let stems = words(&mut analyzer, &text);
        if stems.is_empty() {
            continue;
        }
        let each = share / stems.len() as f32;
        for stem in stems {
            *model.entry(stem).or_default() += each;
        }
    }
    Ok(model)
}

/// The first [`FEEDBACK_TEXT_BYTES`] of `text`, cut at a character boundary.
fn head(text: &str) -> &str {
    let mut end = text.len().min(FEEDBACK_TEXT_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
