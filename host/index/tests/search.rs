//! The index against real tantivy indexes in temporary folders.

use quarry_core::{ConnectorId, DocId};
use quarry_index::{
    IndexDoc, IndexError, SearchIndex, SearchRequest, SearchResults, SortBy, SortOrder, WriteBatch,
};

use common::text_doc;

mod common;

const DAY: i64 = 86_400_000;
const T0: i64 = 1_790_000_000_000;

fn cn(s: &str) -> ConnectorId {
    ConnectorId::parse(s).expect("valid connector id")
}

fn doc(connector: &str, id: &str, path: &str, text: &str, day: i64) -> IndexDoc {
    text_doc(connector, id, path, text, T0 + day * DAY)
}

fn request(query: &str) -> SearchRequest {
    SearchRequest::new(query, vec![cn("cn_a"), cn("cn_b")], 100)
}

fn ids(results: &SearchResults) -> Vec<String> {
    results
        .hits
        .iter()
        .map(|h| h.info.doc_id.as_str().to_owned())
        .collect()
}

fn corpus() -> Vec<IndexDoc> {
    vec![
        doc(
            "cn_a",
            "both",
            "notes/both.md",
            "The quarterly revenue grew while costs fell.",
            1,
        ),
        doc(
            "cn_a",
            "revenue",
            "notes/revenue.txt",
            "Revenue revenue revenue, all about revenue.",
            2,
        ),
        doc(
            "cn_a",
            "costs",
            "notes/costs.txt",
            "Costs are discussed here at length.",
            3,
        ),
        doc(
            "cn_b",
            "cafe",
            "mail/Café.html",
            "Le CAFÉ crème est délicieux.",
            4,
        ),
        doc(
            "cn_b",
            "report",
            "reports/Q3 report.pdf",
            "Revenue grew twelve percent. Draft only.",
            5,
        ),
        doc(
            "cn_b",
            "other",
            "other/x.md",
            "Nothing relevant in this one.",
            6,
        ),
    ]
}

fn index_with_corpus(dir: &tempfile::TempDir) -> SearchIndex {
    let index = SearchIndex::open(dir.path(), true).expect("index opens");
    index
        .write(WriteBatch {
            upserts: corpus(),
            ..WriteBatch::default()
        })
        .expect("batch commits");
    index
}

#[test]
fn documents_with_every_word_rank_first_and_every_result_has_one() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index_with_corpus(&dir);
    let results = index.search(&request("revenue costs"))?;
    let found = ids(&results);
    assert_eq!(results.total, 4);
    assert_eq!(
        found[0], "both",
        "the only document with both words ranks first: {found:?}"
    );
    assert_eq!(
        found[1..].iter().collect::<std::collections::BTreeSet<_>>(),
        ["costs", "report", "revenue"]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .iter()
            .collect()
    );
    assert!(results.hits[0].score >= 0.5 && results.hits[1].score < 0.5);
    let scores: Vec<f32> = results.hits.iter().map(|h| h.score).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    Ok(())
}

#[test]
fn words_match_without_regard_to_case_or_accents() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index_with_corpus(&dir);
    for query in ["cafe", "CAFÉ", "Café", "creme"] {
        assert_eq!(ids(&index.search(&request(query))?), ["cafe"], "{query}");
    }
    // The path is searchable too.
    assert_eq!(ids(&index.search(&request("reports"))?), ["report"]);
    Ok(())
}

#[test]
fn phrases_are_required_and_exclusions_rule_out() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index_with_corpus(&dir);
    let grew = index.search(&request("\"revenue grew\""))?;
    assert_eq!(grew.total, 2);
    assert!(
        ids(&index.search(&request("\"grew revenue\""))?).is_empty(),
        "order matters"
    );
    let mut found = ids(&index.search(&request("revenue -draft"))?);
    found.sort();
    assert_eq!(found, ["both", "revenue"]);
    assert_eq!(
        ids(&index.search(&request("revenue -\"grew twelve\" -\"all about\""))?),
        ["both"]
    );
    let nothing = index.search(&request("-revenue"))?;
    assert_eq!(nothing.total, 0);
    assert_eq!(nothing.warnings.len(), 1);
    Ok(())
}

