//! Embedding documents: each document's passages (with its title, which often says what a
//! passage is about) go through the model in one length-sorted pass per batch.

use std::borrow::BorrowMut;
use std::sync::atomic::AtomicBool;

use quarry_embed::{Embedder, chunk};
use quarry_index::{Embedding, IndexDoc};

use crate::SyncError;

/// Sets the embedding of every document of `docs`. A document without text is embedded by its
/// title (and path), so it can still be found by meaning.
pub fn embed_docs<D: BorrowMut<IndexDoc>>(
    embedder: &Embedder,
    docs: &mut [D],
) -> Result<(), SyncError> {
    embed_docs_until(embedder, docs, &AtomicBool::new(false))
}

/// [`embed_docs`], with every passage of `docs` sorted by length together (the more documents,
/// the less padding), looking at `stop` between batches: [`SyncError::Stopped`] once it is set.
pub fn embed_docs_until<D: BorrowMut<IndexDoc>>(
    embedder: &Embedder,
    docs: &mut [D],
    stop: &AtomicBool,
) -> Result<(), SyncError> {
    let mut texts: Vec<String> = Vec::new();
    let mut ranges: Vec<Vec<(u32, u32)>> = Vec::with_capacity(docs.len());
    for doc in docs.iter() {
        let doc: &IndexDoc = doc.borrow();
        let title = &doc.info.meta.title;
        let heading = match &doc.info.meta.path {
            Some(path) if path != title => format!("{title} ({path})"),
            _ => title.clone(),
        };
        let passages = chunk(&doc.text, &doc.page_starts);
        let mut doc_ranges = Vec::with_capacity(passages.len().max(1));
        if passages.is_empty() {
            texts.push(heading.clone());
            doc_ranges.push((0, 0));
        }
        for p in passages {
            texts.push(format!("{heading}\n{}", &doc.text[p.start..p.end]));
            doc_ranges.push((offset(p.start), offset(p.end)));
        }
        ranges.push(doc_ranges);
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut vectors = embedder
        .embed_passages_until(&refs, stop)
        .map_err(SyncError::Embed)?
        .ok_or(SyncError::Stopped)?
        .into_iter();
    for (doc, doc_ranges) in docs.iter_mut().zip(ranges) {
        let doc: &mut IndexDoc = doc.borrow_mut();
        let doc_vectors: Vec<Vec<f32>> = vectors.by_ref().take(doc_ranges.len()).collect();
        doc.embedding = Some(Embedding::new(embedder.id(), doc_ranges, &doc_vectors));
    }
    Ok(())
}

/// Text offsets are below 4 GiB (documents are capped far lower).
fn offset(byte: usize) -> u32 {
    u32::try_from(byte).unwrap_or(u32::MAX)
}
