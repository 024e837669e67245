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
//! The WIT interface this implements is `quarry:connector@0.5.0` (`wit/connector@0.5.0` in the
//! Quarry repository); its doc comments are the reference for every type here. A connector that
//! can tell what changed at given paths implements [`Connector::list_changes`]; the default
//! answers that it cannot, and the host lists everything instead. The host asks for the texts of
//! small documents several at a time ([`Connector::fetch_contents`]); the default extracts each
//! with [`Connector::fetch_content`], which is all most connectors need. A connector whose
//! documents hold images of text (scans, screenshots) implements [`Connector::read_scans`],
//! decoding each page's image itself and reading it with [`ocr::recognize_text`]. A connector
//! that speaks a protocol of its own opens [`net::Connection`]s (TLS done and verified by the
//! host, to the hosts its grant allows), and one whose source can tell it of changes (IMAP
//! IDLE) implements [`Connector::watch`].

mod config;
pub mod dates;
#[cfg(feature = "dav")]
pub mod dav;
pub mod fs;
mod helpers;
pub mod html;
pub mod http;
mod log;
pub mod net;
pub mod ocr;
pub mod text;

/// The raw bindings generated from the WIT. Connector code rarely needs them directly.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit/connector@0.5.0",
        world: "connector",
        pub_export_macro: true,
        default_bindings_module: "quarry_sdk::bindings",
        generate_all,
    });
}

pub use bindings::quarry::connector::types::{
    Batch, ConnectorError as Error, Content, Coverage, DocMeta, DocRef, FileChunk, LogLevel,
    ScannedPage, WatchOutcome,
};
pub use config::Config;
pub use helpers::stable_id;
pub use log::{log, progress};

/// WIT version this SDK implements.
pub const WIT_VERSION: &str = "0.5.0";

