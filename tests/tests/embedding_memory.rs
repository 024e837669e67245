//! What embedding holds while idle: the passages' session (the model's weights and buffers) is
//! given back once the queue is drained and opened again when passages come. Alone in its test
//! binary, so that no other test's memory moves the figures.

use quarry_embed::{EmbedConfig, Embedder, GraphChoice};

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

/// Anonymous memory of this process, in KiB (`RssAnon`).
fn anonymous_kib() -> u64 {
    quarry_tests::proc_status::status_kib(std::process::id(), "RssAnon:").expect("RssAnon")
}

#[test]
fn the_passages_session_is_given_back_when_released_and_reopened_with_the_same_vectors() {
    let embedder = Embedder::load(&EmbedConfig {
        model_dir: quarry_tests::model_dir(),
        runtime_library: quarry_tests::ort_lib(),
        threads: 2,
        graph: GraphChoice::default(),
    })
    .expect("the default model loads (run `make setup`)");
    let texts: Vec<String> = (0..48)
        .map(|i| format!("Passage {i}: the heron waits in the reeds at the edge of the reservoir, and the morning mist lifts slowly over the water."))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let before = anonymous_kib();
    let first = embedder.embed_passages(&refs).expect("embeds");
    let open = anonymous_kib();
    embedder.release_passages();
    let released = anonymous_kib();
    // The session holds the weights (about 90 MB for this model) and its buffers: releasing it
    // gives back most of what opening and running it took.
    assert!(
        open.saturating_sub(released) > (open.saturating_sub(before)) / 2,
        "anonymous KiB: {before} before, {open} with the session, {released} released"
    );
    let again = embedder
        .embed_passages(&refs)
        .expect("embeds after a release");
    for (a, b) in first.iter().zip(&again) {
        assert!(cosine(a, b) > 0.99999);
    }
    // Queries never depended on it.
    embedder.release_passages();
    assert!(embedder.embed_query("heron").is_ok());
}
