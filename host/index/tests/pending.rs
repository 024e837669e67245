//! The embedding queue's side of the index: documents without vectors are pending (in the
//! queue's order: connectors put first, documents without any vector before the rest of long
//! ones, prose before code, data and logs, a person's own prose before that of software
//! projects, the newest first), vectors stored only over the
//! version they were computed from, counts per connector and per kind.

use quarry_core::{ConnectorId, DocId};
use quarry_index::{
    DocKind, Embedding, IndexDoc, IndexError, KindProgress, Pending, SearchIndex, WriteBatch,
};

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

    let taken = index.pending_vectors(MODEL, &[], 2, usize::MAX)?;
    assert_eq!(ids(&taken), ["new", "long"], "newest first, at most 2");
    assert_eq!(taken[1].doc.text, long, "read whole, every part");
    // A byte budget stops the round after the document that reaches it.
    assert_eq!(ids(&index.pending_vectors(MODEL, &[], 3, 1)?), ["new"]);

    index.add_vectors(embedded(taken))?;
    assert_eq!(index.pending_count(MODEL, None)?, 1);
    assert_eq!(index.pending_count(MODEL, Some(&cn("cn_b")))?, 0);
    assert_eq!(
        ids(&index.pending_vectors(MODEL, &[], 10, usize::MAX)?),
        ["old"]
    );
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
    let taken = index.pending_vectors(MODEL, &[], 10, usize::MAX)?;
    assert_eq!(taken.len(), 3);

    // While the queue computes, a sync writes a new version of one and removes another.
    upsert(&index, vec![doc("cn_a", "edited", "second version", 4)])?;
    index.write(WriteBatch {
        deletes: vec![(cn("cn_a"), DocId::parse("removed").expect("id"))],
        ..WriteBatch::default()
    })?;
    index.add_vectors(embedded(taken))?;

    // Only the unchanged one took its vectors; the new version waits for its own.
    let still = index.pending_vectors(MODEL, &[], 10, usize::MAX)?;
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

/// A new index in a temporary folder (kept while the folder is) holding `docs`.
fn index_of(docs: Vec<IndexDoc>) -> Result<(tempfile::TempDir, SearchIndex), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = SearchIndex::open(dir.path(), true)?;
    upsert(&index, docs)?;
    Ok((dir, index))
}

/// A document of `connector` named `path`, of type `mime`.
fn typed(connector: &str, id: &str, path: &str, mime: &str, updated_ms: i64) -> IndexDoc {
    let mut d = text_doc(
        connector,
        id,
        path,
        &format!("the text of {id}"),
        updated_ms,
    );
    d.info.meta.mime_type = mime.to_owned();
    d
}

#[test]
fn prose_is_taken_before_code_other_documents_data_and_logs_each_newest_first()
-> Result<(), IndexError> {
    let (_dir, index) = index_of(vec![
        typed("cn_a", "build-log", "build.log", "text/plain", 9),
        typed("cn_a", "main-rs", "src/main.rs", "text/x-rust", 8),
        typed("cn_a", "data-json", "data.json", "application/json", 7),
        typed("cn_a", "old-note", "notes/old.md", "text/markdown", 1),
        typed("cn_a", "new-note", "notes/new.txt", "text/plain", 5),
        typed("cn_a", "letter", "letter.pdf", "application/pdf", 3),
        typed("cn_a", "archive", "photos.zip", "application/zip", 6),
        typed("cn_a", "lib-py", "lib.py", "text/x-python", 4),
        typed("cn_a", "settings", "app.ini", "text/plain", 10),
        typed("cn_a", "expected", "tests/ui/err.stderr", "text/plain", 11),
    ])?;
    assert_eq!(
        ids(&index.pending_vectors(MODEL, &[], 20, usize::MAX)?),
        [
            "new-note",
            "letter",
            "old-note", // prose, newest first
            "main-rs",
            "lib-py", // code
            "expected",
            "archive", // other (plain text of an unknown extension)
            "settings",
            "data-json", // data (an .ini is configuration, whatever its type)
            "build-log", // logs
        ]
    );
    // A round smaller than a kind takes its newest.
    assert_eq!(
        ids(&index.pending_vectors(MODEL, &[], 2, usize::MAX)?),
        ["new-note", "letter"]
    );
    Ok(())
}

