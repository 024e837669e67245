//! Passage vectors: quantised to 8 bits, stored in the tantivy document they belong to (so they
//! are committed, replaced and deleted with it, atomically), and scanned exactly at query time
//! from a per-segment copy in memory that is built once per segment.
//!
//! Encoding of a document's vectors (a bytes fast field): `dims: u16`, `model: u64` (a hash of
//! the model id), then per passage `scale: f32` and `dims` signed bytes; the vector is
//! `scale * bytes`. All little-endian.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tantivy::index::SegmentId;
use tantivy::{DocId, DocSet, SegmentReader, TERMINATED};

use crate::IndexError;
use crate::request::Passages;
use crate::schema::Fields;

const HEADER: usize = 2 + 8;

/// A document's passages and their vectors, as the sync writes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Embedding {
    /// Id of the model that made the vectors; only vectors of the query's model are compared.
    pub model: String,
    /// Each passage's byte range in the document's text.
    pub passages: Vec<(u32, u32)>,
    dims: usize,
    /// Per passage: scale (f32 bits) and the quantised components.
    quantised: Vec<(u32, Vec<i8>)>,
    /// False while only the document's first passages have vectors (the embedding queue
    /// computes the rest later): the document stays pending.
    complete: bool,
}

/// What the `model` term of a document whose first passages alone have vectors ends with.
const UNFINISHED: &str = "#first-passages";

impl Embedding {
    /// Quantises one vector per passage; `vectors` and `passages` pair up in order.
    pub fn new(model: &str, passages: Vec<(u32, u32)>, vectors: &[Vec<f32>]) -> Embedding {
        let dims = vectors.first().map_or(0, Vec::len);
        let quantised = vectors
            .iter()
            .filter(|v| v.len() == dims)
            .map(|v| {
                let (scale, q) = quantise(v);
                (scale.to_bits(), q)
            })
            .collect();
        Embedding {
            model: model.to_owned(),
            passages,
            dims,
            quantised,
            complete: true,
        }
    }

    /// The same vectors, marked as a document's first passages only: the document stays
    /// pending until [`Embedding::extend`] adds the rest.
    pub fn unfinished(self) -> Embedding {
        Embedding {
            complete: false,
            ..self
        }
    }

    /// The same vectors, marked complete (as a record of the team's log says they are).
    pub(crate) fn completed(self) -> Embedding {
        Embedding {
            complete: true,
            ..self
        }
    }

    /// Adds the vectors of the passages that follow (`passages` and `vectors` pair up) and
    /// marks the embedding complete or not; vectors of other dimensions are dropped.
    pub fn extend(&mut self, passages: Vec<(u32, u32)>, vectors: &[Vec<f32>], complete: bool) {
        let more = Embedding::new(&self.model, passages, vectors);
        if self.dims == 0 {
            self.dims = more.dims;
        }
        if more.dims == self.dims {
            self.passages.extend(more.passages);
            self.quantised.extend(more.quantised);
        }
        self.complete = complete;
    }

    /// True when every passage has its vector (not only the first ones).
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// True when there is nothing to store.
    pub fn is_empty(&self) -> bool {
        self.dims == 0 || self.quantised.is_empty()
    }

    /// The term the index keeps for the model: the model's id once the embedding is complete,
    /// another before, so the document is still found as pending.
    pub(crate) fn model_term(&self) -> String {
        match self.complete {
            true => self.model.clone(),
            false => unfinished_term(&self.model),
        }
    }

    /// An unfinished embedding read back from the index: the passages' ranges and the encoded
    /// vectors ([`Embedding::encode`]). `None` when the vectors are of another model or do not
    /// pair up with the ranges.
    pub(crate) fn decode(
        model: &str,
        passages: Vec<(u32, u32)>,
        bytes: &[u8],
    ) -> Option<Embedding> {
        let (dims, body) = encoded(bytes, model_hash(model))?;
        if body.len() % (4 + dims) != 0 || body.len() / (4 + dims) != passages.len() {
            return None;
        }
        let quantised = body
            .chunks_exact(4 + dims)
            .map(|p| {
                let scale = u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
                (
                    scale,
                    p[4..].iter().map(|&b| i8::from_le_bytes([b])).collect(),
                )
            })
            .collect();
        Some(Embedding {
            model: model.to_owned(),
            passages,
            dims,
            quantised,
            complete: false,
        })
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER + self.quantised.len() * (4 + self.dims));
        out.extend(u16::try_from(self.dims).unwrap_or(0).to_le_bytes());
        out.extend(model_hash(&self.model).to_le_bytes());
        for (scale, q) in &self.quantised {
            out.extend(scale.to_le_bytes());
            out.extend(q.iter().map(|&b| b.to_le_bytes()[0]));
        }
        out
    }
}

