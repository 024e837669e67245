//! Host bindings, one module per supported WIT version. A released WIT folder never changes; a new
//! version gets a new module here, and plugins built against any supported version keep working.

/// WIT package versions this host can run.
pub const SUPPORTED_WIT_VERSIONS: &[&str] = &["0.1.0"];

/// The WIT package name whose `source` interface a connector exports.
pub const WIT_PACKAGE: &str = "quarry:connector";

/// Bindings for `quarry:connector@0.1.0`.
pub mod v0_1_0 {
    wasmtime::component::bindgen!({
        path: "../../wit/connector@0.1.0",
        world: "connector",
    });
}
