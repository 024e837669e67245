//! Documents waiting for their passage vectors. A sync writes documents without vectors, so
//! they are searchable by keyword at once; a background queue (`quarry_sync::EmbeddingQueue`)
//! takes the documents that lack vectors of the loaded model from here, embeds them and gives
//! them back. The index itself is the queue (what lacks vectors is pending), so a crash loses
//! nothing and a restart resumes where it stopped.
//!
//! The order is what a person waiting to search by meaning is likely to ask for first:
//! 1. the connectors the user put first (`quarry connector embed-first`), then the others;
//! 2. within them, prose, then code, other documents, data and logs ([`DocKind`]);
//! 3. within prose, the prose outside software projects, whole, before the prose inside them (a
//!    folder with a build manifest, [`Projects`]: READMEs and changelogs of source trees);
//! 4. within each, documents without any vector (the queue embeds their first passages, so
//!    every document can be found by meaning early) before those whose first passages alone have
//!    vectors (the rest of long documents);
//! 5. within each, the newest first.

use tantivy::collector::{Count, TopDocs};
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery, TermSetQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, Order, Searcher, TantivyDocument, Term};

use quarry_core::{ConnectorId, DocId};

use crate::IndexError;
use crate::document::{IndexDoc, documents, key, part_starts, passages, term};
use crate::kinds::DocKind;
use crate::projects::Projects;
use crate::schema::Fields;
use crate::text_parts::StoredText;
use crate::vectors::{Embedding, unfinished_term};

/// A document read whole for embedding, and which version of it that was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The document; set its `embedding` and hand it back ([`crate::SearchIndex::add_vectors`]).
    /// Taken by the queue with its first passages' vectors, it holds them, unfinished
    /// ([`Embedding::is_complete`]).
    pub doc: IndexDoc,
    /// The revision it was read at: its vectors are stored only over that revision.
    pub(crate) revision: u64,
}

/// Which of a document's vectors are missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missing {
    /// All of them.
    All,
    /// Those after its first passages.
    Rest,
}

impl Missing {
    fn clauses(self, f: &Fields, model: &str) -> Vec<(Occur, Box<dyn Query>)> {
        let unfinished = term(f.model, &unfinished_term(model));
        match self {
            Missing::All => vec![
                (Occur::MustNot, term(f.model, model)),
                (Occur::MustNot, unfinished),
            ],
            Missing::Rest => vec![(Occur::Must, unfinished)],
        }
    }
}

/// Documents without vectors of `model` (or with those of their first passages only),
/// optionally of one connector only.
pub(crate) fn without_vectors(f: &Fields, model: &str, connector: Option<&str>) -> Box<dyn Query> {
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![
        (Occur::Must, documents()),
        (Occur::MustNot, term(f.model, model)),
    ];
    if let Some(connector) = connector {
        clauses.push((Occur::Must, term(f.connector, connector)));
    }
    Box::new(BooleanQuery::new(clauses))
}

/// Which prose a tier holds: prose outside software projects comes before the prose inside
/// them ([`Projects`]); other kinds are taken wherever they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Within {
    /// Documents wherever they are.
    Anywhere,
    /// Documents outside every project (and those without a path).
    OwnFolders,
    /// Documents inside a project.
    Projects,
}

/// One tier of the queue: a query of pending documents, which of their vectors are missing,
/// and where they must be.
struct Tier {
    query: Box<dyn Query>,
    missing: Missing,
    within: Within,
}

/// The queue's tiers, in the order of the module's documentation.
fn tiers(f: &Fields, model: &str, first: &[ConnectorId]) -> Vec<Tier> {
    let pinned = || -> Box<dyn Query> {
        Box::new(TermSetQuery::new(
            first
                .iter()
                .map(|c| Term::from_field_text(f.connector, c.as_str())),
        ))
    };
    let parts: Vec<Option<(Occur, Box<dyn Query>)>> = match first.is_empty() {
        true => vec![None],
        false => vec![
            Some((Occur::Must, pinned())),
            Some((Occur::MustNot, pinned())),
        ],
    };
    let mut out = Vec::new();
    for part in parts {
        for kind in DocKind::ALL {
            let order: &[(Missing, Within)] = match kind {
                DocKind::Prose => &[
                    (Missing::All, Within::OwnFolders),
                    (Missing::Rest, Within::OwnFolders),
                    (Missing::All, Within::Projects),
                    (Missing::Rest, Within::Projects),
                ],
                _ => &[
                    (Missing::All, Within::Anywhere),
                    (Missing::Rest, Within::Anywhere),
                ],
            };
            for &(missing, within) in order {
                let mut clauses = vec![(Occur::Must, documents()), (Occur::Must, kind.query(f))];
                clauses.extend(missing.clauses(f, model));
                if let Some((occur, query)) = &part {
                    clauses.push((*occur, query.box_clone()));
                }
                out.push(Tier {
                    query: Box::new(BooleanQuery::new(clauses)),
                    missing,
                    within,
                });
            }
        }
    }
    out
}