/// Scales `v` so its largest component is 127 and rounds.
pub(crate) fn quantise(v: &[f32]) -> (f32, Vec<i8>) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        return (0.0, vec![0; v.len()]);
    }
    let scale = max / 127.0;
    // In [-127, 127] by construction, so the cast cannot wrap.
    let q = v.iter().map(|x| (x / scale).round() as i8).collect();
    (scale, q)
}

/// An encoded value's dimensions and passages, when it holds vectors of the model hashed
/// `model`.
fn encoded(bytes: &[u8], model: u64) -> Option<(usize, &[u8])> {
    let header = bytes.get(..HEADER)?;
    let dims = usize::from(u16::from_le_bytes([header[0], header[1]]));
    let mut hash = [0u8; 8];
    hash.copy_from_slice(&header[2..HEADER]);
    (dims != 0 && u64::from_le_bytes(hash) == model).then(|| (dims, &bytes[HEADER..]))
}

/// The `model` term of documents whose first passages alone have vectors of `model`.
pub(crate) fn unfinished_term(model: &str) -> String {
    format!("{model}{UNFINISHED}")
}

/// A stable 64-bit hash of a model id.
pub(crate) fn model_hash(model: &str) -> u64 {
    // FNV-1a: stable across processes and Rust versions, unlike `DefaultHasher`.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in model.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// One segment's vectors of one model, in memory.
pub(crate) struct SegmentVectors {
    dims: usize,
    /// Per document: the range of its passages in `scales`.
    docs: Vec<(u32, u32)>,
    scales: Vec<f32>,
    data: Vec<i8>,
}

impl SegmentVectors {
    fn load(segment: &SegmentReader, model: u64) -> Result<SegmentVectors, IndexError> {
        let max_doc = segment.max_doc();
        let mut out = SegmentVectors {
            dims: 0,
            docs: vec![(0, 0); max_doc as usize],
            scales: Vec::new(),
            data: Vec::new(),
        };
        let Some(column) = segment.fast_fields().bytes(Fields::VECTORS)? else {
            return Ok(out);
        };
        let mut by_ord: Vec<(u64, DocId)> = (0..max_doc)
            .filter_map(|doc| column.term_ords(doc).next().map(|ord| (ord, doc)))
            .collect();
        by_ord.sort_unstable();
        let mut ords: Vec<u64> = by_ord.iter().map(|(o, _)| *o).collect();
        ords.dedup();
        // Passage ranges of each distinct value, in `ords` order.
        let mut ranges: Vec<(u32, u32)> = Vec::with_capacity(ords.len());
        column
            .dictionary()
            .sorted_ords_to_term_cb(&ords, |bytes| {
                ranges.push(out.append(bytes, model));
            })
            .map_err(|e| IndexError::Io {
                what: "reading passage vectors",
                source: Arc::new(e),
            })?;
        let mut next = 0usize;
        for (ord, doc) in by_ord {
            while ords.get(next).is_some_and(|&o| o < ord) {
                next += 1;
            }
            if let Some(range) = ranges.get(next) {
                out.docs[doc as usize] = *range;
            }
        }
        Ok(out)
    }

    /// Appends one encoded value; returns its passage range (empty for another model's vectors
    /// or a malformed value).
    fn append(&mut self, bytes: &[u8], model: u64) -> (u32, u32) {
        let first = u32::try_from(self.scales.len()).unwrap_or(u32::MAX);
        let Some((dims, body)) = encoded(bytes, model) else {
            return (first, first);
        };
        if self.dims != 0 && dims != self.dims {
            return (first, first);
        }
        self.dims = dims;
        for passage in body.chunks_exact(4 + dims) {
            self.scales.push(f32::from_le_bytes([
                passage[0], passage[1], passage[2], passage[3],
            ]));
            self.data
                .extend(passage[4..].iter().map(|&b| i8::from_le_bytes([b])));
        }
        (first, u32::try_from(self.scales.len()).unwrap_or(u32::MAX))
    }

    /// True when document `doc` has vectors of this model.
    pub(crate) fn has(&self, doc: DocId) -> bool {
        self.docs
            .get(doc as usize)
            .is_some_and(|(start, end)| start < end)
    }

    /// Bytes of memory held.
    fn size(&self) -> usize {
        self.docs.len() * 8 + self.scales.len() * 4 + self.data.len()
    }
}

/// The best passage of a document for a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Best {
    pub doc: DocId,
    pub similarity: f32,
    pub passage: usize,
}

