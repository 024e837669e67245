//! The short text an agent reads beside each tool's structured answer: what was found, where,
//! and the exact arguments of the next call.

use std::fmt::Write;

use crate::views::{ConnectorList, DocumentView, HitView, SearchAnswer};

/// A search's results: one block per result, with the ids and page to read it by.
pub(crate) fn search(answer: &SearchAnswer, offset: u64) -> String {
    let mut text = String::new();
    for warning in &answer.warnings {
        let _ = writeln!(text, "Note: {warning}");
    }
    if answer.results.is_empty() {
        let _ = writeln!(
            text,
            "No results ({} search). Try other words, fewer filters, or list_connectors to see what is shared.",
            answer.mode
        );
        return text;
    }
    let shown = answer.results.len() as u64;
    let _ = writeln!(
        text,
        "Results {}-{} of {} ({} search):",
        offset + 1,
        offset + shown,
        answer.total,
        answer.mode
    );
    for (n, hit) in answer.results.iter().enumerate() {
        let _ = writeln!(text);
        result(&mut text, offset + n as u64 + 1, hit);
    }
    if offset + shown < answer.total {
        let _ = writeln!(
            text,
            "\nMore: call search again with offset {}.",
            offset + shown
        );
    }
    text
}

fn result(text: &mut String, n: u64, hit: &HitView) {
    let doc = &hit.doc;
    let _ = writeln!(text, "{n}. {}", doc.title);
    let mut place = Vec::new();
    if let Some(path) = &doc.path {
        place.push(path.clone());
    }
    if let Some(name) = &doc.connector_name {
        place.push(format!("in {name}"));
    }
    place.push(format!("updated {}", doc.update_time));
    if let Some(page) = hit.page {
        place.push(format!("page {page}"));
    }
    let _ = writeln!(text, "   {}", place.join(", "));
    if !hit.snippet.is_empty() {
        let _ = writeln!(text, "   \"{}\"", hit.snippet);
    }
    let pages = hit
        .page
        .map(|p| format!(", page_start {p}, page_end {p}"))
        .unwrap_or_default();
    let _ = writeln!(
        text,
        "   read_document: connector_id {}, doc_id {}{pages}",
        doc.connector_id, doc.doc_id
    );
    let _ = writeln!(text, "   cite: {}", hit.link);
}

/// A document's text, with where it lies and how to read on. `file_url` links the original.
pub(crate) fn document(doc: &DocumentView, file_url: Option<&str>) -> String {
    let mut text = String::new();
    let d = &doc.doc;
    let _ = writeln!(text, "{}", d.title);
    if let Some(path) = &d.path {
        let _ = writeln!(text, "Path: {path}");
    }
    let _ = writeln!(
        text,
        "Pages {}-{} of {}; {} characters{}; {}, {} bytes, updated {}",
        doc.page_start,
        doc.page_end,
        doc.page_count,
        doc.total_chars,
        if doc.truncated {
            ", cut by max_chars"
        } else {
            ""
        },
        d.mime_type,
        d.size_bytes,
        d.update_time
    );
    match file_url {
        _ if !doc.file.served => {
            let _ = writeln!(
                text,
                "Original file: not served ({}).",
                doc.file.reason.unwrap_or("not checked for credentials")
            );
        }
        Some(url) => {
            let _ = writeln!(
                text,
                "Original file: GET {url} with the same Authorization header."
            );
        }
        None => {
            let _ = writeln!(
                text,
                "Original file: served by Quarry's HTTP API while its server runs."
            );
        }
    }
    let _ = writeln!(text, "\n{}", doc.content);
    if doc.page_end < doc.page_count {
        let _ = writeln!(
            text,
            "\nMore: read_document with page_start {}.",
            doc.page_end + 1
        );
    }
    text
}

/// The shared connectors, one line each.
pub(crate) fn connectors(list: &ConnectorList) -> String {
    if list.connectors.is_empty() {
        return "No connectors are shared with this integration; the user can share some in \
                Quarry's settings."
            .to_owned();
    }
    let mut text = String::from("Connectors (search one with connector_names_filter):\n");
    for c in &list.connectors {
        let synced = c.last_sync_time.as_deref().unwrap_or("never");
        let _ = writeln!(
            text,
            "- {} (id {}, {}): {}, {} documents, last sync {synced}",
            c.name, c.connector_id, c.plugin, c.status, c.doc_count
        );
    }
    text
}