#[test]
fn within_a_kind_documents_without_vectors_come_before_the_rest_of_long_ones_which_is_read_back()
-> Result<(), IndexError> {
    let (_dir, index) = index_of(vec![
        typed("cn_a", "long-note", "long.md", "text/markdown", 9),
        typed("cn_a", "old-note", "old.txt", "text/plain", 2),
        typed("cn_a", "code", "main.rs", "text/x-rust", 8),
    ])?;
    // The queue embedded the first passage of the long note only.
    let mut taken = index.pending_vectors(MODEL, &[], 1, usize::MAX)?;
    assert_eq!(ids(&taken), ["long-note"]);
    let first = Embedding::new(MODEL, vec![(0, 4)], &[vec![0.5, -0.25, 1.0]]).unfinished();
    taken[0].doc.embedding = Some(first.clone());
    index.add_vectors(taken)?;

    // Still pending: after every note without vectors, even an older one, before any code.
    assert_eq!(index.pending_count(MODEL, None)?, 3);
    let next = index.pending_vectors(MODEL, &[], 10, usize::MAX)?;
    assert_eq!(ids(&next), ["old-note", "long-note", "code"]);
    assert_eq!(next[0].doc.embedding, None);
    assert_eq!(
        next[1].doc.embedding.as_ref(),
        Some(&first),
        "the first passages' vectors come back as they were stored, unfinished"
    );

    // The rest added, it leaves the queue.
    let mut long = next.into_iter().nth(1).expect("the long note");
    if let Some(e) = long.doc.embedding.as_mut() {
        e.extend(vec![(5, 9)], &[vec![1.0, 0.0, 0.0]], true);
    }
    index.add_vectors(vec![long])?;
    assert_eq!(
        ids(&index.pending_vectors(MODEL, &[], 10, usize::MAX)?),
        ["old-note", "code"]
    );
    Ok(())
}

#[test]
fn prose_inside_a_software_project_waits_behind_the_prose_outside_until_its_manifest_goes()
-> Result<(), IndexError> {
    let (_dir, index) = index_of(vec![
        // A source tree in a home folder: a crate with its manifest, its README and docs.
        typed(
            "cn_home",
            "manifest",
            "src/tokio/Cargo.toml",
            "application/toml",
            1,
        ),
        typed(
            "cn_home",
            "readme",
            "src/tokio/README.md",
            "text/markdown",
            9,
        ),
        typed(
            "cn_home",
            "guide",
            "src/tokio/docs/guide.md",
            "text/markdown",
            8,
        ),
        // A folder whose name starts like the project's is not inside it.
        typed(
            "cn_home",
            "ideas",
            "src/tokio-notes/ideas.md",
            "text/markdown",
            7,
        ),
        // The same path in another connector, which has no manifest there.
        typed(
            "cn_other",
            "elsewhere",
            "src/tokio/README.md",
            "text/markdown",
            6,
        ),
        // A file with a manifest's words in its name is not one.
        typed(
            "cn_home",
            "cargo-config",
            "tools/cargo-config.toml",
            "application/toml",
            0,
        ),
        typed("cn_home", "usage", "tools/usage.md", "text/markdown", 5),
        typed("cn_home", "letter", "letter.txt", "text/plain", 3),
        typed("cn_home", "note", "notes/plan.md", "text/markdown", 2),
    ])?;
    let own = ["ideas", "elsewhere", "usage", "letter", "note"];
    let mut order = own.to_vec();
    // Then the project's prose; data last.
    order.extend(["readme", "guide", "manifest", "cargo-config"]);
    // A round passes over the project's newer prose to the newest outside it, searching on
    // until it has its fill.
    assert_eq!(
        ids(&index.pending_vectors(MODEL, &[], 3, usize::MAX)?),
        own[..3]
    );
    assert_eq!(
        ids(&index.pending_vectors(MODEL, &[], 20, usize::MAX)?),
        order
    );
    assert_eq!(
        ids(&index.pending_vectors(MODEL, &[], 1, usize::MAX)?),
        ["ideas"]
    );

    // The prose outside is taken whole before the project's: the rest of a long note (its
    // first passages embedded) comes before the project's first passages.
    let mut taken = index.pending_vectors(MODEL, &[], own.len(), usize::MAX)?;
    assert_eq!(ids(&taken), own);
    let mut long_note = taken.remove(0);
    long_note.doc.embedding =
        Some(Embedding::new(MODEL, vec![(0, 4)], &[vec![0.5, -0.25, 1.0]]).unfinished());
    index.add_vectors(embedded(taken))?;
    index.add_vectors(vec![long_note])?;
    assert_eq!(
        ids(&index.pending_vectors(MODEL, &[], 3, usize::MAX)?),
        ["ideas", "readme", "guide"]
    );
    let rest = index.pending_vectors(MODEL, &[], 1, usize::MAX)?;
    index.add_vectors(embedded(rest))?;

    // Without its manifest the folder is no project: a new older note comes after its prose.
    index.write(WriteBatch {
        upserts: vec![typed(
            "cn_home",
            "new-note",
            "notes/new.md",
            "text/markdown",
            0,
        )],
        deletes: vec![(cn("cn_home"), DocId::parse("manifest").expect("id"))],
        ..WriteBatch::default()
    })?;
    assert_eq!(
        ids(&index.pending_vectors(MODEL, &[], 3, usize::MAX)?),
        ["readme", "guide", "new-note"]
    );
    Ok(())
}

