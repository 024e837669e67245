//! The levers of a fused search ([`Fusion`]) against a real tantivy index, each shown changing
//! a ranking the way it promises: scaled scores, vector and term feedback, title weight,
//! passage aggregation, and the keyword side's tiers.

use common::text_doc;
use fused::{MODEL, fused, ids};

mod common;
mod fused;

use quarry_index::{
    Combine, Embedding, Fusion, IndexDoc, IndexError, Passages, SearchIndex, SearchResults,
    TermFeedback, VectorFeedback, WriteBatch,
};

/// A document `id` (title `id.txt`) with one vector per passage, the passages splitting its
/// text evenly; no vectors (pending) when `vectors` is empty.
fn doc(id: &str, text: &str, vectors: &[[f32; 4]]) -> IndexDoc {
    let mut doc = text_doc("cn_a", id, &format!("notes/{id}.txt"), text, 0);
    if !vectors.is_empty() {
        let len = u32::try_from(text.len()).expect("short text");
        let n = u32::try_from(vectors.len()).expect("few passages");
        let passages = (0..n).map(|i| (len * i / n, len * (i + 1) / n)).collect();
        let vectors: Vec<Vec<f32>> = vectors.iter().map(|v| v.to_vec()).collect();
        doc.embedding = Some(Embedding::new(MODEL, passages, &vectors));
    }
    doc
}

fn index_of(dir: &tempfile::TempDir, docs: Vec<IndexDoc>) -> Result<SearchIndex, IndexError> {
    let index = SearchIndex::open(dir.path(), true)?;
    index.write(WriteBatch {
        upserts: docs,
        ..WriteBatch::default()
    })?;
    Ok(index)
}

fn score(results: &SearchResults, id: &str) -> Option<f32> {
    results
        .hits
        .iter()
        .find(|h| h.info.doc_id.as_str() == id)
        .map(|h| h.score)
}

/// Three documents around the query, by cosine a 0.8, z 0.7, t 0.6: t lies on a's side of
/// the query, z apart; their texts `first`, `second`, `third`.
fn around_the_query(dir: &tempfile::TempDir) -> Result<SearchIndex, IndexError> {
    index_of(
        dir,
        vec![
            doc("a", "first", &[[0.8, 0.6, 0.0, 0.0]]),
            doc("z", "second", &[[0.7, 0.0, 0.714, 0.0]]),
            doc("t", "third", &[[0.6, 0.8, 0.0, 0.0]]),
        ],
    )
}

/// Semantic ranking alone, by reciprocal ranks, no feedback.
const MEANING: Fusion = Fusion::SEMANTIC_ONLY;

#[test]
fn vector_feedback_lifts_a_document_near_the_best_result_above_one_nearer_the_query_alone()
-> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = around_the_query(&dir)?;
    assert_eq!(
        ids(&index.search(&fused("anything", MEANING))?),
        ["a", "z", "t"]
    );
    let feedback = Fusion {
        vector_feedback: Some(VectorFeedback {
            docs: 1,
            weight: 1.0,
            agreement: None,
        }),
        ..MEANING
    };
    assert_eq!(
        ids(&index.search(&fused("anything", feedback))?),
        ["a", "t", "z"]
    );
    Ok(())
}

