//! Fused (semantic and keyword) searches against a real tantivy index: candidates from either
//! ranking, scores relative to the best possible, sorts and paging.

use common::text_doc;
use fused::{MODEL, fused, ids};

mod common;
mod fused;

use quarry_core::ConnectorId;
use quarry_index::{
    Embedding, Fusion, IndexDoc, IndexError, SearchIndex, SearchRequest, SortBy, SortOrder,
    WriteBatch,
};

const DAY: i64 = 86_400_000;
const T0: i64 = 1_790_000_000_000;

fn cn() -> ConnectorId {
    ConnectorId::parse("cn_a").expect("valid connector id")
}

/// A document updated on `day`, with one passage (its whole text) when `vector` is given.
fn doc(id: &str, text: &str, day: i64, vector: Option<[f32; 4]>) -> IndexDoc {
    IndexDoc {
        embedding: vector.map(|v| {
            let end = u32::try_from(text.len()).expect("short text");
            Embedding::new(MODEL, vec![(0, end)], &[v.to_vec()])
        }),
        ..text_doc("cn_a", id, &format!("notes/{id}.txt"), text, T0 + day * DAY)
    }
}

/// `a`, `b` and `d` have the query word; all have vectors, nearest the query in the order a,
/// b, c, d (c and d equally far, c first by address). Newest first: d, c, b, a.
fn index(dir: &tempfile::TempDir) -> Result<SearchIndex, IndexError> {
    index_with_d(dir, Some([0.0, 0.0, 0.0, 1.0]))
}

/// As [`index`], `d` with the vector `d` (`None`: its vectors are pending).
fn index_with_d(dir: &tempfile::TempDir, d: Option<[f32; 4]>) -> Result<SearchIndex, IndexError> {
    let index = SearchIndex::open(dir.path(), true)?;
    index.write(WriteBatch {
        upserts: vec![
            doc("a", "alpha beta", 1, Some([1.0, 0.0, 0.0, 0.0])),
            doc("b", "alpha gamma", 2, Some([0.8, 0.6, 0.0, 0.0])),
            doc("c", "delta epsilon", 3, Some([0.0, 1.0, 0.0, 0.0])),
            doc("d", "alpha", 4, d),
        ],
        ..WriteBatch::default()
    })?;
    Ok(index)
}

#[test]
fn semantic_scores_are_relative_to_the_best_possible_and_rounded() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = index(&dir)?;
    let results = index.search(&fused("alpha", Fusion::SEMANTIC_ONLY))?;
    assert_eq!(
        ids(&results),
        ["a", "b", "c", "d"],
        "nearest first, no keyword"
    );
    assert_eq!(results.total, 4);
    assert!(results.warnings.is_empty(), "{:?}", results.warnings);
    let scores: Vec<f32> = results.hits.iter().map(|h| h.score).collect();
    // 1/(k + rank) over 1/(k + 1), k = 60, to four decimals.
    assert_eq!(scores, [1.0, 0.9839, 0.9683, 0.9531]);
    // A semantic hit's snippet is its best passage, though it has no query word.
    assert_eq!(results.hits[2].snippet.text, "delta epsilon");
    Ok(())
}

#[test]
fn hybrid_fuses_candidates_of_both_rankings() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = index(&dir)?;
    let results = index.search(&fused("alpha", Fusion::HYBRID))?;
    assert_eq!(results.total, 4, "semantic-only c counts");
    let mut found = ids(&results);
    found.sort_unstable();
    assert_eq!(found, ["a", "b", "c", "d"]);
    assert!(results.hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(results.hits.iter().all(|h| (0.0..=1.0).contains(&h.score)));
    // In both rankings and near the top of each, a and b beat c (semantic only) and d (first by
    // keyword, last by meaning).
    let position = |id: &str| ids(&results).iter().position(|x| *x == id);
    assert!(position("a") < position("c") && position("b") < position("c"));
    assert!(position("a") < position("d") && position("b") < position("d"));

    let mut ascending = fused("alpha", Fusion::HYBRID);
    ascending.order = SortOrder::Ascending;
    let mut reversed = ids(&results);
    reversed.reverse();
    assert_eq!(ids(&index.search(&ascending)?), reversed);
    Ok(())
}

