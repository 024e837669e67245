//! An index as a team host's copy: documents exported whole with their vectors (what `quarry
//! migrate` logs), applied from the log's entries at their positions, and where the copy stands
//! recorded in its commits.

use quarry_core::team_log::LogEntry;
use quarry_index::{Applied, Embedding, IndexDoc, IndexError, SearchIndex, WriteBatch};

use common::text_doc;

mod common;

/// Documents with every kind of vectors a data folder's index holds.
fn documents() -> Vec<IndexDoc> {
    let mut plain = text_doc("cn_a", "plain", "plain.txt", "no vectors yet", 1);
    plain.metadata = vec![("author".into(), "Zoë".into())];
    let mut complete = text_doc("cn_a", "complete", "complete.txt", "harbour pilots", 2);
    complete.embedding = Some(Embedding::new(
        "model-a",
        vec![(0, 7), (8, 14)],
        &[vec![0.5, -0.25, 1.0], vec![0.0, 1.0, 0.5]],
    ));
    let mut first_only = text_doc("cn_b", "first-only", "first.txt", "gale tore the jib", 3);
    first_only.embedding =
        Some(Embedding::new("model-a", vec![(0, 4)], &[vec![1.0, 0.0, 0.0]]).unfinished());
    let mut none_found = text_doc("cn_b", "none-found", "empty.txt", "", 4);
    none_found.embedding = Some(Embedding::new("model-a", Vec::new(), &[]));
    let mut other_model = text_doc("cn_b", "other-model", "other.txt", "lighthouse", 5);
    other_model.embedding = Some(Embedding::new(
        "model-b",
        vec![(0, 10)],
        &[vec![0.0, 0.0, 1.0, 0.5]],
    ));
    let mut long = text_doc("cn_a", "long", "long.txt", &"word ".repeat(500_000), 6);
    long.page_starts = vec![0, 1_000_000];
    vec![plain, complete, first_only, none_found, other_model, long]
}

fn sorted(mut docs: Vec<IndexDoc>) -> Vec<IndexDoc> {
    docs.sort_by(|a, b| a.info.doc_id.as_str().cmp(b.info.doc_id.as_str()));
    docs
}

fn exported(index: &SearchIndex) -> Result<Vec<IndexDoc>, IndexError> {
    Ok(sorted(index.export()?.collect::<Result<_, _>>()?))
}

#[test]
fn an_index_exported_and_applied_to_another_from_the_log_holds_the_same_documents_and_vectors()
-> Result<(), IndexError> {
    let from_dir = tempfile::tempdir().expect("temp dir");
    let from = SearchIndex::open(from_dir.path(), true)?;
    from.write(WriteBatch {
        upserts: documents(),
        ..WriteBatch::default()
    })?;
    let out = exported(&from)?;
    assert_eq!(out, sorted(documents()));

    // As the team's log gives them back, each at its position.
    let entries: Vec<LogEntry> = out
        .iter()
        .enumerate()
        .map(|(n, doc)| LogEntry {
            connector: doc.info.connector.clone(),
            doc: doc.info.doc_id.clone(),
            position: n as u64 + 1,
            record: Some(quarry_index::encode_record(doc)),
        })
        .collect();
    let to_dir = tempfile::tempdir().expect("temp dir");
    let to = SearchIndex::open(to_dir.path(), true)?;
    assert_eq!(to.applied()?, None);
    let applied = Applied {
        team: "df_team".into(),
        position: entries.len() as u64,
    };
    to.follow(false, entries, applied.clone())?;
    assert_eq!(exported(&to)?, out);
    assert_eq!(to.applied()?, Some(applied));
    // Documents whose vectors are all there are not pending; the others are.
    assert_eq!(to.pending_count("model-a", None)?, 4);
    Ok(())
}

#[test]
fn a_copy_applies_removals_in_order_and_a_reset_empties_it() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = SearchIndex::open(dir.path(), true)?;
    let doc = text_doc("cn_a", "note", "note.txt", "the harbour log", 1);
    let entry = |position: u64, record: Option<Vec<u8>>| LogEntry {
        connector: doc.info.connector.clone(),
        doc: doc.info.doc_id.clone(),
        position,
        record,
    };
    let at = |position| Applied {
        team: "df_team".into(),
        position,
    };
    let record = quarry_index::encode_record(&doc);
    index.follow(false, vec![entry(1, Some(record.clone()))], at(1))?;
    assert_eq!(index.num_docs()?, 1);
    // Written, removed and written again within one read: the last change stands.
    index.follow(
        false,
        vec![entry(2, None), entry(3, Some(record.clone()))],
        at(3),
    )?;
    assert_eq!(index.num_docs()?, 1);
    index.follow(false, vec![entry(4, None)], at(4))?;
    assert_eq!(index.num_docs()?, 0);
    index.follow(false, vec![entry(5, Some(record))], at(5))?;
    // A copy of another team's index, or of one that went back, starts again empty.
    index.follow(true, Vec::new(), at(0))?;
    assert_eq!(index.num_docs()?, 0);
    assert_eq!(index.applied()?, Some(at(0)));
    Ok(())
}