#[test]
fn scaled_scores_give_the_best_of_both_rankings_one_and_keep_pending_documents()
-> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = index_of(
        &dir,
        vec![
            doc("a", "alpha alpha", &[[1.0, 0.0, 0.0, 0.0]]),
            doc("b", "alpha beta gamma delta", &[[0.6, 0.8, 0.0, 0.0]]),
            doc("c", "nothing here", &[[0.0, 1.0, 0.0, 0.0]]),
            doc("p", "alpha", &[]),
        ],
    )?;
    let scores = Fusion {
        combine: Combine::Scores,
        vector_feedback: None,
        ..Fusion::HYBRID
    };
    let results = index.search(&fused("alpha", scores))?;
    assert_eq!(results.hits[0].info.doc_id.as_str(), "a", "{results:?}");
    assert_eq!(results.hits[0].score, 1.0, "best by keyword and by meaning");
    assert!(results.hits.iter().all(|h| (0.0..=1.0).contains(&h.score)));
    assert!(results.hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(score(&results, "p").is_some_and(|s| s > 0.0), "{results:?}");
    assert_eq!(results.warnings.len(), 1, "p is pending");
    // c is the worst by meaning and has no query word: nothing of either.
    assert_eq!(score(&results, "c"), Some(0.0));
    // Bounded: cosines as they are, so c's 0 and a's 1 stay, and b is in between.
    let bounded = Fusion {
        combine: Combine::BoundedScores,
        ..scores
    };
    let results = index.search(&fused("alpha", bounded))?;
    assert_eq!(results.hits[0].info.doc_id.as_str(), "a");
    assert!(score(&results, "b") > score(&results, "c"), "{results:?}");
    Ok(())
}

#[test]
fn scaled_scores_know_the_meaning_of_a_keyword_result_beyond_the_nearest() -> Result<(), IndexError>
{
    let dir = tempfile::tempdir().expect("temp dir");
    // 120 documents nearer the query than k, which alone has the word: the pool of the nearest
    // (100) leaves k out, yet its similarity is known and counted.
    let mut docs: Vec<IndexDoc> = (0..120)
        .map(|i| doc(&format!("n{i}"), "filler", &[[0.9, 0.1, 0.0, 0.0]]))
        .collect();
    docs.push(doc("o", "kestrel", &[[-0.5, 0.5, 0.0, 0.0]]));
    docs.push(doc("k", "kestrel", &[[0.5, 0.5, 0.0, 0.0]]));
    let index = index_of(&dir, docs)?;
    let gap = |results: &SearchResults| -> Option<f32> {
        Some(score(results, "k")? - score(results, "o")?)
    };
    // By ranks, neither is among the nearest: only their keyword ranks (alike but for the
    // tie's order) tell them apart.
    let ranks = index.search(&fused("kestrel", Fusion::RANKS))?;
    assert!(gap(&ranks).is_some_and(|g| g.abs() < 0.01), "{ranks:?}");
    let scores = Fusion {
        combine: Combine::Scores,
        vector_feedback: None,
        ..Fusion::HYBRID
    };
    // By scores, k's similarity (0.5) counts though it is not among the nearest: with the
    // word, it passes the 120 nearer documents; o (-0.5) does not.
    let results = index.search(&fused("kestrel", scores))?;
    assert_eq!(ids(&results)[0], "k", "{results:?}");
    assert!(score(&results, "o").is_none_or(|o| o < 0.5), "{results:?}");
    Ok(())
}

#[test]
fn term_feedback_finds_a_document_by_a_word_of_the_best_result_only() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = index_of(
        &dir,
        vec![
            doc("a", "alpha beta beta", &[[1.0, 0.0, 0.0, 0.0]]),
            doc("b", "beta gamma", &[[0.0, 1.0, 0.0, 0.0]]),
            doc("c", "gamma delta", &[[0.0, 0.0, 1.0, 0.0]]),
        ],
    )?;
    // Keyword only (the semantic weight 0): b has no query word.
    let words = Fusion {
        keyword: 1.0,
        semantic: 0.0,
        ..MEANING
    };
    let plain = index.search(&fused("alpha", words))?;
    assert_eq!(score(&plain, "b"), Some(0.0), "{plain:?}");
    let expanded = Fusion {
        term_feedback: Some(TermFeedback {
            docs: 1,
            terms: 2,
            original: 0.5,
        }),
        ..words
    };
    let results = index.search(&fused("alpha", expanded))?;
    assert_eq!(ids(&results)[..2], ["a", "b"], "{results:?}");
    assert!(score(&results, "b").is_some_and(|s| s > 0.0));
    assert_eq!(score(&results, "c"), Some(0.0), "gamma is not typical of a");
    Ok(())
}