#[test]
fn filters_apply_to_connectors_times_and_extensions() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index_with_corpus(&dir);
    let mut only_a = request("revenue");
    only_a.filters.connectors = vec![cn("cn_a")];
    assert_eq!(index.search(&only_a)?.total, 2);

    let mut window = request("revenue costs");
    window.filters.updated_from_ms = Some(T0 + 2 * DAY); // inclusive
    window.filters.updated_to_ms = Some(T0 + 5 * DAY); // exclusive
    let mut found = ids(&index.search(&window)?);
    found.sort();
    assert_eq!(found, ["costs", "revenue"]);

    let mut pdf = request("revenue");
    pdf.filters.extensions = Some(vec!["PDF".into(), "md".into()]);
    let mut found = ids(&index.search(&pdf)?);
    found.sort();
    assert_eq!(found, ["both", "report"]);

    // A long list of extensions filters as a short one does.
    let mut many = pdf.clone();
    let mut extensions: Vec<String> = (0..100).map(|n| format!("x{n}")).collect();
    extensions.extend(["pdf".to_owned(), "md".to_owned()]);
    many.filters.extensions = Some(extensions);
    let mut found = ids(&index.search(&many)?);
    found.sort();
    assert_eq!(found, ["both", "report"]);
    Ok(())
}

#[test]
fn sorts_and_pages_consistently() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index_with_corpus(&dir);
    let mut by_time = request("revenue costs relevant");
    by_time.sort_by = SortBy::UpdateTime;
    let newest = ids(&index.search(&by_time)?);
    assert_eq!(newest, ["other", "report", "costs", "revenue", "both"]);
    by_time.order = SortOrder::Ascending;
    let oldest = ids(&index.search(&by_time)?);
    assert_eq!(oldest, newest.iter().rev().cloned().collect::<Vec<_>>());

    let full = ids(&index.search(&request("revenue costs relevant"))?);
    let mut ascending = request("revenue costs relevant");
    ascending.order = SortOrder::Ascending;
    assert_eq!(
        ids(&index.search(&ascending)?),
        full.iter().rev().cloned().collect::<Vec<_>>()
    );
    for order in [SortOrder::Descending, SortOrder::Ascending] {
        for sort_by in [SortBy::Relevance, SortBy::UpdateTime] {
            let mut whole = request("revenue costs relevant");
            whole.order = order;
            whole.sort_by = sort_by;
            let expected = ids(&index.search(&whole)?);
            let mut paged = Vec::new();
            for offset in (0..7).step_by(2) {
                let mut page = whole.clone();
                page.offset = offset;
                page.limit = 2;
                let results = index.search(&page)?;
                assert_eq!(results.total, 5, "total is exact on every page");
                paged.extend(ids(&results));
            }
            assert_eq!(paged, expected, "{order:?} {sort_by:?}");
        }
    }
    Ok(())
}

#[test]
fn snippets_highlight_the_query_words() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index_with_corpus(&dir);
    let results = index.search(&request("costs"))?;
    for hit in &results.hits {
        assert!(!hit.snippet.highlights.is_empty(), "{hit:?}");
        let chars: Vec<char> = hit.snippet.text.chars().collect();
        for &(start, end) in &hit.snippet.highlights {
            let word: String = chars[start..end].iter().collect();
            assert_eq!(word.to_lowercase(), "costs", "{hit:?}");
        }
    }
    // A title-only match gets the start of the text, without highlights.
    let title = index.search(&request("x"))?;
    assert_eq!(title.hits[0].snippet.text, "Nothing relevant in this one.");
    assert!(title.hits[0].snippet.highlights.is_empty());
    Ok(())
}

