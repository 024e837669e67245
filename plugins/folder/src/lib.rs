//! Quarry's folder connector.
//!
//! Lists the files of the folder the user granted (mounted read-only in the sandbox), skipping
//! hidden files, well-known build and dependency folders and whatever `.gitignore`, `.ignore` or
//! `.quarryignore` files exclude, and extracts their text inside the sandbox: plain text,
//! Markdown, source code, HTML, JSON, CSV/TSV, PDF (with pages) and DOCX. Other files, and files
//! over the size limit, are listed with their metadata only.

mod extract;
mod ids;
mod kinds;
mod walk;

use std::fs::File;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

use quarry_sdk::{Batch, Config, Connector, Content, Coverage, DocMeta, DocRef, Error, FileChunk};

use crate::kinds::Kind;
use crate::walk::{FileEntry, Filters};

/// Files listed per `list-docs` call.
const BATCH_SIZE: usize = 256;

/// The configured folder connector.
struct Folder {
    root: PathBuf,
    filters: Filters,
    max_text_bytes: u64,
}

impl Connector for Folder {
    fn new(config: Config) -> Result<Self, Error> {
        let root = PathBuf::from(config.require("folder")?);
        // The host fills in the manifest's defaults (quarry-plugin.toml) for unset fields.
        let max_mb = config.u64_or("max_file_mb", 32)?;
        Ok(Folder {
            root,
            filters: Filters {
                exclude: config.list_or("exclude", &[]),
                include_hidden: config.bool_or("include_hidden", false)?,
            },
            max_text_bytes: max_mb.saturating_mul(1 << 20),
        })
    }

    fn list_docs(&self, checkpoint: Option<String>) -> Result<Batch, Error> {
        // A checkpoint is the relative path of the last file listed; an empty one (the end of
        // the previous listing) starts a new full listing: a folder has no change log.
        let after = checkpoint.filter(|c| !c.is_empty());
        let page = walk::walk(&self.root, &self.filters, after.as_deref(), BATCH_SIZE)
            .map_err(|e| io_error(&self.root, &e))?;
        let checkpoint = match (page.more, page.files.last()) {
            (true, Some(last)) => last.rel.clone(),
            _ => String::new(),
        };
        let upserts = page
            .files
            .into_iter()
            .map(|entry| self.doc_meta(entry))
            .collect();
        Ok(Batch {
            upserts,
            deletes: Vec::new(),
            checkpoint,
            more: page.more,
            coverage: Coverage::Full,
        })
    }

    fn fetch_content(&self, doc: DocRef) -> Result<Content, Error> {
        let path = self.resolve(&doc.locator)?;
        let file = File::open(&path).map_err(|e| io_error(&path, &e))?;
        let size = file.metadata().map_err(|e| io_error(&path, &e))?.len();
        if size > self.max_text_bytes {
            return Ok(Content::text(String::new()).with_meta(
                "skipped",
                format!("{size} bytes, over the {} byte limit", self.max_text_bytes),
            ));
        }
        let (kind, _) = kinds::classify(&path).map_err(|e| io_error(&path, &e))?;
        extract::extract(kind, file, size)
    }

    fn read_file(&self, doc: DocRef, offset: u64, max_bytes: u32) -> Result<FileChunk, Error> {
        let path = self.resolve(&doc.locator)?;
        let mut file = File::open(&path).map_err(|e| io_error(&path, &e))?;
        let total_size = file.metadata().map_err(|e| io_error(&path, &e))?.len();
        let mut data = Vec::with_capacity(max_bytes as usize);
        if offset < total_size {
            file.seek(SeekFrom::Start(offset))
                .map_err(|e| io_error(&path, &e))?;
            file.take(u64::from(max_bytes))
                .read_to_end(&mut data)
                .map_err(|e| io_error(&path, &e))?;
        }
        Ok(FileChunk { data, total_size })
    }

    fn validate(&self) -> Result<(), Error> {
        match std::fs::read_dir(&self.root) {
            Ok(_) => Ok(()),
            Err(e) => Err(Error::InvalidConfig(format!(
                "`folder` cannot be read: {e}"
            ))),
        }
    }
}

impl Folder {
    fn doc_meta(&self, entry: FileEntry) -> DocMeta {
        let path = self.root.join(&entry.rel);
        let size = entry.meta.len();
        let (kind, mime) =
            kinds::classify(&path).unwrap_or((Kind::Binary, "application/octet-stream"));
        let title = entry
            .rel
            .rsplit('/')
            .next()
            .unwrap_or(&entry.rel)
            .to_owned();
        DocMeta {
            id: ids::doc_id(&entry.rel),
            title,
            path: Some(entry.rel.clone()),
            url: None,
            mime_type: mime.to_owned(),
            size_bytes: size,
            update_time_ms: ids::modified_ms(&entry.meta),
            version: ids::version(&entry.meta),
            has_text: kind != Kind::Binary && size <= self.max_text_bytes,
            locator: entry.rel,
        }
    }

    /// The sandbox path of a locator, which must be a plain relative path (the sandbox would
    /// refuse an escape anyway; this gives a clear error first).
    fn resolve(&self, locator: &str) -> Result<PathBuf, Error> {
        let rel = Path::new(locator);
        let plain =
            !locator.is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
        if !plain {
            return Err(Error::NotFound(format!(
                "{locator:?} is not a path inside the folder"
            )));
        }
        Ok(self.root.join(rel))
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> Error {
    let message = format!("{}: {e}", path.display());
    match e.kind() {
        ErrorKind::NotFound => Error::NotFound(message),
        ErrorKind::PermissionDenied => Error::Other(message),
        _ => Error::Unavailable(message),
    }
}

quarry_sdk::export_connector!(Folder);
