//! How a document looks in answers: the fields a search result and a document share.

use quarry_core::times::rfc3339;
use quarry_index::DocInfo;
use serde_json::{Map, Value, json};

/// A document's id and metadata, in the contract's order; `connector_name` (search results) goes
/// after `connector_id`.
pub(crate) fn doc_fields(info: &DocInfo, connector_name: Option<&str>) -> Map<String, Value> {
    let meta = &info.meta;
    let mut fields = Map::new();
    fields.insert("connector_id".into(), json!(info.connector.as_str()));
    if let Some(name) = connector_name {
        fields.insert("connector_name".into(), json!(name));
    }
    fields.insert("doc_id".into(), json!(info.doc_id.as_str()));
    fields.insert("title".into(), json!(meta.title));
    fields.insert("path".into(), json!(meta.path));
    fields.insert("url".into(), json!(meta.url));
    fields.insert("mime_type".into(), json!(meta.mime_type));
    fields.insert("size_bytes".into(), json!(meta.size_bytes));
    fields.insert("update_time".into(), json!(rfc3339(meta.update_time_ms)));
    fields
}