#[test]
fn replaces_deletes_purges_and_reads_documents() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index_with_corpus(&dir);
    let mut changed = doc("cn_a", "costs", "notes/costs.txt", "Expenses only now.", 7);
    changed.page_starts = vec![0, 9];
    changed.metadata = vec![("author".into(), "Ada".into())];
    index.write(WriteBatch {
        upserts: vec![changed.clone()],
        deletes: vec![(cn("cn_a"), DocId::parse("revenue").expect("id"))],
        ..WriteBatch::default()
    })?;
    assert_eq!(index.num_docs().expect("count"), 5);
    let stored = index
        .document(&cn("cn_a"), &DocId::parse("costs").expect("id"))?
        .expect("stored");
    assert_eq!(stored, changed);
    assert!(
        ids(&index.search(&request("length"))?).is_empty(),
        "the old text is gone"
    );
    assert_eq!(ids(&index.search(&request("expenses"))?), ["costs"]);
    assert!(
        index
            .document(&cn("cn_a"), &DocId::parse("revenue").expect("id"))?
            .is_none()
    );

    index.write(WriteBatch {
        purge_connectors: vec![cn("cn_b")],
        ..WriteBatch::default()
    })?;
    assert_eq!(index.num_docs().expect("count"), 2);
    Ok(())
}

#[test]
fn one_writer_at_a_time_and_readers_follow_it() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index_with_corpus(&dir);
    assert!(matches!(
        SearchIndex::open(dir.path(), true),
        Err(IndexError::Busy)
    ));
    let reader = SearchIndex::open(dir.path(), false)?;
    assert_eq!(reader.num_docs().expect("count"), 6);
    assert!(matches!(
        reader.write(WriteBatch {
            upserts: corpus(),
            ..WriteBatch::default()
        }),
        Err(IndexError::ReadOnly)
    ));
    index.write(WriteBatch {
        deletes: vec![(cn("cn_a"), DocId::parse("both").expect("id"))],
        ..WriteBatch::default()
    })?;
    reader.refresh()?;
    assert_eq!(reader.num_docs().expect("count"), 5);
    drop(index);
    let reopened = SearchIndex::open(dir.path(), true)?;
    assert_eq!(
        reopened.num_docs().expect("count"),
        5,
        "commits survive reopening"
    );
    Ok(())
}

#[test]
fn hits_say_on_which_page_the_query_words_lie() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index_with_corpus(&dir);
    let pages = [
        "Preface about nothing much. ",
        "Chapter one on apples. ",
        "Chapter two on quinces and more. ",
    ];
    let mut book = doc("cn_a", "book", "books/book.pdf", &pages.concat(), 8);
    let mut start = 0;
    book.page_starts = pages
        .iter()
        .map(|p| {
            let at = u32::try_from(start).expect("short");
            start += p.len();
            at
        })
        .collect();
    index.write(WriteBatch {
        upserts: vec![book],
        ..WriteBatch::default()
    })?;
    let page_of = |query: &str| -> Result<Vec<(String, Option<u64>)>, IndexError> {
        Ok(index
            .search(&request(query))?
            .hits
            .into_iter()
            .map(|h| (h.info.doc_id.to_string(), h.page))
            .collect())
    };
    assert_eq!(page_of("quinces")?, [("book".to_owned(), Some(3))]);
    assert_eq!(page_of("apples")?, [("book".to_owned(), Some(2))]);
    // A document without pages has none; every corpus document is one.
    let costs = page_of("costs")?;
    assert!(
        !costs.is_empty() && costs.iter().all(|(_, page)| page.is_none()),
        "{costs:?}"
    );
    // Matched by its title only: the snippet is the text's start, on page 1.
    assert_eq!(page_of("book")?, [("book".to_owned(), Some(1))]);
    Ok(())
}
