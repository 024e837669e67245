//! `make install`'s script (`scripts/install.sh`) run into a prefix of the test's own, with the
//! binary cargo built beside the tests, the plugins `make plugins` built and the models
//! `make setup` fetched.

use std::path::Path;
use std::process::Command;

/// Runs `scripts/install.sh` (with `extra` arguments: `--uninstall`) for PREFIX `prefix`;
/// panics with its error unless it succeeds.
pub fn install_into(prefix: &Path, extra: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/install.sh");
    let out = Command::new(script)
        .args(extra)
        .env("PREFIX", prefix)
        .env("BIN", crate::quarry::binary())
        .env("PLUGINS", crate::plugins_dir())
        .env("RENDERER", crate::renderer_component())
        .env("MODELS", crate::model_dir().parent().expect("models/"))
        .output()
        .expect("install.sh runs");
    assert!(
        out.status.success(),
        "install.sh {extra:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
