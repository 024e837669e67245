//! Embedding documents: each document's passages (with its title, which often says what a
//! passage is about) go through the model in one length-sorted pass per batch.

use std::borrow::BorrowMut;
use std::sync::atomic::AtomicBool;

use quarry_embed::{Embedder, chunk};
use quarry_index::{Embedding, IndexDoc};

use crate::SyncError;

/// Passages of a document embedded before those of any document still without vectors
/// ([`Reach::FirstPassages`]): about 720 words, the opening of a long text, enough for it to
/// be found by meaning while the rest waits.
pub const FIRST_PASSAGES: usize = 4;

/// How far into each document a pass embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Every passage.
    Whole,
    /// The first [`FIRST_PASSAGES`] of a document without vectors; every passage still missing
    /// of one whose first passages have theirs.
    FirstPassages,
}

/// Sets the embedding of every document of `docs`. A document without text is embedded by its
/// title (and path), so it can still be found by meaning.
pub fn embed_docs<D: BorrowMut<IndexDoc>>(
    embedder: &Embedder,
    docs: &mut [D],
) -> Result<(), SyncError> {
    embed_docs_until(embedder, docs, Reach::Whole, &AtomicBool::new(false))
}

/// What one document needs embedded: its passages' ranges from `from` to `to`, and what goes
/// before each (its title and path).
struct Plan {
    ranges: Vec<(u32, u32)>,
    from: usize,
    to: usize,
}

impl Plan {
    /// The plan for `doc`, whose `embedding` (when it holds the first passages of this model,
    /// as they are still cut) is kept and continued; any other is dropped.
    fn of(doc: &mut IndexDoc, model: &str, reach: Reach) -> Plan {
        let ranges: Vec<(u32, u32)> = chunk(&doc.text, &doc.page_starts)
            .into_iter()
            .map(|p| (offset(p.start), offset(p.end)))
            .collect();
        let kept = doc.embedding.as_ref().is_some_and(|e| {
            e.model == model
                && !e.is_complete()
                && !e.is_empty()
                && ranges.get(..e.passages.len()) == Some(&e.passages[..])
        });
        if !kept {
            doc.embedding = None;
        }
        let from = doc.embedding.as_ref().map_or(0, |e| e.passages.len());
        let to = match (reach, from) {
            (Reach::FirstPassages, 0) => ranges.len().min(FIRST_PASSAGES),
            _ => ranges.len(),
        };
        Plan { ranges, from, to }
    }
}

/// [`embed_docs`] as far as `reach` says, with every passage of `docs` sorted by length together
/// (the more documents, the less padding), looking at `stop` between batches:
/// [`SyncError::Stopped`] once it is set.
pub fn embed_docs_until<D: BorrowMut<IndexDoc>>(
    embedder: &Embedder,
    docs: &mut [D],
    reach: Reach,
    stop: &AtomicBool,
) -> Result<(), SyncError> {
    let mut texts: Vec<String> = Vec::new();
    let mut plans: Vec<Plan> = Vec::with_capacity(docs.len());
    for doc in docs.iter_mut() {
        let doc: &mut IndexDoc = doc.borrow_mut();
        let plan = Plan::of(doc, embedder.id(), reach);
        let title = &doc.info.meta.title;
        let heading = match &doc.info.meta.path {
            Some(path) if path != title => format!("{title} ({path})"),
            _ => title.clone(),
        };
        if plan.ranges.is_empty() {
            texts.push(heading);
            plans.push(plan);
            continue;
        }
        for &(start, end) in &plan.ranges[plan.from..plan.to] {
            let passage = doc
                .text
                .get(start as usize..end as usize)
                .unwrap_or_default();
            texts.push(format!("{heading}\n{passage}"));
        }
        plans.push(plan);
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut vectors = embedder
        .embed_passages_until(&refs, stop)
        .map_err(SyncError::Embed)?
        .ok_or(SyncError::Stopped)?
        .into_iter();
    for (doc, plan) in docs.iter_mut().zip(plans) {
        let doc: &mut IndexDoc = doc.borrow_mut();
        if plan.ranges.is_empty() {
            let title: Vec<Vec<f32>> = vectors.by_ref().take(1).collect();
            doc.embedding = Some(Embedding::new(embedder.id(), vec![(0, 0)], &title));
            continue;
        }
        let new = plan.ranges[plan.from..plan.to].to_vec();
        let doc_vectors: Vec<Vec<f32>> = vectors.by_ref().take(new.len()).collect();
        let complete = plan.to == plan.ranges.len();
        match doc.embedding.as_mut() {
            Some(first) => first.extend(new, &doc_vectors, complete),
            None => {
                let embedding = Embedding::new(embedder.id(), new, &doc_vectors);
                doc.embedding = Some(match complete {
                    true => embedding,
                    false => embedding.unfinished(),
                });
            }
        }
    }
    Ok(())
}

/// Text offsets are below 4 GiB (documents are capped far lower).
fn offset(byte: usize) -> u32 {
    u32::try_from(byte).unwrap_or(u32::MAX)
}