/// A connector: builds itself from its configuration and answers the host's calls.
///
/// [`Connector::new`] runs at an instance's first call, and the connector it makes answers that
/// instance's later calls (the configuration does not change while an instance lives; a failed
/// `new` is tried again at the next call). The host may make a fresh instance for any call, so
/// keep `new` cheap (no listing or network access there); [`Connector::validate`] is where checks
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

    /// Extracts the texts of several documents, one result per document in the order given;
    /// see `fetch-contents` in the WIT. The default calls [`Connector::fetch_content`] for each,
    /// which already saves the cost of a call per document; a connector that can fetch several
    /// at once (one request to a web service for many items) does better to implement it.
    fn fetch_contents(&self, docs: Vec<DocRef>) -> Vec<Result<Content, Error>> {
        docs.into_iter()
            .map(|doc| self.fetch_content(doc))
            .collect()
    }

    /// Reads by OCR the `pages` (counted from 1) of a document that have no text; see
    /// `read-scans` in the WIT. Decode each page's image here, in the sandbox, and read it with
    /// [`ocr::recognize_text`]. The default answers that this connector has no scans.
    fn read_scans(&self, doc: DocRef, pages: Vec<u32>) -> Result<Vec<ScannedPage>, Error> {
        let _ = (doc, pages);
        Err(Error::Other(
            "this connector has no scans to read".to_owned(),
        ))
    }

    /// Waits, at most `max_wait_ms`, for the source to change after `checkpoint`; see `watch`
    /// in the WIT. The default answers that this connector cannot watch: the host syncs it on
    /// its schedule.
    fn watch(&self, checkpoint: Option<String>, max_wait_ms: u32) -> Result<WatchOutcome, Error> {
        let _ = (checkpoint, max_wait_ms);
        Ok(WatchOutcome::Unsupported)
    }

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
    use super::{
        Batch, Config, Connector, Content, DocRef, Error, FileChunk, ScannedPage, WatchOutcome,
    };

    use std::cell::OnceCell;
    use std::thread::LocalKey;

    /// Where [`export_connector!`] keeps the instance's connector.
    pub type Slot<C> = LocalKey<OnceCell<C>>;

    /// Runs `f` on the instance's connector, made at the first call that finds none.
    fn with<C: Connector, R>(
        slot: &'static Slot<C>,
        f: impl FnOnce(&C) -> Result<R, Error>,
    ) -> Result<R, Error> {
        slot.with(|cell| {
            let connector = match cell.get() {
                Some(connector) => connector,
                None => {
                    let made = C::new(Config::from_host())?;
                    cell.get_or_init(move || made)
                }
            };
            f(connector)
        })
    }

    pub fn list_docs<C: Connector>(
        slot: &'static Slot<C>,
        checkpoint: Option<String>,
    ) -> Result<Batch, Error> {
        with(slot, |c| c.list_docs(checkpoint))
    }

    pub fn list_changes<C: Connector>(
        slot: &'static Slot<C>,
        paths: Vec<String>,
    ) -> Result<Option<Batch>, Error> {
        with(slot, |c| c.list_changes(paths))
    }

    pub fn fetch_content<C: Connector>(
        slot: &'static Slot<C>,
        doc: DocRef,
    ) -> Result<Content, Error> {
        with(slot, |c| c.fetch_content(doc))
    }

    pub fn fetch_contents<C: Connector>(
        slot: &'static Slot<C>,
        docs: Vec<DocRef>,
    ) -> Vec<Result<Content, Error>> {
        let count = docs.len();
        // A connector that cannot be made fails each document with the reason.
        with(slot, |c| Ok(c.fetch_contents(docs))).unwrap_or_else(|e| vec![Err(e); count])
    }

    pub fn read_file<C: Connector>(
        slot: &'static Slot<C>,
        doc: DocRef,
        offset: u64,
        max_bytes: u32,
    ) -> Result<FileChunk, Error> {
        with(slot, |c| c.read_file(doc, offset, max_bytes))
    }

    pub fn read_scans<C: Connector>(
        slot: &'static Slot<C>,
        doc: DocRef,
        pages: Vec<u32>,
    ) -> Result<Vec<ScannedPage>, Error> {
        with(slot, |c| c.read_scans(doc, pages))
    }

    pub fn watch<C: Connector>(
        slot: &'static Slot<C>,
        checkpoint: Option<String>,
        max_wait_ms: u32,
    ) -> Result<WatchOutcome, Error> {
        with(slot, |c| c.watch(checkpoint, max_wait_ms))
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

        ::std::thread_local! {
            static __QUARRY_CONNECTOR: ::std::cell::OnceCell<$connector> =
                const { ::std::cell::OnceCell::new() };
        }

        impl $crate::bindings::exports::quarry::connector::source::Guest for __QuarryExport {
            fn list_docs(checkpoint: Option<String>) -> Result<$crate::Batch, $crate::Error> {
                $crate::__private::list_docs(&__QUARRY_CONNECTOR, checkpoint)
            }
            fn list_changes(
                paths: Vec<String>,
            ) -> Result<Option<$crate::Batch>, $crate::Error> {
                $crate::__private::list_changes(&__QUARRY_CONNECTOR, paths)
            }
            fn fetch_content(doc: $crate::DocRef) -> Result<$crate::Content, $crate::Error> {
                $crate::__private::fetch_content(&__QUARRY_CONNECTOR, doc)
            }
            fn fetch_contents(
                docs: Vec<$crate::DocRef>,
            ) -> Vec<Result<$crate::Content, $crate::Error>> {
                $crate::__private::fetch_contents(&__QUARRY_CONNECTOR, docs)
            }
            fn read_file(
                doc: $crate::DocRef,
                offset: u64,
                max_bytes: u32,
            ) -> Result<$crate::FileChunk, $crate::Error> {
                $crate::__private::read_file(&__QUARRY_CONNECTOR, doc, offset, max_bytes)
            }
            fn read_scans(
                doc: $crate::DocRef,
                pages: Vec<u32>,
            ) -> Result<Vec<$crate::ScannedPage>, $crate::Error> {
                $crate::__private::read_scans(&__QUARRY_CONNECTOR, doc, pages)
            }
            fn watch(
                checkpoint: Option<String>,
                max_wait_ms: u32,
            ) -> Result<$crate::WatchOutcome, $crate::Error> {
                $crate::__private::watch(&__QUARRY_CONNECTOR, checkpoint, max_wait_ms)
            }
            fn validate_config(config: Vec<(String, String)>) -> Result<(), $crate::Error> {
                $crate::__private::validate_config::<$connector>(config)
            }
        }

        $crate::bindings::export!(__QuarryExport with_types_in $crate::bindings);
    };
}