#[test]
fn a_title_weight_ranks_a_word_in_the_title_above_the_same_word_in_the_text()
-> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = index_of(
        &dir,
        vec![
            doc(
                "other",
                "osprey osprey facts and more words here",
                &[[0.0, 1.0, 0.0, 0.0]],
            ),
            doc(
                "osprey",
                "facts and more words here",
                &[[0.0, 1.0, 0.0, 0.0]],
            ),
        ],
    )?;
    let words = Fusion {
        keyword: 1.0,
        semantic: 0.0,
        ..MEANING
    };
    let titled = Fusion {
        title: 1.0,
        ..words
    };
    let results = index.search(&fused("osprey", titled))?;
    assert_eq!(ids(&results)[0], "osprey", "{results:?}");
    Ok(())
}

#[test]
fn the_mean_of_the_best_passages_prefers_a_document_good_throughout() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = index_of(
        &dir,
        vec![
            doc(
                "once",
                "one good passage and one unrelated",
                &[[0.95, 0.31, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]],
            ),
            doc(
                "throughout",
                "two passages both about it",
                &[[0.9, 0.44, 0.0, 0.0], [0.9, 0.0, 0.44, 0.0]],
            ),
        ],
    )?;
    assert_eq!(
        ids(&index.search(&fused("x", MEANING))?),
        ["once", "throughout"]
    );
    for passages in [Passages::MeanOfBest(2), Passages::BestAndSecond(0.5)] {
        let results = index.search(&fused(
            "x",
            Fusion {
                passages,
                ..MEANING
            },
        ))?;
        assert_eq!(ids(&results), ["throughout", "once"], "{passages:?}");
    }
    Ok(())
}

#[test]
fn without_tiers_the_keyword_side_ranks_by_bm25_alone() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    // `all` has both words once in a long text; `one` has the rarer word, many times, in a
    // short one (egret is in many other documents).
    let long = format!("heron egret {}", "filler ".repeat(200));
    let mut docs: Vec<IndexDoc> = (0..10)
        .map(|i| doc(&format!("e{i}"), "egret", &[[0.0, 1.0, 0.0, 0.0]]))
        .collect();
    docs.push(doc("all", &long, &[[0.0, 1.0, 0.0, 0.0]]));
    docs.push(doc(
        "one",
        "heron heron heron heron",
        &[[0.0, 1.0, 0.0, 0.0]],
    ));
    let index = index_of(&dir, docs)?;
    let words = Fusion {
        keyword: 1.0,
        semantic: 0.0,
        ..MEANING
    };
    assert_eq!(ids(&index.search(&fused("heron egret", words))?)[0], "all");
    let untiered = Fusion {
        tiers: false,
        ..words
    };
    assert_eq!(
        ids(&index.search(&fused("heron egret", untiered))?)[0],
        "one"
    );
    Ok(())
}

#[test]
fn the_default_ranks_by_keyword_while_every_vector_is_pending() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = index_of(
        &dir,
        vec![
            doc("twice", "wren wren", &[]),
            doc("once", "wren and other words besides", &[]),
            doc("none", "nothing of it", &[]),
        ],
    )?;
    let results = index.search(&fused("wren", Fusion::HYBRID))?;
    assert_eq!(ids(&results), ["twice", "once"], "{results:?}");
    assert_eq!(results.warnings.len(), 1, "{results:?}");
    Ok(())
}

#[test]
fn vector_feedback_with_agreement_draws_only_on_documents_both_rankings_found()
-> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("temp dir");
    // Only z has the query's word.
    let index = around_the_query(&dir)?;
    // Meaning all but decides; the keyword ranking is there to agree or not.
    let feedback = |agreement| Fusion {
        keyword: 0.01,
        vector_feedback: Some(VectorFeedback {
            docs: 1,
            weight: 1.0,
            agreement,
        }),
        ..MEANING
    };
    // From the best by meaning, a, which no keyword ranking found: towards t.
    assert_eq!(
        ids(&index.search(&fused("second", feedback(None)))?),
        ["a", "t", "z"]
    );
    // Only z is in both rankings: the query moves towards it instead.
    assert_eq!(
        ids(&index.search(&fused("second", feedback(Some(20))))?),
        ["z", "a", "t"]
    );
    Ok(())
}
