//! What the relevance evaluations share (`eval` and `eval_languages`): a collection's index built
//! through the real pipeline (the sync's chunking and embedding, the index's writer) and kept
//! between runs, and the search the API runs, in keyword, semantic or hybrid mode.

use std::path::PathBuf;
use std::time::Instant;

use quarry_core::{ConnectorId, DocId, DocMeta};
use quarry_embed::{EmbedConfig, Embedder, GraphChoice};
use quarry_index::{
    DocInfo, Fusion, IndexDoc, Ranking, SearchIndex, SearchRequest, SemanticQuery, WriteBatch,
};

/// A document of a collection: its id, title and text.
pub struct Doc {
    pub id: String,
    pub title: String,
    pub text: String,
}

/// The one connector every evaluated document belongs to.
pub fn connector() -> ConnectorId {
    ConnectorId::parse("cn_eval").expect("a valid connector id")
}

/// The model of `QUARRY_MODEL_DIR` (the default model without it), on every core; prints its
/// id.
pub fn embedder() -> Result<Embedder, Box<dyn std::error::Error>> {
    let embedder = Embedder::load(&EmbedConfig {
        model_dir: quarry_tests::model_dir(),
        runtime_library: quarry_tests::ort_lib(),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        graph: GraphChoice::default(),
    })?;
    println!("model {} ({} dims)\n", embedder.id(), embedder.dims());
    Ok(embedder)
}

/// The index of collection `name` for this model (or for keyword search only, without one) and
/// index format, built once under `~/.cache/quarry/eval` (a marker file says it is complete).
pub fn build_index(
    name: &str,
    docs: &[Doc],
    embedder: Option<&Embedder>,
) -> Result<SearchIndex, Box<dyn std::error::Error>> {
    let base = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(".cache/quarry/eval");
    let dir = base.join(format!(
        "{name}-{}-v{}",
        embedder.map_or("keyword".to_owned(), |e| e.id().replace(['@', '/'], "-")),
        quarry_index::FORMAT
    ));
    let marker = dir.join("complete");
    if marker.is_file() {
        return Ok(SearchIndex::open(&dir.join("index"), true)?);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let index = SearchIndex::open(&dir.join("index"), true)?;
    let started = Instant::now();
    let mut passages = 0usize;
    for chunk in docs.chunks(256) {
        let mut upserts: Vec<IndexDoc> = chunk
            .iter()
            .map(|doc| -> Result<IndexDoc, Box<dyn std::error::Error>> {
                Ok(IndexDoc {
                    info: DocInfo {
                        connector: connector(),
                        doc_id: DocId::parse(format!("d{}", doc.id))?,
                        meta: DocMeta {
                            title: doc.title.clone(),
                            path: None,
                            url: None,
                            mime_type: "text/plain".into(),
                            size_bytes: doc.text.len() as u64,
                            update_time_ms: 0,
                        },
                    },
                    text: doc.text.clone(),
                    page_starts: Vec::new(),
                    metadata: Vec::new(),
                    embedding: None,
                })
            })
            .collect::<Result<_, _>>()?;
        if let Some(embedder) = embedder {
            quarry_sync::embed_docs(embedder, &mut upserts)?;
        }
        passages += upserts
            .iter()
            .filter_map(|d| d.embedding.as_ref())
            .map(|e| e.passages.len())
            .sum::<usize>();
        index.write(WriteBatch {
            upserts,
            ..WriteBatch::default()
        })?;
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{name}: indexed {} docs, {passages} passages in {seconds:.1} s ({:.0} passages/s)",
        docs.len(),
        passages as f64 / seconds
    );
    std::fs::write(&marker, b"")?;
    Ok(index)
}

/// The ids of the top `limit` documents for `query` (keyword ranking without `fusion` or
/// without a model).
pub fn search(
    index: &SearchIndex,
    embedder: Option<&Embedder>,
    query: &str,
    fusion: Option<Fusion>,
    limit: usize,
) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut request = SearchRequest::new(query.to_owned(), vec![connector()], limit);
    if let (Some(fusion), Some(embedder)) = (fusion, embedder) {
        request.ranking = Ranking::Fused(
            SemanticQuery {
                model: embedder.id().to_owned(),
                vector: embedder.embed_query(query)?,
            },
            fusion,
        );
    }
    Ok(index
        .search(&request)?
        .hits
        .into_iter()
        .map(|h| {
            let id = h.info.doc_id.as_str();
            id.strip_prefix('d').unwrap_or(id).to_owned()
        })
        .collect())
}
