//! Runs Quarry connector plugins: WebAssembly components in a sandbox.
//!
//! One [`Runtime`] per process holds the wasmtime engine (component model, pooling allocator,
//! epoch deadlines) and a cache of compiled components. [`Runtime::load`] turns a plugin folder
//! (manifest + component) into a [`Plugin`]; [`Plugin::session`] gives a sandboxed instance
//! configured from the connector's settings and the user's [`Grant`] only: granted folders
//! read-only, HTTP only to granted hosts, no environment, no other files. Every call is bounded by [`Limits`].

mod change_hints;
mod component_cache;
mod engine;
mod error;
mod install;
mod limits;
mod manifest;
mod plugin;
mod plugin_files;
mod plugin_set;
mod policy;
mod renderer;
mod sandbox;
pub mod suggest;
mod usage;
mod wit;

pub use change_hints::MAX_HINTS_PER_CALL;
pub use engine::{Runtime, RuntimeConfig};
pub use error::{GuestError, Refusal, RuntimeError, RuntimeErrorKind};
pub use install::StagedPlugin;
pub use limits::Limits;
pub use manifest::{Capabilities, ConfigField, FieldKind, MANIFEST_FILE, Manifest, SyncSchedule};
pub use plugin::{Plugin, Session, ToFetch};
pub use plugin_files::{MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES, read_bounded, read_bounded_text};
pub use plugin_set::PluginSet;
pub use policy::grant::Grant;
pub use policy::protected::ProtectedPaths;
pub use renderer::{
    PageImage, PageWord, PixelBox, RENDERER, Renderer, Unrendered, renderer_limits,
};
pub use sandbox::reports::{Progress, ProgressFn};
pub use usage::Usage;
pub use wit::source::Watched;
pub use wit::version::WitVersion;