/// Up to `max_docs` documents without vectors of `model` (or with those of their first
/// passages only), in the queue's order, read whole; no more once their texts hold `max_bytes`
/// (always at least one). `first` are the connectors whose documents come before all others;
/// `projects` is what earlier calls learnt of the index's software projects.
pub(crate) fn take(
    searcher: &Searcher,
    f: &Fields,
    model: &str,
    first: &[ConnectorId],
    projects: &mut Projects,
    max_docs: usize,
    max_bytes: usize,
) -> Result<Vec<Pending>, IndexError> {
    projects.refresh(searcher, f)?;
    let mut taken = Taken {
        searcher,
        f,
        model,
        out: Vec::new(),
        bytes: 0,
        max_docs: max_docs.max(1),
        max_bytes,
    };
    for tier in tiers(f, model, first) {
        let full = match tier.within {
            Within::Anywhere => taken.fill(&*tier.query, tier.missing, |_, _| true)?.0,
            Within::Projects if !projects.any() => continue,
            Within::Projects => {
                let query = BooleanQuery::new(vec![
                    (Occur::Must, tier.query),
                    (Occur::Must, projects.known_inside(f)),
                ]);
                taken.fill(&query, tier.missing, |_, _| true)?.0
            }
            Within::OwnFolders => loop {
                // Documents found inside a project are passed over and remembered; the next
                // search leaves them out (and those taken), until a search passes over none.
                let query = BooleanQuery::new(vec![
                    (Occur::Must, tier.query.box_clone()),
                    (Occur::MustNot, projects.known_inside(f)),
                    (Occur::MustNot, taken.taken_query()),
                ]);
                let (full, passed) = taken.fill(&query, tier.missing, |key, stored| {
                    !projects.holds(key, stored, f)
                })?;
                if full || passed == 0 {
                    break full;
                }
            },
        };
        if full {
            break;
        }
    }
    Ok(taken.out)
}

/// The documents a call of [`take`] has taken so far, and its limits.
struct Taken<'a> {
    searcher: &'a Searcher,
    f: &'a Fields,
    model: &'a str,
    out: Vec<Pending>,
    bytes: usize,
    max_docs: usize,
    max_bytes: usize,
}

impl Taken<'_> {
    /// The documents taken so far, as a query.
    fn taken_query(&self) -> Box<dyn Query> {
        Box::new(TermSetQuery::new(self.out.iter().map(|p| {
            Term::from_field_text(self.f.key, &key(&p.doc.info.connector, &p.doc.info.doc_id))
        })))
    }

    /// Whether no more documents are wanted.
    fn full(&self) -> bool {
        self.out.len() >= self.max_docs || (!self.out.is_empty() && self.bytes >= self.max_bytes)
    }

    /// Takes the documents `query` matches, newest first, that `keep` (given a document's key
    /// and stored fields) keeps, until full. Returns whether it is full, and how many
    /// documents `keep` passed over.
    fn fill(
        &mut self,
        query: &dyn Query,
        missing: Missing,
        mut keep: impl FnMut(&str, &TantivyDocument) -> bool,
    ) -> Result<(bool, usize), IndexError> {
        let wanted = self.max_docs.saturating_sub(self.out.len());
        if wanted == 0 {
            return Ok((true, 0));
        }
        let found = self.searcher.search(
            query,
            &TopDocs::with_limit(wanted).order_by_fast_field::<i64>(Fields::UPDATED, Order::Desc),
        )?;
        let mut passed = 0;
        for (_, address) in found {
            if self.full() {
                break;
            }
            let stored: TantivyDocument = self.searcher.doc(address)?;
            let Some(doc) = IndexDoc::from_tantivy(&stored, self.f) else {
                continue;
            };
            if !keep(&key(&doc.info.connector, &doc.info.doc_id), &stored) {
                passed += 1;
                continue;
            }
            let rest_of = (missing == Missing::Rest).then_some(self.model);
            let pending = whole(self.searcher, self.f, address, &stored, doc, rest_of)?;
            self.bytes += pending.doc.text.len();
            self.out.push(pending);
        }
        Ok((self.full(), passed))
    }
}

/// The vectors of the first passages of the document at `address` (`stored`), as the queue
/// stored them before the rest.
pub(crate) fn first_passages(
    searcher: &Searcher,
    f: &Fields,
    model: &str,
    address: DocAddress,
    stored: &TantivyDocument,
) -> Result<Option<Embedding>, IndexError> {
    let ranges = passages(stored, f)
        .into_iter()
        .map(|(s, e)| (offset(s), offset(e)))
        .collect();
    let Some(column) = searcher
        .segment_reader(address.segment_ord)
        .fast_fields()
        .bytes(Fields::VECTORS)?
    else {
        return Ok(None);
    };
    let Some(ord) = column.term_ords(address.doc_id).next() else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    if !column
        .ord_to_bytes(ord, &mut bytes)
        .map_err(|e| IndexError::Io {
            what: "reading passage vectors",
            source: std::sync::Arc::new(e),
        })?
    {
        return Ok(None);
    }
    Ok(Embedding::decode(model, ranges, &bytes))
}

