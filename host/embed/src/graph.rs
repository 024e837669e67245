//! Which of a model folder's graphs runs. `make setup` writes the default model as a fused fp32
//! graph (`onnx/model.onnx`) and two int8 forms of it (`scripts/int8_graph.py`), each giving a
//! text the same vector alone and in any batch:
//! - per-token int8 (`onnx/model_int8_per_token.onnx`), faster than fp32 on x86 CPUs without
//!   VNNI too, with search as good on the four relevance collections (docs/embedding.md);
//! - blockwise 8-bit weights (`onnx/model_int8_blockwise.onnx`, `MatMulNBits`), whose int8
//!   kernel is slower than fp32 without VNNI and meant for CPUs with it.
//!
//! `auto` runs the first of the folder's graphs this CPU is best served by. A model folder
//! with `onnx/model.onnx` only (any other model) runs that. The graph is part of the model's
//! id, so a change of graph recomputes vectors as a change of model does.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::EmbedError;

/// One of a model folder's graphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Graph {
    /// The model's fp32 graph, `model.onnx`.
    Fp32,
    /// int8 activations scaled row by row, int8 weights per column.
    Int8PerToken,
    /// 8-bit weights in blocks of 32, activations quantized in blocks by the kernel.
    Int8Blockwise,
}

impl Graph {
    /// Every graph.
    pub const ALL: [Graph; 3] = [Graph::Fp32, Graph::Int8PerToken, Graph::Int8Blockwise];

    /// The graph's name in settings and logs.
    pub fn name(self) -> &'static str {
        match self {
            Graph::Fp32 => "fp32",
            Graph::Int8PerToken => "int8-per-token",
            Graph::Int8Blockwise => "int8-blockwise",
        }
    }

    /// The graph's file name, in the model folder's `onnx/` (or the folder itself).
    fn file_name(self) -> &'static str {
        match self {
            Graph::Fp32 => "model.onnx",
            Graph::Int8PerToken => "model_int8_per_token.onnx",
            Graph::Int8Blockwise => "model_int8_blockwise.onnx",
        }
    }

    /// The graph's file in model folder `dir`, if it has it.
    fn file_in(self, dir: &Path) -> Option<PathBuf> {
        [
            dir.join("onnx").join(self.file_name()),
            dir.join(self.file_name()),
        ]
        .into_iter()
        .find(|p| p.is_file())
    }
}

impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which graph to run: the best the folder has for this CPU, or one named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GraphChoice {
    /// The first graph of [`Cpu::preference`] the folder has, else any it has.
    #[default]
    Auto,
    /// This graph, or an error naming it when the folder lacks it.
    Only(Graph),
}

impl GraphChoice {
    /// `auto`, or a graph's [`Graph::name`].
    pub fn parse(text: &str) -> Result<GraphChoice, String> {
        if text == "auto" {
            return Ok(GraphChoice::Auto);
        }
        Graph::ALL
            .into_iter()
            .find(|g| g.name() == text)
            .map(GraphChoice::Only)
            .ok_or_else(|| {
                let names: Vec<&str> = Graph::ALL.iter().map(|g| g.name()).collect();
                format!(
                    "{text:?} is not a graph; use auto or one of {}",
                    names.join(", ")
                )
            })
    }
}

impl fmt::Display for GraphChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphChoice::Auto => f.write_str("auto"),
            GraphChoice::Only(graph) => graph.fmt(f),
        }
    }
}

/// What of the CPU decides the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cpu {
    /// Whether it multiplies int8 vectors in one instruction (AVX-512 VNNI or AVX-VNNI).
    pub vnni: bool,
}

impl Cpu {
    /// The CPU this process runs on.
    pub fn this() -> Cpu {
        #[cfg(target_arch = "x86_64")]
        let vnni = std::arch::is_x86_feature_detected!("avx512vnni")
            || std::arch::is_x86_feature_detected!("avxvnni");
        #[cfg(not(target_arch = "x86_64"))]
        let vnni = false;
        Cpu { vnni }
    }

    /// The graphs `auto` runs on this CPU, best first: per-token int8 on every CPU measured
    /// (1.55x fp32 and 1.38x blockwise with AVX-512 VNNI, docs/embedding.md). Blockwise comes
    /// before fp32 only with VNNI (1.12x fp32); without it, it is slower than fp32 (0.81x on a
    /// Zen 3 EPYC) and is not among them.
    pub fn preference(self) -> &'static [Graph] {
        if self.vnni {
            &[Graph::Int8PerToken, Graph::Int8Blockwise, Graph::Fp32]
        } else {
            &[Graph::Int8PerToken, Graph::Fp32]
        }
    }
}

