//! Fixtures shared by Quarry's tests: documents generated in code (so no binary file is ever
//! committed), the location of the plugins `make plugins` built, an HTTP client for raw
//! requests, and a harness that runs the real `quarry` binary.

pub mod admin;
pub mod bench;
pub mod browser;
pub mod browsers;
pub mod caldav;
pub mod corpus;
pub mod credentials;
pub mod dav;
pub mod docx;
pub mod dovecot;
pub mod found;
pub mod generated;
pub mod http;
pub mod install;
pub mod local_servers;
pub mod mail;
pub mod mcp;
pub mod pdf;
pub mod plugin_sources;
pub mod postgres;
pub mod proc_status;
pub mod quarry;
pub mod rng;
pub mod scans;
pub mod session_bus;
pub mod web;

use std::io::Read;
use std::path::PathBuf;
use std::process::Child;
use std::thread::JoinHandle;

/// The folder of built plugins (`$QUARRY_PLUGINS_DIR`, set by the Makefile; `target/plugins` of
/// the repository otherwise). Panics with the fix when the plugins were not built.
pub fn plugins_dir() -> PathBuf {
    let dir = std::env::var_os("QUARRY_PLUGINS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/plugins"));
    assert!(
        dir.join("folder/quarry-plugin.toml").is_file(),
        "no built plugins in {}: run `make plugins` (or `make test`, which builds them)",
        dir.display()
    );
    dir
}

/// Quarry's page renderer (`$QUARRY_RENDERER`, set by the Makefile; the repository's
/// `target/renderer/quarry_preview.wasm` otherwise), which `make plugins` builds.
pub fn renderer_component() -> PathBuf {
    let path = std::env::var_os("QUARRY_RENDERER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/renderer/quarry_preview.wasm")
        });
    assert!(
        path.is_file(),
        "no page renderer at {}: run `make plugins`",
        path.display()
    );
    path
}

/// The embedding model folder: `$QUARRY_MODEL_DIR`, set by the Makefile, or the repository's
/// `models/all-MiniLM-L6-v2`, which `make setup` installs.
pub fn model_dir() -> PathBuf {
    model_folder("QUARRY_MODEL_DIR", "all-MiniLM-L6-v2", "`make setup`")
}

/// The multilingual model folder: `$QUARRY_MULTILINGUAL_MODEL_DIR`, set by the Makefile, or the
/// repository's `models/multilingual-e5-small`, which `make test` fetches
/// (`scripts/fetch-model.sh multilingual-e5-small`).
pub fn multilingual_model_dir() -> PathBuf {
    model_folder(
        "QUARRY_MULTILINGUAL_MODEL_DIR",
        "multilingual-e5-small",
        "`make setup MODEL=multilingual-e5-small`",
    )
}

/// The model folder `$variable` names, or `models/<name>` of the repository; it must hold an
/// embedding model (`how` says how to get one).
fn model_folder(variable: &str, name: &str, how: &str) -> PathBuf {
    models_in(variable, name, "tokenizer.json", how)
}

/// The folder `$variable` names, or `models/<name>` of the repository; it must hold `file`
/// (`how` says how to get it).
fn models_in(variable: &str, name: &str, file: &str, how: &str) -> PathBuf {
    let dir = std::env::var_os(variable)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../models")
                .join(name)
        });
    assert!(
        dir.join(file).is_file(),
        "no {file} in {}: run {how} (or `make test`, which does)",
        dir.display()
    );
    dir
}

/// The OCR models folder: `$QUARRY_OCR_MODELS`, or the repository's `models/ppocr-v6`, which
/// `make setup` installs.
pub fn ocr_models_dir() -> PathBuf {
    models_in("QUARRY_OCR_MODELS", "ppocr-v6", "rec.onnx", "`make setup`")
}

/// Debian's manual pages as `scripts/manpages.sh` renders them, for the evaluations and benches
/// in other languages: `$QUARRY_MANPAGES`, or `~/.cache/quarry/eval/manpages` (`make eval` and
/// `make bench` render them there).
pub fn manpages_dir() -> PathBuf {
    std::env::var_os("QUARRY_MANPAGES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(std::env::temp_dir)
                .join(".cache/quarry/eval/manpages")
        })
}

/// ONNX Runtime's library: `$QUARRY_ORT_LIB`, or the one `make setup` installs in `models/`.
pub fn ort_lib() -> PathBuf {
    std::env::var_os("QUARRY_ORT_LIB")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../models/onnxruntime/libonnxruntime.so")
        })
}

/// The folder of built test plugins (deliberately misbehaving ones): `$QUARRY_TEST_PLUGINS_DIR`,
/// set by the Makefile, or `target/test-plugins` of the repository.
pub fn test_plugins_dir() -> PathBuf {
    std::env::var_os("QUARRY_TEST_PLUGINS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/test-plugins"))
}

/// The folder of one built plugin, product or test.
pub fn plugin_dir(id: &str) -> PathBuf {
    let product = plugins_dir().join(id);
    if product.is_dir() {
        return product;
    }
    test_plugins_dir().join(id)
}

/// Where tests cache compiled components (`$QUARRY_COMPONENT_CACHE`, or under the system temp
/// folder), so each component compiles once per machine rather than once per test.
pub fn component_cache() -> PathBuf {
    std::env::var_os("QUARRY_COMPONENT_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("quarry-test-components"))
}

/// Reads a child's standard output and error in threads as they come (so that a child writing
/// more than a pipe holds never blocks); join each for its bytes.
pub fn read_outputs(child: &mut Child) -> (JoinHandle<Vec<u8>>, JoinHandle<Vec<u8>>) {
    fn drain(stream: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut stream) = stream {
                let _ = stream.read_to_end(&mut bytes);
            }
            bytes
        })
    }
    (drain(child.stdout.take()), drain(child.stderr.take()))
}
