// What the version-test connectors share, written against names every version of the WIT
// has: the `.txt` files directly inside the folder granted as `folder`, one document each.
// Included by `older-notes` (0.2.0) and `first-notes` (0.1.0), each with its own bindings.

use bindings::quarry::connector::host;
use bindings::quarry::connector::types::{
    Batch, ConnectorError, Content, Coverage, DocMeta, DocRef, FileChunk,
};

/// The sandbox path of the granted folder.
fn folder() -> Result<String, ConnectorError> {
    host::config()
        .into_iter()
        .find(|(key, _)| key == "folder")
        .map(|(_, value)| value)
        .ok_or_else(|| ConnectorError::InvalidConfig("folder: required".to_owned()))
}

fn io_error(what: &str, e: &std::io::Error) -> ConnectorError {
    ConnectorError::Unavailable(format!("{what}: {e}"))
}

/// A document id from a file name: its letters and digits, others as `_`, and its length (so
/// two names that differ only in other characters still differ).
fn doc_id(name: &str) -> String {
    let kept: String = name
        .chars()
        .take(100)
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("{kept}-{}", name.len())
}

/// Every `.txt` file of the folder.
fn list_notes() -> Result<Batch, ConnectorError> {
    let dir = folder()?;
    let mut upserts = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(|e| io_error(&dir, &e))? {
        let entry = entry.map_err(|e| io_error(&dir, &e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let meta = entry.metadata().map_err(|e| io_error(&name, &e))?;
        if !meta.is_file() || !name.ends_with(".txt") {
            continue;
        }
        upserts.push(DocMeta {
            id: doc_id(&name),
            locator: name.clone(),
            title: name.clone(),
            path: Some(name),
            url: None,
            mime_type: "text/plain".to_owned(),
            size_bytes: meta.len(),
            update_time_ms: 0,
            version: meta.len().to_string(),
            has_text: true,
        });
    }
    Ok(Batch {
        upserts,
        deletes: Vec::new(),
        checkpoint: String::new(),
        more: false,
        coverage: Coverage::Full,
    })
}

/// A note's text.
fn note_text(doc: DocRef) -> Result<Content, ConnectorError> {
    let path = format!("{}/{}", folder()?, doc.locator);
    let text = std::fs::read_to_string(&path).map_err(|e| io_error(&doc.locator, &e))?;
    Ok(Content {
        text,
        page_starts: Vec::new(),
        metadata: Vec::new(),
    })
}

/// A part of a note's file.
fn note_bytes(doc: DocRef, offset: u64, max_bytes: u32) -> Result<FileChunk, ConnectorError> {
    use std::io::{Read, Seek, SeekFrom};
    let path = format!("{}/{}", folder()?, doc.locator);
    let io = |e: std::io::Error| io_error(&doc.locator, &e);
    let mut file = std::fs::File::open(&path).map_err(io)?;
    let total_size = file.metadata().map_err(io)?.len();
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut data = Vec::new();
    file.take(u64::from(max_bytes))
        .read_to_end(&mut data)
        .map_err(io)?;
    Ok(FileChunk { data, total_size })
}