/// Byte offsets stored as u32 (texts are capped far lower).
fn offset(byte: usize) -> u32 {
    u32::try_from(byte).unwrap_or(u32::MAX)
}

/// How many documents of each kind there are, and how many have vectors of `model` (all, or
/// those of their first passages only), of `connector` or of all.
pub(crate) fn by_kind(
    searcher: &Searcher,
    f: &Fields,
    model: &str,
    connector: Option<&str>,
) -> Result<Vec<KindProgress>, IndexError> {
    let count = |clauses: Vec<(Occur, Box<dyn Query>)>| -> Result<u64, IndexError> {
        Ok(searcher.search(&BooleanQuery::new(clauses), &Count)? as u64)
    };
    let mut out = Vec::with_capacity(DocKind::ALL.len());
    for kind in DocKind::ALL {
        let of_kind = || {
            let mut clauses = vec![(Occur::Must, documents()), (Occur::Must, kind.query(f))];
            if let Some(connector) = connector {
                clauses.push((Occur::Must, term(f.connector, connector)));
            }
            clauses
        };
        let total = count(of_kind())?;
        if total == 0 {
            continue;
        }
        let with = |model_term: &str| {
            let mut clauses = of_kind();
            clauses.push((Occur::Must, term(f.model, model_term)));
            count(clauses)
        };
        out.push(KindProgress {
            kind,
            documents: total,
            embedded: with(model)?,
            first_passages: with(&unfinished_term(model))?,
        });
    }
    Ok(out)
}

/// How far the embedding of one kind of document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindProgress {
    /// The kind.
    pub kind: DocKind,
    /// Its documents.
    pub documents: u64,
    /// Those whose every passage has its vector.
    pub embedded: u64,
    /// Those whose first passages alone have theirs (found by meaning already; the rest of
    /// the text follows).
    pub first_passages: u64,
}

/// The document of `connector` keyed `doc`, read whole, with its revision.
pub(crate) fn one(
    searcher: &Searcher,
    f: &Fields,
    connector: &ConnectorId,
    doc: &DocId,
) -> Result<Option<Pending>, IndexError> {
    let key = key(connector, doc);
    let query = TermQuery::new(Term::from_field_text(f.key, &key), IndexRecordOption::Basic);
    let found = searcher.search(&query, &TopDocs::with_limit(1).order_by_score())?;
    let Some(&(_, address)) = found.first() else {
        return Ok(None);
    };
    read_whole(searcher, f, address)
}

/// The document at `address`, read whole, with its revision.
fn read_whole(
    searcher: &Searcher,
    f: &Fields,
    address: DocAddress,
) -> Result<Option<Pending>, IndexError> {
    let stored: TantivyDocument = searcher.doc(address)?;
    let Some(doc) = IndexDoc::from_tantivy(&stored, f) else {
        return Ok(None);
    };
    whole(searcher, f, address, &stored, doc, None).map(Some)
}

/// `doc`, stored as `stored` at `address`, with its whole text and its revision; with `rest_of`
/// a model, also the vectors of its first passages (a document the queue comes back to for the
/// rest).
pub(crate) fn whole(
    searcher: &Searcher,
    f: &Fields,
    address: DocAddress,
    stored: &TantivyDocument,
    mut doc: IndexDoc,
    rest_of: Option<&str>,
) -> Result<Pending, IndexError> {
    if let Some(model) = rest_of {
        doc.embedding = first_passages(searcher, f, model, address, stored)?;
    }
    let key = key(&doc.info.connector, &doc.info.doc_id);
    doc.text = StoredText {
        key: &key,
        head: &doc.text,
        starts: &part_starts(stored, f),
    }
    .whole(searcher, f)?;
    let revision = searcher
        .segment_reader(address.segment_ord)
        .fast_fields()
        .u64(Fields::REVISION)?
        .first(address.doc_id)
        .unwrap_or(0);
    Ok(Pending { doc, revision })
}

/// How many documents lack vectors of `model` (of `connector`, or of all).
pub(crate) fn count(
    searcher: &Searcher,
    f: &Fields,
    model: &str,
    connector: Option<&str>,
) -> Result<u64, IndexError> {
    Ok(searcher.search(&*without_vectors(f, model, connector), &Count)? as u64)
}

/// The revision of the document keyed `key` as the searcher sees it; `None` when it has none.
pub(crate) fn current_revision(
    searcher: &Searcher,
    f: &Fields,
    key: &str,
) -> tantivy::Result<Option<u64>> {
    let query = TermQuery::new(Term::from_field_text(f.key, key), IndexRecordOption::Basic);
    let found = searcher.search(&query, &TopDocs::with_limit(1).order_by_score())?;
    let Some((_, address)) = found.first() else {
        return Ok(None);
    };
    Ok(searcher
        .segment_reader(address.segment_ord)
        .fast_fields()
        .u64(Fields::REVISION)?
        .first(address.doc_id))
}