/// The graph of model folder `dir` that `choice` runs on `cpu`, and its file.
pub fn chosen(dir: &Path, choice: GraphChoice, cpu: Cpu) -> Result<(Graph, PathBuf), EmbedError> {
    let missing = |wanted: &str| EmbedError::MissingFile {
        dir: dir.to_owned(),
        wanted: wanted.to_owned(),
    };
    match choice {
        GraphChoice::Only(graph) => graph
            .file_in(dir)
            .map(|file| (graph, file))
            .ok_or_else(|| missing(&format!("onnx/{} (the {graph} graph)", graph.file_name()))),
        GraphChoice::Auto => cpu
            .preference()
            .iter()
            .chain(Graph::ALL.iter())
            .find_map(|&graph| graph.file_in(dir).map(|file| (graph, file)))
            .ok_or_else(|| missing("onnx/model.onnx")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Cpu = Cpu { vnni: false };
    const VNNI: Cpu = Cpu { vnni: true };

    fn folder(graphs: &[Graph]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("onnx")).expect("onnx/");
        for graph in graphs {
            std::fs::write(dir.path().join("onnx").join(graph.file_name()), b"graph")
                .expect("graph file");
        }
        dir
    }

    fn graph_of(dir: &tempfile::TempDir, choice: GraphChoice, cpu: Cpu) -> Option<Graph> {
        chosen(dir.path(), choice, cpu).ok().map(|(graph, _)| graph)
    }

    #[test]
    fn auto_takes_per_token_int8_on_every_cpu_and_blockwise_before_fp32_only_with_vnni() {
        let all = folder(&Graph::ALL);
        for cpu in [PLAIN, VNNI] {
            assert_eq!(
                graph_of(&all, GraphChoice::Auto, cpu),
                Some(Graph::Int8PerToken)
            );
        }
        let no_per_token = folder(&[Graph::Fp32, Graph::Int8Blockwise]);
        assert_eq!(
            graph_of(&no_per_token, GraphChoice::Auto, VNNI),
            Some(Graph::Int8Blockwise)
        );
    }

    #[test]
    fn auto_takes_fp32_over_blockwise_without_vnni_and_whatever_a_folder_has_last() {
        let no_per_token = folder(&[Graph::Fp32, Graph::Int8Blockwise]);
        assert_eq!(
            graph_of(&no_per_token, GraphChoice::Auto, PLAIN),
            Some(Graph::Fp32)
        );
        let blockwise_only = folder(&[Graph::Int8Blockwise]);
        assert_eq!(
            graph_of(&blockwise_only, GraphChoice::Auto, PLAIN),
            Some(Graph::Int8Blockwise)
        );
        let other_model = folder(&[Graph::Fp32]);
        assert_eq!(
            graph_of(&other_model, GraphChoice::Auto, VNNI),
            Some(Graph::Fp32)
        );
        assert!(graph_of(&folder(&[]), GraphChoice::Auto, PLAIN).is_none());
    }

    #[test]
    fn a_graph_named_runs_whatever_the_cpu_or_is_an_error_naming_its_file() {
        let all = folder(&Graph::ALL);
        let fp32 = GraphChoice::Only(Graph::Fp32);
        assert_eq!(graph_of(&all, fp32, PLAIN), Some(Graph::Fp32));
        let only_fp32 = folder(&[Graph::Fp32]);
        let err = chosen(
            only_fp32.path(),
            GraphChoice::Only(Graph::Int8PerToken),
            PLAIN,
        )
        .expect_err("no such graph");
        assert!(
            err.to_string().contains("model_int8_per_token.onnx"),
            "{err}"
        );
    }

    #[test]
    fn choices_parse_from_their_names_and_a_wrong_one_lists_them() {
        assert_eq!(GraphChoice::parse("auto"), Ok(GraphChoice::Auto));
        for graph in Graph::ALL {
            assert_eq!(
                GraphChoice::parse(graph.name()),
                Ok(GraphChoice::Only(graph))
            );
        }
        let err = GraphChoice::parse("int4").expect_err("not a graph");
        assert!(err.contains("int8-per-token"), "{err}");
    }
}
