//! Semantic search across languages through the real server with the multilingual model
//! (multilingual-e5-small, as `scripts/fetch-model.sh multilingual-e5-small` installs it): a
//! question in German, French, Chinese or Japanese finds the English note that answers it, and
//! an English question finds the German, French or Korean note. No query shares a word with its
//! answer, so keyword search finds none of them. (The model leans towards notes in the query's
//! own language: a Chinese note on health outranks the English note on revenue for a Chinese
//! question on revenue; docs/languages.md has the figures.)

use quarry_tests::corpus::{FixtureFile, MARCH_2026_MS, topics};
use quarry_tests::quarry::Quarry;
use serde_json::json;

/// The semantic tests' four English notes and three in other languages.
fn notes() -> Vec<FixtureFile> {
    let mut notes = topics();
    notes.extend([
        FixtureFile::text(
            "wetter.txt",
            "Morgen wird es stürmisch und kalt, mit starkem Schneefall in den Alpen.",
            MARCH_2026_MS,
        ),
        FixtureFile::text(
            "jardin.txt",
            "Arrosez les tomates le soir et arrachez les mauvaises herbes du potager.",
            MARCH_2026_MS,
        ),
        FixtureFile::text(
            "건강.txt",
            "매일 충분한 물을 마시고 여덟 시간 잠을 자는 것이 건강에 매우 중요합니다.",
            MARCH_2026_MS,
        ),
    ]);
    notes
}

#[test]
fn a_question_in_one_language_finds_the_note_written_in_another() {
    let mut q = Quarry::new();
    q.with_model(quarry_tests::multilingual_model_dir());
    q.serve_folders(&[("Notes", notes())]);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);

    let cases = [
        // German, French, Chinese and Japanese questions; English answers.
        ("Mein Welpe rennt gern draußen herum", "pets.txt"),
        ("Wie lange muss ein Brotlaib im Ofen bleiben?", "baking.txt"),
        (
            "Quels vêtements emporter pour des vacances à la montagne ?",
            "travel.txt",
        ),
        ("公司这个季度的收入增长了多少？", "finance.md"),
        ("パンを焼く時間はどのくらいですか", "baking.txt"),
        // English questions; German, French and Korean answers.
        ("Will it snow tomorrow?", "wetter.txt"),
        ("How do I look after a vegetable garden?", "jardin.txt"),
        ("How much sleep and water does a person need?", "건강.txt"),
    ];
    let mut wrong = Vec::new();
    for (query, expected) in cases {
        let keyword = q.search_ok(&key, json!({"query": query, "semantic_search": false}));
        assert_eq!(keyword["total"], 0, "{query:?} shares a word: {keyword}");
        let semantic = q.search_ok(&key, json!({ "query": query }));
        assert_eq!(semantic["mode"], "semantic", "{semantic}");
        assert_eq!(
            semantic["total"], 7,
            "every note is a candidate: {semantic}"
        );
        let first = semantic["results"][0]["path"].as_str().unwrap_or_default();
        if first != expected {
            wrong.push(format!("{query:?} found {first}, not {expected}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