/// The query's vector, quantised like the passages' (the integer dot product is exact and fast).
pub(crate) struct QueryVector {
    model: u64,
    scale: f32,
    q: Vec<i8>,
}

impl QueryVector {
    pub(crate) fn new(model: &str, vector: &[f32]) -> QueryVector {
        let (scale, q) = quantise(vector);
        QueryVector {
            model: model_hash(model),
            scale,
            q,
        }
    }

    /// The vector back as floats (as quantised).
    pub(crate) fn to_floats(&self) -> Vec<f32> {
        self.q.iter().map(|&x| f32::from(x) * self.scale).collect()
    }
}

/// Scans one segment: for every document of `docs` (a docset of the documents that pass the
/// filters, alive ones only), its best passage and its score as `passages` makes it, when it
/// has vectors of the query's model; returns how many had none (their vectors are pending).
pub(crate) fn scan(
    vectors: &SegmentVectors,
    query: &QueryVector,
    passages: Passages,
    docs: &mut dyn DocSet,
    alive: impl Fn(DocId) -> bool,
    mut found: impl FnMut(Best),
) -> u64 {
    let mut missing = 0;
    let mut similarities: Vec<f32> = Vec::new();
    let mut doc = docs.doc();
    while doc != TERMINATED {
        if alive(doc) {
            match best_of(vectors, query, passages, doc, &mut similarities) {
                Some(best) => found(best),
                None => missing += 1,
            }
        }
        doc = docs.advance();
    }
    missing
}

/// Document `doc`'s best passage and its score as `passages` makes it; `None` when it has no
/// vectors of the query's model. `similarities` is scratch space.
pub(crate) fn best_of(
    vectors: &SegmentVectors,
    query: &QueryVector,
    passages: Passages,
    doc: DocId,
    similarities: &mut Vec<f32>,
) -> Option<Best> {
    let (start, end) = vectors.docs.get(doc as usize).copied().unwrap_or((0, 0));
    let dims = vectors.dims;
    if start >= end || dims != query.q.len() {
        return None;
    }
    let mut best = Best {
        doc,
        similarity: f32::MIN,
        passage: 0,
    };
    similarities.clear();
    for p in start as usize..end as usize {
        let row = &vectors.data[p * dims..(p + 1) * dims];
        let similarity = dot(row, &query.q) as f32 * vectors.scales[p] * query.scale;
        if similarity > best.similarity {
            best.similarity = similarity;
            best.passage = p - start as usize;
        }
        if passages != Passages::Best {
            similarities.push(similarity);
        }
    }
    best.similarity = aggregate(passages, best.similarity, similarities);
    Some(best)
}

/// A document's semantic score from its passages' similarities (`best` the highest; the list
/// is only filled when `passages` needs more than the best).
fn aggregate(passages: Passages, best: f32, similarities: &mut [f32]) -> f32 {
    match passages {
        Passages::Best => best,
        Passages::MeanOfBest(n) => {
            let n = n.clamp(1, similarities.len().max(1));
            if similarities.len() > n {
                similarities.select_nth_unstable_by(n - 1, |a, b| b.total_cmp(a));
            }
            let top = &similarities[..n.min(similarities.len())];
            top.iter().sum::<f32>() / top.len().max(1) as f32
        }
        Passages::BestAndSecond(weight) => {
            let second = if similarities.len() > 1 {
                similarities.select_nth_unstable_by(1, |a, b| b.total_cmp(a));
                similarities[1]
            } else {
                0.0
            };
            best + weight * second
        }
    }
}

/// Passage `passage` of document `doc`'s vectors, as floats (`None` when it has no such
/// passage).
pub(crate) fn passage_vector(
    vectors: &SegmentVectors,
    doc: DocId,
    passage: usize,
) -> Option<Vec<f32>> {
    let (start, end) = vectors.docs.get(doc as usize).copied()?;
    let p = start as usize + passage;
    if p >= end as usize {
        return None;
    }
    let scale = vectors.scales[p];
    let row = vectors.data.get(p * vectors.dims..(p + 1) * vectors.dims)?;
    Some(row.iter().map(|&x| f32::from(x) * scale).collect())
}

