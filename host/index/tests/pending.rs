//! The embedding queue's side of the index: documents without vectors are pending (newest
//! first), vectors stored only over the version they were computed from, counts per connector.

use quarry_core::{ConnectorId, DocId};
use quarry_index::{Embedding, IndexDoc, IndexError, Pending, SearchIndex, WriteBatch};

use common::text_doc;

mod common;

const MODEL: &str = "test-model";

fn cn(id: &str) -> ConnectorId {
    ConnectorId::parse(id).expect("valid connector id")
}

fn doc(connector: &str, id: &str, text: &str, updated_ms: i64) -> IndexDoc {
    text_doc(connector, id, &format!("{id}.txt"), text, updated_ms)
}

/// What the queue does: one vector per document (its whole text a passage).
fn embedded(mut taken: Vec<Pending>) -> Vec<Pending> {
    for p in &mut taken {
        let end = u32::try_from(p.doc.text.len()).expect("short");
        p.doc.embedding = Some(Embedding::new(
            MODEL,
            vec![(0, end)],
            &[vec![1.0, 0.0, 0.0]],
        ));
    }
    taken
}

fn ids(taken: &[Pending]) -> Vec<&str> {
    taken.iter().map(|p| p.doc.info.doc_id.as_str()).collect()
}

fn upsert(index: &SearchIndex, docs: Vec<IndexDoc>) -> Result<(), IndexError> {
    index.write(WriteBatch {
        upserts: docs,
        ..WriteBatch::default()
    })
}

#[test]
fn pending_documents_are_taken_newest_first_whole_and_leave_the_queue_once_embedded()
-> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = SearchIndex::open(dir.path(), true)?;
    let long = "word ".repeat(500_000); // over two stored parts
    upsert(
        &index,
        vec![
            doc("cn_a", "old", "old text", 1),
            doc("cn_a", "new", "new text", 3),
            doc("cn_b", "long", &long, 2),
        ],
    )?;
    assert_eq!(index.pending_count(MODEL, None)?, 3);
    assert_eq!(index.pending_count(MODEL, Some(&cn("cn_a")))?, 2);

    let taken = index.pending_vectors(MODEL, 2, usize::MAX)?;
    assert_eq!(ids(&taken), ["new", "long"], "newest first, at most 2");
    assert_eq!(taken[1].doc.text, long, "read whole, every part");
    // A byte budget stops the round after the document that reaches it.
    assert_eq!(ids(&index.pending_vectors(MODEL, 3, 1)?), ["new"]);

    index.add_vectors(embedded(taken))?;
    assert_eq!(index.pending_count(MODEL, None)?, 1);
    assert_eq!(index.pending_count(MODEL, Some(&cn("cn_b")))?, 0);
    assert_eq!(ids(&index.pending_vectors(MODEL, 10, usize::MAX)?), ["old"]);
    // Another model's vectors are pending for this one.
    assert_eq!(index.pending_count("another-model", None)?, 3);
    // The document is the same after its vectors were added, its text whole.
    let stored = index
        .document(&cn("cn_b"), &DocId::parse("long").expect("id"))?
        .expect("still there");
    assert_eq!(stored.text, long);
    Ok(())
}

#[test]
fn vectors_of_an_older_version_are_never_stored_over_a_newer_one() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = SearchIndex::open(dir.path(), true)?;
    upsert(
        &index,
        vec![
            doc("cn_a", "edited", "first version", 1),
            doc("cn_a", "removed", "soon gone", 2),
            doc("cn_a", "kept", "unchanged", 3),
        ],
    )?;
    let taken = index.pending_vectors(MODEL, 10, usize::MAX)?;
    assert_eq!(taken.len(), 3);

    // While the queue computes, a sync writes a new version of one and removes another.
    upsert(&index, vec![doc("cn_a", "edited", "second version", 4)])?;
    index.write(WriteBatch {
        deletes: vec![(cn("cn_a"), DocId::parse("removed").expect("id"))],
        ..WriteBatch::default()
    })?;
    index.add_vectors(embedded(taken))?;

    // Only the unchanged one took its vectors; the new version waits for its own.
    let still = index.pending_vectors(MODEL, 10, usize::MAX)?;
    assert_eq!(ids(&still), ["edited"]);
    assert_eq!(still[0].doc.text, "second version");
    assert!(
        index
            .document(&cn("cn_a"), &DocId::parse("removed").expect("id"))?
            .is_none(),
        "a removed document is not brought back by its vectors"
    );
    assert_eq!(index.num_docs()?, 2);

    Ok(())
}
