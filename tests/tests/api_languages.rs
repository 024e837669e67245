//! Keyword search in Chinese, Japanese and Korean through the real server: files of a watched
//! folder, written as people write them (no spaces between words, lines wrapped mid-word), found
//! by a word from the middle of a sentence, with highlights on exactly that word.

use quarry_tests::corpus::{FixtureFile, MARCH_2026_MS};
use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};

/// The folder: a Chinese meeting note (wrapped mid-word), the same text in traditional
/// characters, a Japanese and a Korean note, and an English one.
fn files() -> Vec<FixtureFile> {
    let file = |path, text| FixtureFile::text(path, text, MARCH_2026_MS);
    vec![
        file(
            "会议记录.md",
            "# 周会\n\n今天我们讨论了全文搜索引擎的设计，以及如何处理中文分词问\n题。下周继续测试Rust语言编写的插件。\n",
        ),
        file(
            "會議紀錄.txt",
            "這份報告說明軟體開發流程與資料庫備份策略。\n",
        ),
        file(
            "日記.txt",
            "東京タワーの近くにある小さな喫茶店で、毎朝コーヒーを飲みます。\n",
        ),
        file(
            "보고서.txt",
            "우리는 도서관에서 검색엔진에 대해 이야기했습니다.\n",
        ),
        file("notes.txt", "A plain English note about search engines.\n"),
    ]
}

struct World {
    q: Quarry,
    key: String,
}

fn world() -> World {
    let mut q = Quarry::new();
    q.without_model();
    q.serve_folders(&[("Notes", files())]);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    World { q, key }
}

impl World {
    fn results(&self, query: &str) -> Vec<Value> {
        let body = self.q.search_ok(
            &self.key,
            json!({"query": query, "semantic_search": false, "limit": 20}),
        );
        body["results"].as_array().cloned().unwrap_or_default()
    }

    fn paths(&self, query: &str) -> Vec<String> {
        let mut paths: Vec<String> = self
            .results(query)
            .iter()
            .map(|r| r["path"].as_str().unwrap_or_default().to_owned())
            .collect();
        paths.sort();
        paths
    }
}

/// The highlighted words of a result's snippet (highlights are character offsets).
fn highlighted(result: &Value) -> Vec<String> {
    let snippet: Vec<char> = result["snippet"]
        .as_str()
        .unwrap_or_default()
        .chars()
        .collect();
    result["highlights"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| {
            let (start, end) = (
                h["start"].as_u64().unwrap_or(0) as usize,
                h["end"].as_u64().unwrap_or(0) as usize,
            );
            snippet.get(start..end).unwrap_or_default().iter().collect()
        })
        .collect()
}

#[test]
fn cjk_words_from_the_middle_of_sentences_are_found_with_exact_highlights() {
    let w = world();
    for (query, path) in [
        ("搜索引擎", "会议记录.md"),
        ("分词问题", "会议记录.md"),
        ("喫茶店", "日記.txt"),
        ("コーヒー", "日記.txt"),
        ("도서관", "보고서.txt"),
    ] {
        let results = w.results(query);
        assert_eq!(results.len(), 1, "{query}: {results:?}");
        assert_eq!(results[0]["path"], path, "{query}");
        assert_eq!(highlighted(&results[0]), [query], "{query}: {}", results[0]);
    }
    // `分词问题` is wrapped after `问` in the file: the snippet joins the line as it reads.
    let wrapped = &w.results("分词问题")[0];
    assert!(
        wrapped["snippet"]
            .as_str()
            .unwrap_or_default()
            .contains("处理中文分词问题。下周"),
        "{wrapped}"
    );
}

#[test]
fn phrases_exclusions_variants_and_names_work_across_scripts() {
    let w = world();
    assert_eq!(w.paths("\"全文搜索\""), ["会议记录.md"]);
    assert!(w.paths("\"搜索全文\"").is_empty());
    assert_eq!(w.paths("Rust语言"), ["会议记录.md"]);
    // Traditional characters in the file, simplified in the query, and the reverse.
    assert_eq!(w.paths("软体开发"), ["會議紀錄.txt"]);
    assert_eq!(w.paths("軟體"), ["會議紀錄.txt"]);
    assert_eq!(w.paths("會議"), ["会议记录.md", "會議紀錄.txt"]);
    // A word in the name only.
    assert_eq!(w.paths("日記"), ["日記.txt"]);
    // An exclusion in one script, a word in another.
    assert_eq!(w.paths("search -搜索"), ["notes.txt"]);
    assert_eq!(w.paths("搜索 -全文"), Vec::<String>::new());
}
