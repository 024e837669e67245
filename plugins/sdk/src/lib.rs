//! Write Quarry connectors in Rust.
//!
//! A connector is a type that implements [`Connector`], exported with [`export_connector!`]:
//!
//! ```ignore
//! use quarry_sdk::{Batch, Config, Connector, Content, Coverage, DocRef, Error};
//!
//! struct Notes { dir: String }
//!
//! impl Connector for Notes {
//!     fn new(config: Config) -> Result<Self, Error> {
//!         Ok(Notes { dir: config.require("folder")?.to_owned() })
//!     }
//!     fn list_docs(&self, _checkpoint: Option<String>) -> Result<Batch, Error> {
//!         Ok(Batch::last(Vec::new(), Coverage::Full))
//!     }
//!     fn fetch_content(&self, doc: DocRef) -> Result<Content, Error> {
//!         Ok(Content::text(format!("{} in {}", doc.locator, self.dir)))
//!     }
//! }
//!
//! quarry_sdk::export_connector!(Notes);
//! ```
//!
//! The WIT interface this implements is `quarry:connector@0.2.0` (`wit/connector@0.2.0` in the
//! Quarry repository); its doc comments are the reference for every type here. A connector that
//! can tell what changed at given paths implements [`Connector::list_changes`]; the default
//! answers that it cannot, and the host lists everything instead.

mod config;
pub mod fs;
mod helpers;
pub mod html;
pub mod http;
mod log;
pub mod text;

/// The raw bindings generated from the WIT. Connector code rarely needs them directly.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit/connector@0.2.0",
        world: "connector",
        pub_export_macro: true,
        default_bindings_module: "quarry_sdk::bindings",
        generate_all,
    });
}

pub use bindings::quarry::connector::types::{
    Batch, ConnectorError as Error, Content, Coverage, DocMeta, DocRef, FileChunk, LogLevel,
};
pub use config::Config;
pub use helpers::stable_id;
pub use log::{log, progress};

/// WIT version this SDK implements.
pub const WIT_VERSION: &str = "0.2.0";

/// A connector: builds itself from its configuration and answers the host's calls.
///
/// Every call may run in a fresh instance, so [`Connector::new`] runs at the start of each call.
/// Keep it cheap (no listing or network access there); [`Connector::validate`] is where checks
/// that touch the source belong.
pub trait Connector: Sized {
    /// Builds the connector from the configuration the user set (validated against the manifest).
    fn new(config: Config) -> Result<Self, Error>;

    /// Lists one batch of documents; see `list-docs` in the WIT.
    fn list_docs(&self, checkpoint: Option<String>) -> Result<Batch, Error>;

    /// Lists what changed at `paths` (sandbox paths the host's watcher saw change); see
    /// `list-changes` in the WIT. The default answers `None`: the host then lists everything.
    fn list_changes(&self, paths: Vec<String>) -> Result<Option<Batch>, Error> {
        let _ = paths;
        Ok(None)
    }

    /// Extracts the text of one document.
    fn fetch_content(&self, doc: DocRef) -> Result<Content, Error>;

    /// Reads part of an original file. The default answers that this connector serves no files.
    fn read_file(&self, doc: DocRef, offset: u64, max_bytes: u32) -> Result<FileChunk, Error> {
        let _ = (doc, offset, max_bytes);
        Err(Error::Other(
            "this connector does not serve original files".to_owned(),
        ))
    }

    /// Checks that the configuration works (the folder exists, the credentials are accepted).
    /// The default accepts any configuration that [`Connector::new`] accepts.
    fn validate(&self) -> Result<(), Error> {
        Ok(())
    }
}

/// Glue called by the code that [`export_connector!`] generates. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    use super::{Batch, Config, Connector, Content, DocRef, Error, FileChunk};

    fn connector<C: Connector>() -> Result<C, Error> {
        C::new(Config::from_host())
    }

    pub fn list_docs<C: Connector>(checkpoint: Option<String>) -> Result<Batch, Error> {
        connector::<C>()?.list_docs(checkpoint)
    }

    pub fn list_changes<C: Connector>(paths: Vec<String>) -> Result<Option<Batch>, Error> {
        connector::<C>()?.list_changes(paths)
    }

    pub fn fetch_content<C: Connector>(doc: DocRef) -> Result<Content, Error> {
        connector::<C>()?.fetch_content(doc)
    }

    pub fn read_file<C: Connector>(
        doc: DocRef,
        offset: u64,
        max_bytes: u32,
    ) -> Result<FileChunk, Error> {
        connector::<C>()?.read_file(doc, offset, max_bytes)
    }

    pub fn validate_config<C: Connector>(config: Vec<(String, String)>) -> Result<(), Error> {
        C::new(Config::new(config))?.validate()
    }
}

/// Exports a [`Connector`] implementation as the component's `source` interface.
///
/// Call it once, at the top level of the connector crate (a `cdylib`).
#[macro_export]
macro_rules! export_connector {
    ($connector:ty) => {
        #[doc(hidden)]
        struct __QuarryExport;

        impl $crate::bindings::exports::quarry::connector::source::Guest for __QuarryExport {
            fn list_docs(checkpoint: Option<String>) -> Result<$crate::Batch, $crate::Error> {
                $crate::__private::list_docs::<$connector>(checkpoint)
            }
            fn list_changes(
                paths: Vec<String>,
            ) -> Result<Option<$crate::Batch>, $crate::Error> {
                $crate::__private::list_changes::<$connector>(paths)
            }
            fn fetch_content(doc: $crate::DocRef) -> Result<$crate::Content, $crate::Error> {
                $crate::__private::fetch_content::<$connector>(doc)
            }
            fn read_file(
                doc: $crate::DocRef,
                offset: u64,
                max_bytes: u32,
            ) -> Result<$crate::FileChunk, $crate::Error> {
                $crate::__private::read_file::<$connector>(doc, offset, max_bytes)
            }
            fn validate_config(config: Vec<(String, String)>) -> Result<(), $crate::Error> {
                $crate::__private::validate_config::<$connector>(config)
            }
        }

        $crate::bindings::export!(__QuarryExport with_types_in $crate::bindings);
    };
}
