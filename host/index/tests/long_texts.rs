//! Long texts against a real tantivy index: stored in parts, read back whole, the snippet of a
//! passage deep in the text taken from the part it lies in, and every part replaced and removed
//! with its document.

use std::sync::Arc;

use common::text_doc;

mod common;

use quarry_core::{ConnectorId, DocId};
use quarry_index::{
    Embedding, Fusion, IndexDoc, Ranking, SearchIndex, SearchRequest, SemanticQuery, WriteBatch,
};

fn long_doc(text: &str, embedding: Option<Embedding>) -> IndexDoc {
    IndexDoc {
        embedding,
        ..text_doc("cn_a", "long", "long.txt", text, 1_790_000_000_000)
    }
}

fn write(index: &SearchIndex, doc: IndexDoc) {
    index
        .write(WriteBatch {
            upserts: vec![doc],
            ..WriteBatch::default()
        })
        .expect("written");
}

#[test]
fn a_long_text_is_stored_in_parts_and_read_back_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = SearchIndex::open(dir.path(), true).expect("index");
    // About 5 MiB of filler (and some non-ASCII, so parts end on character boundaries), with
    // one sentence three and a half megabytes in.
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 3_500_000 {
        text.push_str(&format!("Filler line {i} of the long text, café crème. "));
        i += 1;
    }
    let deep_start = text.len();
    text.push_str("The zeppelin lands at dawn near the old harbour.");
    let deep_end = text.len();
    while text.len() < 5 << 20 {
        text.push_str(&format!("More filler {i} after the news. "));
        i += 1;
    }
    let passages = vec![(0, 40), (deep_start as u32, deep_end as u32)];
    let vectors = vec![vec![1.0, 0.0, 0.0, 0.0], vec![0.0, 1.0, 0.0, 0.0]];
    let embedding = Embedding::new("test-model", passages, &vectors);
    write(&index, long_doc(&text, Some(embedding)));

    let connector = ConnectorId::parse("cn_a").expect("id");
    let id = DocId::parse("long").expect("id");
    let back = index
        .document(&connector, &id)
        .expect("read")
        .expect("found");
    assert_eq!(back.text.len(), text.len());
    assert!(back.text == text, "every part, in order");
    assert_eq!(
        index.num_docs().expect("count"),
        1,
        "parts are not documents"
    );

    // Semantic: the best passage lies in the fourth part; its snippet comes from there.
    let mut request = SearchRequest::new("zeppelin", vec![connector.clone()], 10);
    request.ranking = Ranking::Fused(
        SemanticQuery {
            model: "test-model".to_owned(),
            vector: Arc::new(vec![0.0, 1.0, 0.0, 0.0]),
        },
        Fusion::SEMANTIC_ONLY,
    );
    let results = index.search(&request).expect("search");
    assert_eq!(results.hits.len(), 1);
    let snippet = &results.hits[0].snippet;
    assert!(
        snippet.text.contains("zeppelin lands at dawn"),
        "{}",
        snippet.text
    );
    assert!(!snippet.highlights.is_empty());
    // Keyword: the whole text is searchable, though stored in parts.
    let keyword = index
        .search(&SearchRequest::new("harbour", vec![connector.clone()], 10))
        .expect("search");
    assert_eq!(keyword.hits.len(), 1);

    // A new version with a short text replaces every part; removing it removes the rest.
    write(&index, long_doc("Now a short note.", None));
    let back = index
        .document(&connector, &id)
        .expect("read")
        .expect("found");
    assert_eq!(back.text, "Now a short note.");
    assert!(
        index
            .search(&SearchRequest::new("zeppelin", vec![connector.clone()], 10))
            .expect("search")
            .hits
            .is_empty()
    );
    index
        .write(WriteBatch {
            deletes: vec![(connector.clone(), id.clone())],
            ..WriteBatch::default()
        })
        .expect("deleted");
    assert!(index.document(&connector, &id).expect("read").is_none());
    assert_eq!(index.num_docs().expect("count"), 0);
}
