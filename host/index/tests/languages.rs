//! Keyword search in Chinese, Japanese and Korean (and mixed with Latin text), against real
//! tantivy indexes in temporary folders.

use quarry_core::ConnectorId;
use quarry_index::{IndexDoc, IndexError, SearchIndex, SearchRequest, WriteBatch};

use common::text_doc;

mod common;

fn cn() -> ConnectorId {
    ConnectorId::parse("cn_a").expect("valid connector id")
}

fn doc(id: &str, text: &str) -> IndexDoc {
    text_doc("cn_a", id, &format!("{id}.txt"), text, 1_790_000_000_000)
}

/// The documents of the tests: a sentence each, without spaces where the language has none.
fn corpus() -> Vec<IndexDoc> {
    vec![
        doc(
            "zh",
            "今天我们在图书馆里讨论了全文搜索引擎的设计，以及如何处理中文分词问题。",
        ),
        doc("zh_hant", "這份報告說明軟體開發流程與資料庫備份策略。"),
        doc("zh_other", "中国的文化历史悠久。"),
        doc(
            "ja",
            "東京タワーの近くにある小さな喫茶店で、毎朝コーヒーを飲みます。",
        ),
        doc("ja_half", "新しいｺﾝﾋﾟｭｰﾀｰを買いました。"),
        doc("ko", "우리는 도서관에서 검색엔진에 대해 이야기했습니다."),
        doc(
            "mixed",
            "Quarry 支持Rust语言编写的插件，also plain English words. ＦＵＬＬ width ２０２６.",
        ),
    ]
}

fn index(dir: &tempfile::TempDir) -> Result<SearchIndex, IndexError> {
    let index = SearchIndex::open(dir.path(), true)?;
    index.write(WriteBatch {
        upserts: corpus(),
        ..WriteBatch::default()
    })?;
    Ok(index)
}

fn found(index: &SearchIndex, query: &str) -> Result<Vec<String>, IndexError> {
    let results = index.search(&SearchRequest::new(query, vec![cn()], 20))?;
    let mut ids: Vec<String> = results
        .hits
        .iter()
        .map(|h| h.info.doc_id.as_str().to_owned())
        .collect();
    ids.sort();
    Ok(ids)
}

/// The highlighted words of the first hit, as text.
fn highlighted(index: &SearchIndex, query: &str) -> Result<Vec<String>, IndexError> {
    let results = index.search(&SearchRequest::new(query, vec![cn()], 20))?;
    let hit = results.hits.first().expect("a hit");
    let chars: Vec<char> = hit.snippet.text.chars().collect();
    Ok(hit
        .snippet
        .highlights
        .iter()
        .map(|&(start, end)| chars[start..end].iter().collect())
        .collect())
}

#[test]
fn a_chinese_word_from_the_middle_of_a_sentence_is_found_and_highlighted() -> Result<(), IndexError>
{
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index(&dir)?;
    for word in ["搜索", "搜索引擎", "图书馆", "分词"] {
        assert_eq!(found(&index, word)?, ["zh"], "{word}");
        assert_eq!(highlighted(&index, word)?, [word], "{word}");
    }
    // One character finds every document that has it.
    assert_eq!(found(&index, "文")?, ["zh", "zh_other"]);
    Ok(())
}

#[test]
fn only_whole_words_are_highlighted_and_single_characters_are_ranked() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = SearchIndex::open(dir.path(), true)?;
    index.write(WriteBatch {
        upserts: vec![
            doc("stray", "我们讨论了搜索引擎。索引文件很大，索引要重建。"),
            doc("many", "文文文，文章与文学。"),
            doc("once", "一篇文章。"),
            doc("emperor", "乾隆皇帝的年代。"),
        ],
        ..WriteBatch::default()
    })?;
    // The pairs of 搜索引擎 stand alone elsewhere (索引 twice): only the word is highlighted.
    assert_eq!(highlighted(&index, "搜索引擎")?, ["搜索引擎"]);
    // Two query words side by side are two highlights.
    assert_eq!(highlighted(&index, "文章 与文学")?, ["文章", "与文学"]);
    // A one-character query ranks by how often the character occurs.
    let results = index.search(&SearchRequest::new("文", vec![cn()], 20))?;
    let ids: Vec<&str> = results
        .hits
        .iter()
        .map(|h| h.info.doc_id.as_str())
        .collect();
    assert_eq!(ids[..2], ["many", "once"]);
    assert!(results.hits[0].score > results.hits[1].score, "{results:?}");
    // A character that fast2s folds by its neighbours is found on its own.
    assert_eq!(found(&index, "乾")?, ["emperor"]);
    assert_eq!(found(&index, "干隆")?, ["emperor"]);
    Ok(())
}

#[test]
fn characters_that_are_not_next_to_each_other_do_not_make_a_word() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index(&dir)?;
    // 中 and 文 are both in `zh_other`, never as 中文.
    assert_eq!(found(&index, "中文")?, ["zh"]);
    assert!(found(&index, "引擎搜索")?.is_empty());
    Ok(())
}

#[test]
fn phrases_and_exclusions_work_in_cjk_and_across_scripts() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index(&dir)?;
    assert_eq!(found(&index, "\"全文搜索\"")?, ["zh"]);
    assert!(found(&index, "\"搜索全文\"")?.is_empty());
    assert_eq!(found(&index, "Rust语言")?, ["mixed"]);
    assert_eq!(found(&index, "\"支持rust语言编写\"")?, ["mixed"]);
    assert_eq!(found(&index, "文 -历史")?, ["zh"]);
    assert_eq!(found(&index, "文 -\"历史悠久\"")?, ["zh"]);
    Ok(())
}

#[test]
fn traditional_and_simplified_characters_find_each_other() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index(&dir)?;
    // The document is in traditional characters; the queries in simplified, then traditional.
    assert_eq!(found(&index, "软体开发")?, ["zh_hant"]);
    assert_eq!(found(&index, "資料庫")?, ["zh_hant"]);
    assert_eq!(highlighted(&index, "数据库 资料库")?, ["資料庫"]);
    // And the other way round.
    assert_eq!(found(&index, "圖書館")?, ["zh"]);
    Ok(())
}

#[test]
fn japanese_and_korean_words_are_found_inside_longer_runs() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index(&dir)?;
    assert_eq!(found(&index, "喫茶店")?, ["ja"]);
    assert_eq!(found(&index, "タワー")?, ["ja"]);
    assert_eq!(highlighted(&index, "コーヒー")?, ["コーヒー"]);
    // Half-width katakana in the document, full-width in the query (and the reverse).
    assert_eq!(found(&index, "コンピューター")?, ["ja_half"]);
    assert_eq!(found(&index, "ｺｰﾋｰ")?, ["ja"]);
    // Korean separates phrases, not words: a word with its particle attached is found.
    assert_eq!(found(&index, "도서관")?, ["ko"]);
    assert_eq!(found(&index, "검색")?, ["ko"]);
    Ok(())
}

#[test]
fn full_width_latin_letters_and_digits_are_their_ascii_selves() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = index(&dir)?;
    assert_eq!(found(&index, "full 2026")?, ["mixed"]);
    assert_eq!(found(&index, "ＱＵＡＲＲＹ")?, ["mixed"]);
    assert_eq!(found(&index, "english")?, ["mixed"]);
    Ok(())
}
