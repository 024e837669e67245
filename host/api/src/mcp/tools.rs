//! The tool catalogue: each tool's name, a description written for an agent (when to use it,
//! what it returns, what to do next) and its JSON schemas. The schemas are the REST contract's
//! own, taken from `openapi.json` with its references inlined, so a tool accepts exactly what its
//! route accepts and answers in its route's shape.

use std::sync::{Arc, LazyLock};

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::routes::openapi::DOCUMENT;

/// `search`: `POST /api/v1/search`.
pub(crate) const SEARCH: &str = "search";
/// `read_document`: `GET /api/v1/connectors/{connector_id}/docs/{doc_id}`.
pub(crate) const READ_DOCUMENT: &str = "read_document";
/// `list_connectors`: `GET /api/v1/connectors`.
pub(crate) const LIST_CONNECTORS: &str = "list_connectors";

const SEARCH_ABOUT: &str = "Search the user's own documents (the folders and other sources they \
connected to Quarry) by words and by meaning. Use it first for any question about the user's \
files, notes or data. Returns up to `limit` results (default 10), best first; each has a title, \
path, connector, update time, a snippet with the matched words, the ids to read it and `page`, \
the page of a paged document (PDF) the snippet is on, and `link`, the address where the \
user sees that page with the words highlighted: when you quote or rely on a result, cite its \
title with its `link` so the user can check it (the link opens only for them). Next: read the top one to three results \
with read_document (for long documents only the page range around `page`); get more results \
with `offset`. Turn the request into filters: connector_names_filter (names from \
list_connectors), update_time_filter {from, to} for 'last week' or 'in 2025', \
file_extensions_filter [\"pdf\"] for a kind of file, sort_by \"update_time\" for the latest. \
Query syntax: words (in Chinese, Japanese or Korean, any characters of a sentence), \
\"exact phrases\", -excluded words. semantic_search (default true) also \
finds passages that match by meaning without the same words.";

const READ_DOCUMENT_ABOUT: &str = "Read the extracted text of one document a search found: pass \
its connector_id and doc_id. For long documents read only what you need: page_start and \
page_end (1-based, inclusive; a search result's `page` says where its snippet is) and \
max_chars to cap the text. Returns `content` with page_count, the range returned, total_chars \
and truncated (true when max_chars cut it; read on with the next pages). The original file \
(PDF, image, ...) is not put in the answer: the answer links it, a URL to GET with the same \
API key.";

const LIST_CONNECTORS_ABOUT: &str = "List the data sources the user shared with you: each \
connector's name, id, plugin, status (idle, syncing, error, disabled), document count and \
last sync. Call it first to learn what can be searched and the names search's \
connector_names_filter takes. A connector that is syncing may not have all its documents yet.";

/// Every tool, as `tools/list` gives them.
pub(crate) static TOOLS: LazyLock<Vec<Tool>> = LazyLock::new(|| {
    vec![
        tool(
            SEARCH,
            "Search the user's documents",
            SEARCH_ABOUT,
            inlined(&DOCUMENT["components"]["schemas"]["SearchRequest"]),
            "SearchResponse",
        ),
        tool(
            READ_DOCUMENT,
            "Read a document, whole or by pages",
            READ_DOCUMENT_ABOUT,
            read_document_input(),
            "Document",
        ),
        tool(
            LIST_CONNECTORS,
            "List the shared data sources",
            LIST_CONNECTORS_ABOUT,
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            "ConnectorList",
        ),
    ]
});

/// The tool named `name`.
pub(crate) fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|tool| tool.name == name)
}

fn tool(name: &'static str, title: &str, about: &'static str, input: Value, output: &str) -> Tool {
    let output = inlined(&DOCUMENT["components"]["schemas"][output]);
    Tool::new(name, about, Arc::new(object(input)))
        .with_title(title)
        .with_raw_output_schema(Arc::new(object(output)))
        .with_annotations(ToolAnnotations::from_raw(
            Some(title.to_owned()),
            Some(true),
            Some(false),
            Some(true),
            Some(false),
        ))
}

/// `read_document`'s arguments: the route's path ids and query parameters, as one object.
fn read_document_input() -> Value {
    let route = &DOCUMENT["paths"]["/api/v1/connectors/{connector_id}/docs/{doc_id}"]["get"];
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    let path_ids =
        DOCUMENT["paths"]["/api/v1/connectors/{connector_id}/docs/{doc_id}"]["parameters"]
            .as_array()
            .into_iter()
            .flatten();
    let query = route["parameters"].as_array().into_iter().flatten();
    for parameter in path_ids.chain(query).map(inlined) {
        let Some(name) = parameter["name"].as_str() else {
            continue;
        };
        let mut schema = parameter["schema"].clone();
        if let Some(about) = parameter.get("description") {
            schema["description"] = about.clone();
        }
        if parameter["required"] == true {
            required.push(name.to_owned());
        }
        properties.insert(name.to_owned(), schema);
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// `value` with each `{"$ref": "#/components/..."}` replaced by what it names.
fn inlined(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            if let Some(target) = map.get("$ref").and_then(Value::as_str) {
                let pointer = target.trim_start_matches('#');
                return DOCUMENT
                    .pointer(pointer)
                    .map(inlined)
                    .unwrap_or(Value::Null);
            }
            Value::Object(map.iter().map(|(k, v)| (k.clone(), inlined(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(inlined).collect()),
        other => other.clone(),
    }
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_whole_objects_without_references() {
        assert_eq!(TOOLS.len(), 3);
        for tool in TOOLS.iter() {
            let input = Value::Object((*tool.input_schema).clone());
            let output = tool.output_schema.as_deref().cloned().map(Value::Object);
            for schema in [Some(input), output].into_iter().flatten() {
                assert_eq!(schema["type"], "object", "{}", tool.name);
                assert!(
                    !schema.to_string().contains("$ref"),
                    "{}: {schema}",
                    tool.name
                );
            }
        }
        let read = find(READ_DOCUMENT).expect("read_document");
        let required = read.input_schema["required"].clone();
        assert_eq!(required, json!(["connector_id", "doc_id"]));
        assert_eq!(read.input_schema["properties"]["page_start"]["minimum"], 1);
        let search = find(SEARCH).expect("search");
        assert_eq!(search.input_schema["properties"]["limit"]["maximum"], 100);
    }
}
