//! Loading a model directory and running it.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::{DynValue, Tensor};
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

use crate::EmbedError;
use crate::cache::QueryCache;
use crate::graph::{Cpu, Graph, GraphChoice, chosen};
use crate::pooling::Pooling;
use crate::prompts::Prompts;

/// Texts embedded in one model call. Measured on 2 cores (real passages, the fused fp32 MiniLM,
/// docs/embedding.md): 8 and 16 are alike, 32 and 64 slower (more padding, caches left).
const BATCH: usize = 16;
/// Tokens per text when the model directory does not say.
const DEFAULT_MAX_TOKENS: usize = 256;

/// Where the model and ONNX Runtime are, and how many threads embedding passages may use.
#[derive(Debug, Clone)]
pub struct EmbedConfig {
    /// A model directory: `tokenizer.json` and `onnx/model.onnx` (or `model.onnx`), optionally
    /// `1_Pooling/config.json`, `sentence_bert_config.json` and `config_sentence_transformers.json`
    /// (its `prompts`) as sentence-transformers writes them.
    pub model_dir: PathBuf,
    /// ONNX Runtime's shared library (`libonnxruntime.so`).
    pub runtime_library: PathBuf,
    /// Threads for embedding passages (queries use one thread of their own).
    pub threads: usize,
    /// Which of the folder's graphs to run ([`crate::graph`]).
    pub graph: GraphChoice,
}

/// A loaded sentence-embedding model.
pub struct Embedder {
    id: String,
    dims: usize,
    max_tokens: usize,
    pooling: Pooling,
    prompts: Prompts,
    tokenizer: Tokenizer,
    token_types: bool,
    /// The passages' session: opened when there are passages to embed, closed by
    /// [`Embedder::release_passages`] once the queue is drained (its weights and buffers are
    /// most of what the model holds).
    passages: Mutex<Option<Session>>,
    queries: Mutex<Session>,
    cache: QueryCache,
    env: &'static ort::environment::Environment,
    graph: Graph,
    model_file: PathBuf,
    threads: usize,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("id", &self.id)
            .field("dims", &self.dims)
            .finish_non_exhaustive()
    }
}

/// ONNX Runtime is loaded once per process.
static RUNTIME: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();

/// ONNX Runtime's environment, loaded from `library` by the first caller (the embedding model
/// and the OCR models share it; later callers' `library` is not looked at).
pub fn onnx_runtime(library: &Path) -> Result<&'static ort::environment::Environment, EmbedError> {
    RUNTIME
        .get_or_init(|| {
            ort::init_from(library)
                .map_err(|e| e.to_string())?
                .with_name("quarry")
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|message| EmbedError::Runtime {
            path: library.to_owned(),
            message: message.clone(),
        })
}

/// The id of the model in `dir` run as `graph` chooses on this CPU, without loading it: its
/// folder's name and the start of the SHA-256 of the graph run, the graph's external weights
/// and the model's prompts, if it has any ([`Embedder::id`]; vectors are compared only with
/// vectors of the same id).
pub fn model_id(dir: &Path, graph: GraphChoice) -> Result<String, EmbedError> {
    let (_, model_file) = chosen(dir, graph, Cpu::this())?;
    id_of(dir, &model_file, &Prompts::of_model(dir)?)
}

fn id_of(dir: &Path, model_file: &Path, prompts: &Prompts) -> Result<String, EmbedError> {
    let mut hasher = Sha256::new();
    for file in weight_files(model_file) {
        hash_file(&mut hasher, &file).map_err(|e| EmbedError::BadFile {
            path: file.clone(),
            message: e.to_string(),
        })?;
    }
    if !prompts.is_empty() {
        hasher.update(prompts.fingerprint());
    }
    let digest = hex::encode(hasher.finalize());
    let name = dir
        .file_name()
        .map_or_else(|| "model".into(), |n| n.to_string_lossy().into_owned());
    Ok(format!("{name}@{}", &digest[..12]))
}

/// The files that make a model's weights: its graph, then the external data files beside it
/// named after it as ONNX tools name them (`model.onnx.data`, `model.onnx_data`), in order.
fn weight_files(model_file: &Path) -> Vec<PathBuf> {
    let mut files = vec![model_file.to_owned()];
    let (Some(dir), Some(name)) = (
        model_file.parent(),
        model_file.file_name().and_then(|n| n.to_str()),
    ) else {
        return files;
    };
    let mut data: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .map_while(Result::ok)
        .filter(|e| {
            e.file_name().to_str().is_some_and(|n| {
                n.strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('_'))
            }) && e.file_type().is_ok_and(|t| t.is_file())
        })
        .map(|e| e.path())
        .collect();
    data.sort();
    files.extend(data);
    files
}

/// Feeds `file` to `hasher` a block at a time (weights are too big to read whole).
fn hash_file(hasher: &mut Sha256, file: &Path) -> std::io::Result<()> {
    use std::io::Read;
    let mut reader = std::fs::File::open(file)?;
    let mut block = vec![0u8; 1 << 20];
    loop {
        let n = reader.read(&mut block)?;
        if n == 0 {
            return Ok(());
        }
        hasher.update(&block[..n]);
    }
}

