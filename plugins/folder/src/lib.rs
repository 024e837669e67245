//! Quarry's folder connector.
//!
//! Lists the files of the folder the user granted (mounted read-only in the sandbox), skipping
//! hidden files, well-known build and dependency folders and whatever `.gitignore`, `.ignore` or
//! `.quarryignore` files exclude, and extracts their text inside the sandbox: plain text,
//! Markdown, source code, HTML, JSON, CSV/TSV, PDF (with pages) and DOCX. Other files, and files
//! over the size limit, are listed with their metadata only.

mod ids;
mod walk;

use std::cell::RefCell;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use quarry_sdk::fs::{Dir, File};
use quarry_sdk::{
    Batch, Config, Connector, Content, Coverage, DocMeta, DocRef, Error, FileChunk, ScannedPage,
};

use crate::walk::{FileEntry, Filters};
use quarry_extract::{self as extract, Kind, kinds};

/// Files listed per `list-docs` call.
const BATCH_SIZE: usize = 1024;

/// The configured folder connector.
struct Folder {
    root: PathBuf,
    filters: Filters,
    max_text_bytes: u64,
    /// Folder listings the last page kept for the next (see [`walk::Resume`]).
    resume: RefCell<walk::Resume>,
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
            resume: RefCell::default(),
        })
    }

    fn list_docs(&self, checkpoint: Option<String>) -> Result<Batch, Error> {
        // A checkpoint is the relative path of the last file listed; an empty one (the end of
        // the previous listing) starts a new full listing: a folder has no change log.
        let after = checkpoint.filter(|c| !c.is_empty());
        let page = walk::walk(
            &self.root,
            &self.filters,
            after.as_deref(),
            BATCH_SIZE,
            &mut self.resume.borrow_mut(),
        )
        .map_err(|e| io_error(&self.root, &e))?;
        let checkpoint = match (page.more, page.files.last()) {
            (true, Some(last)) => last.rel.clone(),
            _ => String::new(),
        };
        let root = self.root_dir()?;
        let upserts = page
            .files
            .into_iter()
            .map(|entry| self.doc_meta(&root, entry))
            .collect();
        Ok(Batch {
            upserts,
            deletes: Vec::new(),
            checkpoint,
            more: page.more,
            coverage: Coverage::Full,
        })
    }

    fn list_changes(&self, paths: Vec<String>) -> Result<Option<Batch>, Error> {
        let root = self.root_dir()?;
        let mut upserts = Vec::new();
        let mut deletes = Vec::new();
        for path in &paths {
            match self.change_at(&root, path) {
                Change::Upsert(entry) => upserts.push(self.doc_meta(&root, entry)),
                Change::Delete(id) => deletes.push(id),
                Change::Unlisted => {}
                Change::Unknown => return Ok(None),
            }
        }
        // One path may be named twice (a file and a link to it are different paths).
        let mut seen = std::collections::HashSet::new();
        upserts.retain(|d: &DocMeta| seen.insert(d.id.clone()));
        deletes.retain(|id| !seen.contains(id) && seen.insert(id.clone()));
        Ok(Some(Batch {
            upserts,
            deletes,
            checkpoint: String::new(),
            more: false,
            coverage: Coverage::Changes,
        }))
    }

    fn fetch_content(&self, doc: DocRef) -> Result<Content, Error> {
        let (path, root) = self.locate(&doc.locator)?;
        let io = |e: std::io::Error| io_error(&path, &e);
        let unreadable = |e: std::io::Error| self.open_error(&root, &path, &doc.locator, e);
        // Most files are read whole by a first read of their start, which also tells their
        // size; a kind that is read through the file (a package: Word, PowerPoint,
        // OpenDocument) is only statted first.
        let by_name = kinds::by_name(&doc.locator);
        let (head, size) = match by_name {
            Some((kind, _)) if kind.is_package() || kind == Kind::Binary => {
                let file = root.open_file(&doc.locator).map_err(unreadable)?;
                (Vec::new(), file.stat().map_err(io)?.size)
            }
            _ => root
                .read_start(&doc.locator, extract::HEAD_BYTES)
                .map_err(unreadable)?,
        };
        if size > self.max_text_bytes {
            return Ok(Content::text(String::new()).with_meta(
                "skipped",
                format!("{size} bytes, over the {} byte limit", self.max_text_bytes),
            ));
        }
        let (kind, _) = by_name.unwrap_or_else(|| kinds::by_content(&head));
        let open = || root.open_file(&doc.locator);
        extract::extract(kind, &open, size, head).map_err(|e| match e {
            extract::Failure::Io(e) => io_error(&path, &e),
            extract::Failure::Format(e) => e,
        })
    }

    fn read_scans(&self, doc: DocRef, pages: Vec<u32>) -> Result<Vec<ScannedPage>, Error> {
        let (kind, mime) = kinds::by_name(&doc.locator).unwrap_or((Kind::Binary, ""));
        let image = mime.starts_with("image/") && !mime.starts_with("image/svg");
        if kind != Kind::Pdf && !image {
            return Err(Error::Other(format!(
                "{} is neither an image nor a PDF: nothing to read by OCR",
                doc.locator
            )));
        }
        let (path, file) = self.open(&doc.locator)?;
        let io = |e: std::io::Error| io_error(&path, &e);
        let size = file.stat().map_err(io)?.size;
        if size > self.max_text_bytes {
            return Err(Error::Other(format!(
                "{size} bytes, over the {} byte limit",
                self.max_text_bytes
            )));
        }
        let bytes = file.read_at(0, size).map_err(io)?;
        extract::scan::read(kind, &bytes, &pages, &path.display().to_string())
    }

    fn read_file(&self, doc: DocRef, offset: u64, max_bytes: u32) -> Result<FileChunk, Error> {
        let (path, file) = self.open(&doc.locator)?;
        let total_size = file.stat().map_err(|e| io_error(&path, &e))?.size;
        let data = if offset < total_size {
            file.read_at(offset, u64::from(max_bytes))
                .map_err(|e| io_error(&path, &e))?
        } else {
            Vec::new()
        };
        Ok(FileChunk { data, total_size })
    }

    fn validate(&self) -> Result<(), Error> {
        match self.root_dir().map(|dir| dir.entries()) {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(Error::InvalidConfig(format!(
                "`folder` cannot be read: {e}"
            ))),
            Err(e) => Err(e),
        }
    }
}