#[test]
fn a_connector_put_first_is_taken_whole_before_the_others() -> Result<(), IndexError> {
    let (_dir, index) = index_of(vec![
        typed("cn_a", "a-note", "note.md", "text/markdown", 9),
        typed("cn_b", "b-code", "main.rs", "text/x-rust", 1),
        typed("cn_b", "b-note", "note.md", "text/markdown", 2),
    ])?;
    assert_eq!(
        ids(&index.pending_vectors(MODEL, &[cn("cn_b")], 10, usize::MAX)?),
        ["b-note", "b-code", "a-note"]
    );
    assert_eq!(
        ids(&index.pending_vectors(MODEL, &[], 10, usize::MAX)?),
        ["a-note", "b-note", "b-code"]
    );
    Ok(())
}

#[test]
fn embedding_progress_is_counted_per_kind() -> Result<(), IndexError> {
    let (_dir, index) = index_of(vec![
        typed("cn_a", "n1", "one.md", "text/markdown", 3),
        typed("cn_a", "n2", "two.txt", "text/plain", 2),
        typed("cn_a", "c1", "main.rs", "text/x-rust", 1),
        typed("cn_b", "n3", "three.md", "text/markdown", 1),
    ])?;
    let mut taken = index.pending_vectors(MODEL, &[], 2, usize::MAX)?;
    assert_eq!(ids(&taken), ["n1", "n2"]);
    taken[1].doc.embedding =
        Some(Embedding::new(MODEL, vec![(0, 4)], &[vec![1.0, 0.0, 0.0]]).unfinished());
    let n2 = taken.remove(1);
    index.add_vectors(embedded(taken))?;
    index.add_vectors(vec![n2])?;
    assert_eq!(
        index.embedding_by_kind(MODEL, Some(&cn("cn_a")))?,
        [
            KindProgress {
                kind: DocKind::Prose,
                documents: 2,
                embedded: 1,
                first_passages: 1
            },
            KindProgress {
                kind: DocKind::Code,
                documents: 1,
                embedded: 0,
                first_passages: 0
            },
        ]
    );
    assert_eq!(index.embedding_by_kind(MODEL, None)?[0].documents, 3);
    Ok(())
}
