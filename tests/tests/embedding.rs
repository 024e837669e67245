//! The default model as `make setup` installs it (a graph written from the fp32 weights by
//! `scripts/bert_onnx.py`, and its int8 forms by `scripts/int8_graph.py`), run by the embedder:
//! the fp32 graph's vectors are sentence-transformers' own, the int8 graphs' close to them, and
//! under every graph padding in a batch changes nothing. The graph run is part of the model's
//! id. A model's prompts go before its queries and passages. The queue embeds a long
//! document's first passages first, and the rest later.

use quarry_embed::{EmbedConfig, Embedder, Graph, GraphChoice};
use sha2::Digest;

/// The default model, its graph chosen as the server chooses it.
fn embedder() -> Embedder {
    embedder_of(GraphChoice::Auto)
}

fn embedder_of(graph: GraphChoice) -> Embedder {
    Embedder::load(&EmbedConfig {
        model_dir: quarry_tests::model_dir(),
        runtime_library: quarry_tests::ort_lib(),
        threads: 2,
        graph,
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

/// Every text's vector under `graph`, as a passage and as a query, is at least `least`
/// similar to sentence-transformers' vector of it; the empty text at least `empty`.
fn close_to_sentence_transformers(graph: Graph, least: f32, empty: f32) {
    let embedder = embedder_of(GraphChoice::Only(graph));
    let reference = reference();
    let texts: Vec<&str> = reference.iter().map(|(t, _)| t.as_str()).collect();
    let passages = embedder.embed_passages(&texts).expect("embeds");
    for ((text, expected), got) in reference.iter().zip(&passages) {
        let least = if text.is_empty() { empty } else { least };
        assert_eq!(got.len(), expected.len(), "dimensions of {text:?}");
        let similarity = cosine(got, expected);
        assert!(
            similarity >= least,
            "{graph}: {text:?}: cosine {similarity} to sentence-transformers' vector"
        );
        let query = embedder.embed_query(text).expect("embeds a query");
        let similarity = cosine(&query, expected);
        assert!(
            similarity >= least,
            "{graph}: {text:?} as a query: cosine {similarity}"
        );
    }
}

#[test]
fn the_fp32_graph_gives_the_vectors_of_sentence_transformers() {
    close_to_sentence_transformers(Graph::Fp32, 0.9999, 0.9999);
}

#[test]
fn the_int8_graphs_give_vectors_close_to_sentence_transformers() {
    // docs/embedding.md: per token, 0.9958 at worst over 600 medical abstracts and short texts.
    // A text of no words (the model sees its two marker tokens alone) drifts most: 0.991 per
    // token. Passages always have words.
    close_to_sentence_transformers(Graph::Int8PerToken, 0.995, 0.99);
    close_to_sentence_transformers(Graph::Int8Blockwise, 0.995, 0.99);
}

#[test]
fn a_text_gets_the_same_vector_alone_and_padded_in_a_batch_under_every_graph() {
    let reference = reference();
    let texts: Vec<&str> = reference.iter().map(|(t, _)| t.as_str()).collect();
    for graph in Graph::ALL {
        let embedder = embedder_of(GraphChoice::Only(graph));
        // One batch: the short texts are padded to the longest (256 tokens).
        let together = embedder.embed_batch(&texts).expect("embeds a batch");
        for (text, in_batch) in texts.iter().zip(&together) {
            let alone = embedder.embed_batch(&[text]).expect("embeds one text");
            let similarity = cosine(&alone[0], in_batch);
            assert!(
                similarity > 0.99999,
                "{graph}: {text:?}: cosine {similarity} between its vector alone and in a padded batch"
            );
        }
    }
}

#[test]
fn the_graph_run_is_part_of_the_model_id_and_auto_runs_the_one_this_cpu_is_best_served_by() {
    let dir = quarry_tests::model_dir();
    let ids: Vec<String> = Graph::ALL
        .into_iter()
        .map(|graph| {
            let embedder = embedder_of(GraphChoice::Only(graph));
            assert_eq!(embedder.graph(), graph);
            let id = quarry_embed::model_id(&dir, GraphChoice::Only(graph)).expect("an id");
            assert_eq!(id, embedder.id(), "{graph}: the id without loading");
            id
        })
        .collect();
    for (i, id) in ids.iter().enumerate() {
        assert!(
            !ids[i + 1..].contains(id),
            "{id}: every graph has an id of its own"
        );
    }
    let auto = embedder();
    let cpu = quarry_embed::graph::Cpu::this();
    assert_eq!(auto.graph(), cpu.preference()[0], "{cpu:?}");
    let position = Graph::ALL.iter().position(|g| *g == auto.graph());
    assert_eq!(Some(auto.id()), position.map(|p| ids[p].as_str()));
    assert_eq!(
        quarry_embed::model_id(&dir, GraphChoice::Auto).expect("an id"),
        auto.id()
    );
}

/// The default model's folder again, with E5-style prompts in `config_sentence_transformers.json`.
fn prompted_copy_of_default_model() -> (tempfile::TempDir, std::path::PathBuf) {
    let root = tempfile::tempdir().expect("temp dir");
    let source = quarry_tests::model_dir();
    let dir = root.path().join("prompted-minilm");
    std::fs::create_dir_all(dir.join("1_Pooling")).expect("model folder");
    for file in [
        "tokenizer.json",
        "config.json",
        "sentence_bert_config.json",
        "1_Pooling/config.json",
    ] {
        std::fs::copy(source.join(file), dir.join(file)).expect("copies the model's files");
    }
    std::os::unix::fs::symlink(source.join("onnx"), dir.join("onnx")).expect("links the graph");
    std::fs::write(
        dir.join("config_sentence_transformers.json"),
        r#"{"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": null}"#,
    )
    .expect("writes the prompts");
    (root, dir)
}

#[test]
fn a_models_prompts_go_before_its_queries_and_passages_and_into_its_id() {
    let plain = embedder_of(GraphChoice::Only(Graph::Fp32));
    let (_root, dir) = prompted_copy_of_default_model();
    let prompted = Embedder::load(&EmbedConfig {
        model_dir: dir.clone(),
        runtime_library: quarry_tests::ort_lib(),
        threads: 2,
        graph: GraphChoice::Only(Graph::Fp32),
    })
    .expect("the prompted copy loads");

    let query = prompted.embed_query("dog").expect("embeds a query");
    let by_hand = plain.embed_passages(&["query: dog"]).expect("embeds");
    assert!(cosine(&query, &by_hand[0]) > 0.99999);
    let passage = prompted
        .embed_passages(&["a dog in the park"])
        .expect("embeds");
    let by_hand = plain
        .embed_passages(&["passage: a dog in the park"])
        .expect("embeds");
    assert!(cosine(&passage[0], &by_hand[0]) > 0.99999);
    let unprompted = plain
        .embed_passages(&["a dog in the park"])
        .expect("embeds");
    assert!(
        cosine(&passage[0], &unprompted[0]) < 0.999,
        "the prompt changes the vector"
    );

    // Same weights, other prompts: vectors that must not be mixed, so another id. The model
    // without prompts keeps the id it had before prompts were read: its folder's name and the
    // SHA-256 of its graph followed by the graph's external weights.
    let mut hasher = sha2::Sha256::new();
    for file in ["onnx/model.onnx", "onnx/model.onnx.data"] {
        hasher.update(std::fs::read(quarry_tests::model_dir().join(file)).expect("model file"));
    }
    let digest = format!("{:x}", hasher.finalize());
    let name = quarry_tests::model_dir()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    assert_eq!(plain.id(), format!("{name}@{}", &digest[..12]));
    assert!(
        prompted.id().starts_with("prompted-minilm@"),
        "{}",
        prompted.id()
    );
    assert!(!prompted.id().ends_with(&digest[..12]), "{}", prompted.id());
}

#[test]
fn new_weights_in_the_same_folder_give_a_new_id_and_the_old_vectors_are_computed_again() {
    let old = embedder_of(GraphChoice::Only(Graph::Fp32));
    let root = tempfile::tempdir().expect("temp dir");
    let source = quarry_tests::model_dir();
    let name = source.file_name().expect("the model folder has a name");
    let dir = root.path().join(name);
    std::fs::create_dir_all(dir.join("onnx")).expect("model folder");
    for file in ["tokenizer.json", "config.json", "onnx/model.onnx"] {
        std::fs::copy(source.join(file), dir.join(file)).expect("copies the model's files");
    }
    // The same graph over weights one bit apart: a model of its own.
    let mut weights = std::fs::read(source.join("onnx/model.onnx.data")).expect("the weights");
    let last = weights.len() - 1;
    weights[last] ^= 1;
    std::fs::write(dir.join("onnx/model.onnx.data"), weights).expect("writes the weights");
    let new = Embedder::load(&EmbedConfig {
        model_dir: dir.clone(),
        runtime_library: quarry_tests::ort_lib(),
        threads: 2,
        graph: GraphChoice::Auto,
    })
    .expect("the changed copy loads");
    assert_eq!(new.graph(), Graph::Fp32, "the copy has no int8 graph");
    assert_ne!(new.id(), old.id(), "new weights, new id");
    assert_eq!(
        quarry_embed::model_id(&dir, GraphChoice::Auto).expect("the id without loading"),
        new.id()
    );

    let index_dir = tempfile::tempdir().expect("temp dir");
    let index = quarry_index::SearchIndex::open(index_dir.path(), true).expect("index");
    let mut doc = quarry_index::IndexDoc {
        info: quarry_index::DocInfo {
            connector: quarry_core::ConnectorId::parse("cn_models").expect("valid id"),
            doc_id: quarry_core::DocId::parse("note").expect("valid id"),
            meta: quarry_core::DocMeta {
                title: "note".into(),
                path: None,
                url: None,
                mime_type: "text/plain".into(),
                size_bytes: 24,
                update_time_ms: 1_735_689_600_000,
            },
        },
        text: "a dog runs in the park".into(),
        page_starts: Vec::new(),
        metadata: Vec::new(),
        embedding: None,
    };
    quarry_sync::embed_docs(&old, std::slice::from_mut(&mut doc)).expect("embeds");
    index
        .write(quarry_index::WriteBatch {
            upserts: vec![doc],
            ..quarry_index::WriteBatch::default()
        })
        .expect("writes");
    assert_eq!(index.pending_count(old.id(), None).expect("count"), 0);
    assert_eq!(
        index.pending_count(new.id(), None).expect("count"),
        1,
        "vectors of the old id count as missing for the new model"
    );
    let stop = std::sync::atomic::AtomicBool::new(false);
    let embedded = quarry_sync::embed_all_pending(&index, &new, &[], &stop, |_, _| {})
        .expect("computes them again");
    assert_eq!(embedded, 1);
    assert_eq!(index.pending_count(new.id(), None).expect("count"), 0);
}

#[test]
fn passages_told_to_stop_come_back_without_vectors() {
    let embedder = embedder();
    let texts = ["a dog runs in the park"; 40];
    let stop = std::sync::atomic::AtomicBool::new(false);
    let all = embedder
        .embed_passages_until(&texts, &stop)
        .expect("embeds")
        .expect("not stopped");
    assert_eq!(all.len(), texts.len());
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(
        embedder
            .embed_passages_until(&texts, &stop)
            .expect("no error")
            .is_none(),
        "a stop is seen before the next batch"
    );
}

/// Eight paragraphs of about 150 words (a passage each), on eight subjects.
fn eight_subjects() -> String {
    [
        "A small brown dog chases a red ball across the grass of the city park while children laugh.",
        "The committee approved the annual budget after a long debate about taxes and public spending.",
        "Fresh bread rises slowly in a warm kitchen, and the baker shapes the dough into round loaves.",
        "The violinist tuned her instrument before the orchestra began the first movement of the symphony.",
        "Engineers inspected the old railway bridge and found rust on several of its steel beams.",
        "The patient described a sharp pain in the chest, and the doctor ordered a heart scan at once.",
        "A storm pushed high waves onto the harbour wall and the fishing boats stayed tied in port.",
        "Red hot lava poured down the side of the erupting volcano and ash covered the nearby villages.",
    ]
    .iter()
    .map(|sentence| {
        std::iter::repeat_n(*sentence, 9)
            .collect::<Vec<_>>()
            .join(" ")
    })
    .collect::<Vec<_>>()
    .join("\n\n")
}

#[test]
fn a_long_document_is_found_by_its_opening_first_and_by_its_end_once_the_rest_is_embedded() {
    use quarry_index::{Fusion, Ranking, SearchRequest, SemanticQuery};
    let embedder = embedder();
    let connector = quarry_core::ConnectorId::parse("cn_long").expect("valid id");
    let dir = tempfile::tempdir().expect("temp dir");
    let index = quarry_index::SearchIndex::open(dir.path(), true).expect("index");
    let text = eight_subjects();
    index
        .write(quarry_index::WriteBatch {
            upserts: vec![quarry_index::IndexDoc {
                info: quarry_index::DocInfo {
                    connector: connector.clone(),
                    doc_id: quarry_core::DocId::parse("subjects").expect("valid id"),
                    meta: quarry_core::DocMeta {
                        title: "subjects.txt".into(),
                        path: Some("subjects.txt".into()),
                        url: None,
                        mime_type: "text/plain".into(),
                        size_bytes: text.len() as u64,
                        update_time_ms: 1_735_689_600_000,
                    },
                },
                text,
                page_starts: Vec::new(),
                metadata: Vec::new(),
                embedding: None,
            }],
            ..quarry_index::WriteBatch::default()
        })
        .expect("writes");
    let best_passage = |query: &str| {
        let mut request = SearchRequest::new(query, vec![connector.clone()], 1);
        request.ranking = Ranking::Fused(
            SemanticQuery {
                model: embedder.id().to_owned(),
                vector: embedder.embed_query(query).expect("embeds"),
            },
            Fusion::SEMANTIC_ONLY,
        );
        let results = index.search(&request).expect("searches");
        results.hits.first().map(|hit| hit.snippet.text.clone())
    };
    let stop = std::sync::atomic::AtomicBool::new(false);

    // The first round embeds its first passages only: it is found by meaning, by its opening.
    assert_eq!(
        quarry_sync::embed_round(&index, &embedder, &[], &stop).expect("embeds"),
        1
    );
    let progress = index
        .embedding_by_kind(embedder.id(), Some(&connector))
        .expect("counts");
    assert_eq!((progress[0].embedded, progress[0].first_passages), (0, 1));
    assert_eq!(index.pending_count(embedder.id(), None).expect("count"), 1);
    let dog = best_passage("a dog playing with a ball in the park").expect("found");
    assert!(dog.contains("dog"), "{dog}");
    let early = best_passage("lava and ash from a volcano").expect("found by its opening");
    assert!(!early.contains("volcano"), "not embedded yet: {early}");

    // The next round embeds the rest: the end is found where it is, the opening kept.
    assert_eq!(
        quarry_sync::embed_round(&index, &embedder, &[], &stop).expect("embeds"),
        1
    );
    assert_eq!(index.pending_count(embedder.id(), None).expect("count"), 0);
    let volcano = best_passage("lava and ash from a volcano").expect("found");
    assert!(volcano.contains("volcano"), "{volcano}");
    assert!(
        best_passage("a dog playing with a ball in the park")
            .expect("found")
            .contains("dog")
    );
    assert_eq!(
        quarry_sync::embed_round(&index, &embedder, &[], &stop).expect("nothing left"),
        0
    );
}