/// Integer dot product. Written as 16 independent lanes of i16 products summed into i32, the
/// shape the compiler turns into SIMD multiply-adds with the baseline x86-64 instruction set.
fn dot(a: &[i8], b: &[i8]) -> i32 {
    const LANES: usize = 16;
    let mut lanes = [0i32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: i32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for i in 0..LANES {
            lanes[i] += i32::from(i16::from(x[i]) * i16::from(y[i]));
        }
    }
    lanes.iter().sum::<i32>() + tail
}

/// Every live segment's vectors of the current model, loaded on first use.
#[derive(Default)]
pub(crate) struct VectorCache {
    segments: Mutex<HashMap<(SegmentId, u64), Arc<SegmentVectors>>>,
}

impl VectorCache {
    /// The vectors of `segment` for `query`'s model.
    pub(crate) fn get(
        &self,
        segment: &SegmentReader,
        query: &QueryVector,
    ) -> Result<Arc<SegmentVectors>, IndexError> {
        let key = (segment.segment_id(), query.model);
        let mut segments = self.segments.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = segments.get(&key) {
            return Ok(Arc::clone(v));
        }
        let loaded = Arc::new(SegmentVectors::load(segment, query.model)?);
        segments.insert(key, Arc::clone(&loaded));
        Ok(loaded)
    }

    /// Forgets segments that are gone (merged or deleted) from the searcher's view.
    pub(crate) fn retain(&self, live: &[SegmentId]) {
        let mut segments = self.segments.lock().unwrap_or_else(|e| e.into_inner());
        segments.retain(|(id, _), _| live.contains(id));
    }

    /// Bytes of memory the cache holds.
    pub(crate) fn size(&self) -> usize {
        let segments = self.segments.lock().unwrap_or_else(|e| e.into_inner());
        segments.values().map(|s| s.size()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random unit vector.
    fn vector(seed: u64, dims: usize) -> Vec<f32> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut v: Vec<f32> = (0..dims)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 2001) as f32 / 1000.0 - 1.0
            })
            .collect();
        let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
        v.iter_mut().for_each(|a| *a /= n);
        v
    }

    #[test]
    fn quantised_ranking_keeps_the_exact_top_ten() {
        let dims = 384;
        let docs: Vec<Vec<f32>> = (0..2000).map(|i| vector(i + 1, dims)).collect();
        let mut recall = 0.0;
        for q in 0..20u64 {
            // Queries near a document, as real queries are near their answers.
            let mut query = vector(10_000 + q, dims);
            let anchor = &docs[(q * 97 % 2000) as usize];
            query
                .iter_mut()
                .zip(anchor)
                .for_each(|(a, b)| *a = *a * 0.6 + b);
            let exact_dot = |d: &Vec<f32>| d.iter().zip(&query).map(|(a, b)| a * b).sum::<f32>();
            let qv = QueryVector::new("m", &query);
            let approx = |d: &Vec<f32>| {
                let (s, v) = quantise(d);
                dot(&v, &qv.q) as f32 * s * qv.scale
            };
            let top = |f: &dyn Fn(&Vec<f32>) -> f32| {
                let mut scored: Vec<(f32, usize)> =
                    docs.iter().enumerate().map(|(i, d)| (f(d), i)).collect();
                scored.sort_by(|a, b| b.0.total_cmp(&a.0));
                scored
                    .into_iter()
                    .take(10)
                    .map(|(_, i)| i)
                    .collect::<Vec<_>>()
            };
            let (e, a) = (top(&exact_dot), top(&approx));
            recall += e.iter().filter(|i| a.contains(i)).count() as f64 / 10.0;
        }
        assert!(recall / 20.0 >= 0.98, "recall@10 {}", recall / 20.0);
    }

    #[test]
    fn encoding_round_trips_through_a_segment_copy() {
        let vectors = vec![vector(1, 8), vector(2, 8)];
        let e = Embedding::new("model-a", vec![(0, 5), (5, 9)], &vectors);
        let bytes = e.encode();
        let mut s = SegmentVectors {
            dims: 0,
            docs: Vec::new(),
            scales: Vec::new(),
            data: Vec::new(),
        };
        assert_eq!(s.append(&bytes, model_hash("model-b")), (0, 0));
        assert_eq!(s.append(&bytes, model_hash("model-a")), (0, 2));
        let (scale, q) = quantise(&vectors[1]);
        assert_eq!(s.scales[1], scale);
        assert_eq!(&s.data[8..], q.as_slice());
    }
}