/// What a change hint means for the listing.
enum Change {
    /// A file the walk lists, as it is now.
    Upsert(FileEntry),
    /// The document of a file that is gone or no longer listed.
    Delete(String),
    /// Something the walk does not list, and never did (hidden, excluded).
    Unlisted,
    /// What changed cannot be told from the path (a folder, an ignore file, the root).
    Unknown,
}

impl Folder {
    /// What changed at sandbox path `path`, as the walk would see it: a file is listed as the
    /// walk lists it (links to files followed; other kinds never), and a gone one deleted.
    fn change_at(&self, root: &Dir, path: &str) -> Change {
        let prefix = self.root.to_string_lossy();
        let Some(rel) = path
            .strip_prefix(prefix.as_ref())
            .and_then(|r| r.strip_prefix('/'))
        else {
            return Change::Unknown;
        };
        let names: Vec<&str> = rel.split('/').collect();
        let plain = names
            .iter()
            .all(|n| !n.is_empty() && *n != "." && *n != "..");
        let name = names.last().copied().unwrap_or_default();
        if !plain || walk::is_ignore_file(name) {
            return Change::Unknown;
        }
        let stat = match root.stat(rel) {
            Ok(stat) => stat,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Change::Delete(ids::doc_id(rel));
            }
            Err(_) => return Change::Unknown,
        };
        let file = match stat.kind {
            quarry_sdk::fs::Kind::File => stat,
            quarry_sdk::fs::Kind::Symlink => match root.stat_follow(rel) {
                Ok(target) if target.kind == quarry_sdk::fs::Kind::File => target,
                _ => return Change::Delete(ids::doc_id(rel)),
            },
            // A folder created or moved in: what it holds needs a walk.
            quarry_sdk::fs::Kind::Dir => return Change::Unknown,
            quarry_sdk::fs::Kind::Other => return Change::Delete(ids::doc_id(rel)),
        };
        if walk::excluded(&self.root, &self.filters, &names, false) {
            return Change::Unlisted;
        }
        Change::Upsert(FileEntry {
            rel: rel.to_owned(),
            stat: file,
        })
    }

    fn doc_meta(&self, root: &Dir, entry: FileEntry) -> DocMeta {
        let size = entry.stat.size;
        // Only files without a known extension are opened here, to look at their first bytes.
        let (kind, mime) =
            kinds::classify(&entry.rel, |n| root.open_file(&entry.rel)?.read_at(0, n))
                .unwrap_or((Kind::Binary, "application/octet-stream"));
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
            update_time_ms: entry.stat.modified_ms(),
            version: ids::version(&entry.stat),
            has_text: kind != Kind::Binary && size <= self.max_text_bytes,
            locator: entry.rel,
        }
    }

    fn root_dir(&self) -> Result<Dir, Error> {
        Dir::open(&self.root.to_string_lossy()).map_err(|e| io_error(&self.root, &e))
    }

    /// The path a locator names and the granted folder. A locator must be a plain relative path
    /// (the sandbox would refuse an escape anyway; this gives a clear error first).
    fn locate(&self, locator: &str) -> Result<(PathBuf, Dir), Error> {
        let plain = !locator.is_empty()
            && !locator.starts_with('/')
            && locator
                .split('/')
                .all(|name| !name.is_empty() && name != "." && name != "..");
        if !plain {
            return Err(Error::NotFound(format!(
                "{locator:?} is not a path inside the folder"
            )));
        }
        Ok((self.root.join(locator), self.root_dir()?))
    }

    /// Opens the file a locator names.
    fn open(&self, locator: &str) -> Result<(PathBuf, File), Error> {
        let (path, root) = self.locate(locator)?;
        let file = root
            .open_file(locator)
            .map_err(|e| self.open_error(&root, &path, locator, e))?;
        Ok((path, file))
    }

    /// The error for a file of the folder that could not be opened. A listed file that is no
    /// longer a plain file inside the folder is, for this connector, a file that no longer
    /// exists: replaced by a FIFO, a socket or a device (the host opens only regular files and
    /// folders), or by a link that leads out of the folder or nowhere, or reached through a
    /// folder that became such a link. The next listing agrees: it lists no such file.
    fn open_error(&self, root: &Dir, path: &Path, locator: &str, e: std::io::Error) -> Error {
        use quarry_sdk::fs::Kind;
        let gone = |why: &str| Error::NotFound(format!("{} {why}", path.display()));
        let mut folder = String::new();
        let names: Vec<&str> = locator.split('/').collect();
        for name in &names[..names.len().saturating_sub(1)] {
            if !folder.is_empty() {
                folder.push('/');
            }
            folder.push_str(name);
            match root.stat(&folder) {
                Ok(stat) if stat.kind == Kind::Dir => {}
                Ok(_) => return gone("is no longer inside a folder of the connector's"),
                Err(e) if e.kind() == ErrorKind::NotFound => return gone("no longer exists"),
                Err(_) => return gone("is no longer reachable inside the folder"),
            }
        }
        match (root.stat(locator), root.stat_follow(locator)) {
            (Err(e), _) if e.kind() == ErrorKind::NotFound => gone("no longer exists"),
            (Ok(own), Ok(target)) if own.kind == Kind::Symlink && target.kind == Kind::File => {
                io_error(path, &e)
            }
            (Ok(own), _) if own.kind == Kind::Symlink => {
                gone("is now a link that leads out of the folder or nowhere")
            }
            (Ok(own), _) if own.kind != Kind::File => gone("is no longer a regular file"),
            _ => io_error(path, &e),
        }
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> Error {
    let message = format!("{}: {e}", path.display());
    // Everything but a missing file may pass (permissions given back, a disk mounted again):
    // "unavailable" has the host try again at the next sync, which a watched folder gets as
    // soon as the file's permissions change.
    match e.kind() {
        ErrorKind::NotFound => Error::NotFound(message),
        _ => Error::Unavailable(message),
    }
}

quarry_sdk::export_connector!(Folder);
