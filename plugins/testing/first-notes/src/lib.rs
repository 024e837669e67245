//! A connector of `quarry:connector@0.1.0`, the first version, written against its bindings:
//! the `.txt` files directly inside the folder granted as `folder`, one document each.

/// Bindings generated from the released WIT of 0.1.0 (generated code carries no docs).
#[allow(missing_docs)]
mod bindings {
    wit_bindgen::generate!({
        path: "../../../wit/connector@0.1.0",
        world: "connector",
    });
}

include!("../../older-notes/src/notes.rs");

use bindings::exports::quarry::connector::source::Guest;

struct FirstNotes;

impl Guest for FirstNotes {
    fn list_docs(_checkpoint: Option<String>) -> Result<Batch, ConnectorError> {
        list_notes()
    }

    fn fetch_content(doc: DocRef) -> Result<Content, ConnectorError> {
        note_text(doc)
    }

    fn read_file(doc: DocRef, offset: u64, max_bytes: u32) -> Result<FileChunk, ConnectorError> {
        note_bytes(doc, offset, max_bytes)
    }

    fn validate_config(_config: Vec<(String, String)>) -> Result<(), ConnectorError> {
        Ok(())
    }
}

bindings::export!(FirstNotes with_types_in bindings);
