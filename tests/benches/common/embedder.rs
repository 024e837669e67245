//! The embedding benches' model: the default one (`make setup`), on every core.

use quarry_embed::{EmbedConfig, Embedder, GraphChoice};

/// The default model loaded with as many threads as the machine has cores, and that number.
pub fn on_every_core() -> (Embedder, usize) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let embedder = Embedder::load(&EmbedConfig {
        model_dir: quarry_tests::model_dir(),
        runtime_library: quarry_tests::ort_lib(),
        threads,
        graph: GraphChoice::default(),
    })
    .expect("the model loads (run `make setup`)");
    (embedder, threads)
}