impl Embedder {
    /// Loads the model of `config`, checking that it is a sentence-embedding model.
    pub fn load(config: &EmbedConfig) -> Result<Embedder, EmbedError> {
        let dir = &config.model_dir;
        let (graph, model_file) = chosen(dir, config.graph, Cpu::this())?;
        let tokenizer_file = dir.join("tokenizer.json");
        if !tokenizer_file.is_file() {
            return Err(EmbedError::MissingFile {
                dir: dir.clone(),
                wanted: "tokenizer.json".into(),
            });
        }
        if !config.runtime_library.is_file() {
            return Err(EmbedError::Runtime {
                path: config.runtime_library.clone(),
                message: "no such file".into(),
            });
        }
        let env = onnx_runtime(&config.runtime_library)?;
        let max_tokens = max_tokens(dir);
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_file).map_err(|e| EmbedError::BadFile {
                path: tokenizer_file.clone(),
                message: e.to_string(),
            })?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::BadFile {
                path: tokenizer_file.clone(),
                message: e.to_string(),
            })?;
        tokenizer.with_padding(None);
        // Queries get a session at normal priority, for as long as the model is loaded; the
        // passages' session is opened when needed.
        let queries = open_session(env, &model_file, 1)?;
        let names: Vec<&str> = queries.inputs().iter().map(|i| i.name()).collect();
        for needed in ["input_ids", "attention_mask"] {
            if !names.contains(&needed) {
                return Err(EmbedError::Shape {
                    path: model_file.clone(),
                    message: format!("it has no input named {needed} (inputs: {names:?})"),
                });
            }
        }
        let token_types = names.contains(&"token_type_ids");
        let prompts = Prompts::of_model(dir)?;
        let mut embedder = Embedder {
            id: id_of(dir, &model_file, &prompts)?,
            dims: 0,
            max_tokens,
            pooling: Pooling::of_model(dir),
            prompts,
            tokenizer,
            token_types,
            passages: Mutex::new(None),
            queries: Mutex::new(queries),
            cache: QueryCache::default(),
            env,
            graph,
            model_file: model_file.clone(),
            threads: config.threads.max(1),
        };
        let probe_tokens = embedder.tokens("dimension probe")?;
        let probe = embedder.run(&embedder.queries, &[probe_tokens.as_slice()])?;
        embedder.dims = probe.first().map_or(0, Vec::len);
        if embedder.dims == 0 {
            return Err(EmbedError::Shape {
                path: model_file,
                message: "it returned an empty vector".into(),
            });
        }
        // Building the session optimises the graph in memory it then frees.
        quarry_core::memory::give_back();
        Ok(embedder)
    }

    /// Names the model, its exact weights and its prompts (`dir-name@sha256-prefix`): vectors
    /// from different ids are not comparable.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The graph it runs ([`crate::graph`]).
    pub fn graph(&self) -> Graph {
        self.graph
    }

    /// Length of the vectors.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Tokens a text is cut to before embedding.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Embeds passages (after the model's passage prompt), in length-sorted batches; vectors
    /// come back in the order of `texts`, each of unit length.
    pub fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let never = AtomicBool::new(false);
        Ok(self
            .embed_passages_until(texts, &never)?
            .unwrap_or_default())
    }

    /// [`Embedder::embed_passages`], looking at `stop` between batches: `None` once it is set
    /// (what was embedded is dropped). Give it many passages at once: the fewer their lengths
    /// differ within a batch, the less work padding wastes.
    pub fn embed_passages_until(
        &self,
        texts: &[&str],
        stop: &AtomicBool,
    ) -> Result<Option<Vec<Vec<f32>>>, EmbedError> {
        let prompted: Vec<Cow<'_, str>> = texts.iter().map(|t| self.prompts.passage(t)).collect();
        let tokens = prompted
            .iter()
            .map(|t| self.tokens(t))
            .collect::<Result<Vec<_>, _>>()?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        // Sorting by token count keeps padding (wasted work) small within a batch (by bytes it
        // was 8% more work on real abstracts: words differ in how many tokens they make).
        order.sort_by_key(|&i| tokens[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for batch in order.chunks(BATCH) {
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let batch_tokens: Vec<&[u32]> = batch.iter().map(|&i| tokens[i].as_slice()).collect();
            for (&i, v) in batch.iter().zip(self.run_passages(&batch_tokens)?) {
                out[i] = v;
            }
        }
        Ok(Some(out))
    }

    /// Embeds passages as one batch, in order (no sorting, no splitting): for measuring batch
    /// sizes; the sync uses [`Embedder::embed_passages`].
    pub fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let tokens = texts
            .iter()
            .map(|t| self.tokens(&self.prompts.passage(t)))
            .collect::<Result<Vec<_>, _>>()?;
        let tokens: Vec<&[u32]> = tokens.iter().map(Vec::as_slice).collect();
        self.run_passages(&tokens)
    }

    /// Closes the passages' session, freeing its weights and buffers until passages come
    /// again (the embedding queue calls it once drained). Queries are not affected.
    pub fn release_passages(&self) {
        if quarry_core::memory::release(&self.passages) {
            tracing::debug!(model = %self.id, "closed the passages' session: nothing to embed");
        }
    }

    /// Runs `texts` on the passages' session, opening it first if it is closed. It is opened
    /// on a thread of the lowest priority: ONNX Runtime starts its threads there, and they
    /// inherit it, so embedding yields to searches and to syncs (documents are searchable by
    /// keyword before their vectors exist).
    fn run_passages(&self, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut slot = self.passages.lock().unwrap_or_else(PoisonError::into_inner);
        let session = match &mut *slot {
            Some(session) => session,
            None => {
                let opened = std::thread::scope(|scope| {
                    scope
                        .spawn(|| {
                            quarry_core::priority::run_when_idle();
                            open_session(self.env, &self.model_file, self.threads)
                        })
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })?;
                slot.insert(opened)
            }
        };
        self.run_on(session, texts)
    }

    /// Embeds a search query (after the model's query prompt) on the query session (never
    /// behind an indexing batch); recent queries come from a cache.
    pub fn embed_query(&self, query: &str) -> Result<Arc<Vec<f32>>, EmbedError> {
        if let Some(v) = self.cache.get(query) {
            return Ok(v);
        }
        let tokens = self.tokens(&self.prompts.query(query))?;
        let vector = self
            .run(&self.queries, &[tokens.as_slice()])?
            .pop()
            .ok_or_else(|| EmbedError::Inference("the model returned no vector".into()))?;
        let vector = Arc::new(vector);
        self.cache.put(query, Arc::clone(&vector));
        Ok(vector)
    }

    /// [`Embedder::run_on`] the session in `session`.
    fn run(&self, session: &Mutex<Session>, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut session = session.lock().unwrap_or_else(PoisonError::into_inner);
        self.run_on(&mut session, texts)
    }

    /// The token ids of `text` (special tokens added, cut at the model's length).
    fn tokens(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        self.tokenizer
            .encode(text, true)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| EmbedError::Inference(e.to_string()))
    }

    /// Runs texts' token ids as one padded batch, pools.
    fn run_on(&self, session: &mut Session, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let fail = |e: &dyn std::fmt::Display| EmbedError::Inference(e.to_string());
        let n = texts.len();
        let len = texts.iter().map(|t| t.len()).max().unwrap_or(1).max(1);
        let mut ids = vec![0i64; n * len];
        let mut mask = vec![0i64; n * len];
        let mut used = Vec::with_capacity(n);
        for (row, tokens) in texts.iter().enumerate() {
            for (col, &t) in tokens.iter().enumerate() {
                ids[row * len + col] = i64::from(t);
                mask[row * len + col] = 1;
            }
            used.push(tokens.len());
        }
        let tensor = |data: Vec<i64>| -> Result<DynValue, EmbedError> {
            Ok(Tensor::from_array(([n, len], data))
                .map_err(|e| fail(&e))?
                .into_dyn())
        };
        let mut inputs: Vec<(&str, DynValue)> = vec![
            ("input_ids", tensor(ids)?),
            ("attention_mask", tensor(mask)?),
        ];
        if self.token_types {
            inputs.push(("token_type_ids", tensor(vec![0i64; n * len])?));
        }
        let outputs = session.run(inputs).map_err(|e| fail(&e))?;
        let (shape, data) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(|e| fail(&e))?;
        let dims = usize::try_from(*shape.last().unwrap_or(&0)).unwrap_or(0);
        if dims == 0 || data.len() < n * dims {
            return Err(EmbedError::Inference(format!(
                "unexpected output shape {shape:?}"
            )));
        }
        Ok(match shape.len() {
            // Already one vector per text (a model with pooling inside).
            2 => data
                .chunks_exact(dims)
                .map(|v| {
                    let mut v = v.to_vec();
                    crate::pooling::normalize(&mut v);
                    v
                })
                .collect(),
            _ => data
                .chunks_exact(len * dims)
                .zip(&used)
                .map(|(tokens, &used)| self.pooling.pool(tokens, dims, used))
                .collect(),
        })
    }
}

fn open_session(
    env: &ort::environment::Environment,
    model: &Path,
    threads: usize,
) -> Result<Session, EmbedError> {
    let fail = |e: &dyn std::fmt::Display| EmbedError::BadFile {
        path: model.to_owned(),
        message: e.to_string(),
    };
    Session::builder(env)
        .map_err(|e| fail(&e))?
        .with_optimization_level(GraphOptimizationLevel::Level3)
        .map_err(|e| fail(&e))?
        .with_intra_threads(threads)
        .map_err(|e| fail(&e))?
        // Idle threads sleep instead of spinning: searches share these cores.
        .with_intra_op_spinning(false)
        .map_err(|e| fail(&e))?
        .commit_from_file(model)
        .map_err(|e| fail(&e))
}

/// `max_seq_length` of `sentence_bert_config.json`, or the default.
fn max_tokens(dir: &Path) -> usize {
    std::fs::read(dir.join("sentence_bert_config.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("max_seq_length").and_then(serde_json::Value::as_u64))
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_MAX_TOKENS)
}