#[test]
fn hybrid_sorts_by_update_time_and_pages() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = index(&dir)?;
    let mut request = fused("alpha", Fusion::HYBRID);
    request.sort_by = SortBy::UpdateTime;
    assert_eq!(ids(&index.search(&request)?), ["d", "c", "b", "a"]);
    request.order = SortOrder::Ascending;
    assert_eq!(ids(&index.search(&request)?), ["a", "b", "c", "d"]);
    request.order = SortOrder::Descending;
    request.offset = 1;
    request.limit = 2;
    let page = index.search(&request)?;
    assert_eq!(ids(&page), ["c", "b"]);
    assert_eq!(
        page.total, 4,
        "the total counts every candidate, not the page"
    );
    Ok(())
}

#[test]
fn a_semantic_hit_names_the_page_of_its_best_passage() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = SearchIndex::open(dir.path(), true)?;
    let (one, two) = ("First page on lemons. ", "Second page on harbours.");
    let mut paged = doc("paged", &format!("{one}{two}"), 1, None);
    let split = u32::try_from(one.len()).expect("short");
    let end = u32::try_from(one.len() + two.len()).expect("short");
    paged.page_starts = vec![0, split];
    paged.embedding = Some(Embedding::new(
        MODEL,
        vec![(0, split), (split, end)],
        &[vec![0.0, 1.0, 0.0, 0.0], vec![1.0, 0.0, 0.0, 0.0]],
    ));
    index.write(WriteBatch {
        upserts: vec![paged],
        ..WriteBatch::default()
    })?;
    // `fused` asks for the query "alpha" (in no passage) with the vector nearest the second one.
    let results = index.search(&fused("alpha", Fusion::HYBRID))?;
    assert_eq!(ids(&results), ["paged"]);
    assert_eq!(results.hits[0].page, Some(2));
    assert_eq!(results.hits[0].snippet.text, "Second page on harbours.");
    Ok(())
}

#[test]
fn a_document_without_vectors_yet_takes_its_keyword_rank_and_is_counted() -> Result<(), IndexError>
{
    let dir = tempfile::tempdir().expect("temp dir");
    let index = index_with_d(&dir, None)?;
    // Even with the semantic ranking alone, d (pending) is found: it ranks by meaning as it
    // ranks by keyword (among a, b and d, which have the word), so at least as high as c, which
    // is the farthest of those with vectors.
    let results = index.search(&fused("alpha", Fusion::SEMANTIC_ONLY))?;
    let score = |id: &str| {
        results
            .hits
            .iter()
            .find(|h| h.info.doc_id.as_str() == id)
            .map(|h| h.score)
    };
    assert!(score("d").is_some(), "{:?}", ids(&results));
    assert!(score("d") >= score("c"), "{results:?}");
    assert_eq!(ids(&results).len(), 4);
    assert_eq!(results.total, 4);
    assert_eq!(
        results.warnings,
        [
            "1 document is not searchable by meaning yet (their embeddings are being computed); \
          until then they are ranked by keyword"
        ]
    );
    // A filter that leaves d out leaves the warning out.
    let mut others = fused("alpha", Fusion::SEMANTIC_ONLY);
    others.query = "alpha -d".to_owned();
    others.filters.extensions = Some(vec!["none".to_owned()]);
    assert!(index.search(&others)?.warnings.is_empty());
    // Keyword searches know nothing of vectors.
    let keyword = index.search(&SearchRequest::new("alpha", vec![cn()], 10))?;
    assert!(keyword.warnings.is_empty());
    Ok(())
}
