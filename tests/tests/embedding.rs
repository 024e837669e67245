//! The default model as `make setup` installs it (a graph written from the fp32 weights by
//! `scripts/bert_onnx.py`), run by the embedder: its vectors are sentence-transformers' own, and
//! padding in a batch changes nothing.

use quarry_embed::{EmbedConfig, Embedder};

fn embedder() -> Embedder {
    Embedder::load(&EmbedConfig {
        model_dir: quarry_tests::model_dir(),
        runtime_library: quarry_tests::ort_lib(),
        threads: 2,
    })
    .expect("the default model loads (run `make setup`)")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

/// Texts and their vectors from sentence-transformers (PyTorch, fp32), written by
/// `tests/bench/st_reference.py`.
fn reference() -> Vec<(String, Vec<f32>)> {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/embedding/minilm-sentence-transformers.json");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("the fixture exists")).expect("json");
    json["texts"]
        .as_array()
        .expect("texts")
        .iter()
        .map(|entry| {
            let text = entry["text"].as_str().expect("text").to_owned();
            let vector = entry["vector"]
                .as_array()
                .expect("vector")
                .iter()
                .map(|x| x.as_f64().expect("a number") as f32)
                .collect();
            (text, vector)
        })
        .collect()
}

#[test]
fn the_default_model_gives_the_vectors_of_sentence_transformers() {
    let embedder = embedder();
    let reference = reference();
    let texts: Vec<&str> = reference.iter().map(|(t, _)| t.as_str()).collect();
    let passages = embedder.embed_passages(&texts).expect("embeds");
    for ((text, expected), got) in reference.iter().zip(&passages) {
        assert_eq!(got.len(), expected.len(), "dimensions of {text:?}");
        let similarity = cosine(got, expected);
        assert!(
            similarity > 0.9999,
            "{text:?}: cosine {similarity} to sentence-transformers' vector"
        );
        let query = embedder.embed_query(text).expect("embeds a query");
        assert!(cosine(&query, expected) > 0.9999, "{text:?} as a query");
    }
}

#[test]
fn a_text_gets_the_same_vector_alone_and_padded_in_a_batch() {
    let embedder = embedder();
    let reference = reference();
    let texts: Vec<&str> = reference.iter().map(|(t, _)| t.as_str()).collect();
    // One batch: the short texts are padded to the longest (256 tokens).
    let together = embedder.embed_batch(&texts).expect("embeds a batch");
    for (text, in_batch) in texts.iter().zip(&together) {
        let alone = embedder.embed_batch(&[text]).expect("embeds one text");
        let similarity = cosine(&alone[0], in_batch);
        assert!(
            similarity > 0.99999,
            "{text:?}: cosine {similarity} between its vector alone and in a padded batch"
        );
    }
}
