//! What the versions' `source` calls share (0.1.0's, and those of 0.2.0 and 0.3.0, whose types
//! are the same): a document reference for the plugin, and an answer checked and converted.

use quarry_core::DocId;

use super::bindings::quarry::connector::types as wit;
use super::convert;
use crate::wit::source::{Answer, CallError};

/// The WIT reference of a document.
pub(super) fn doc_ref((id, locator): (&DocId, &str)) -> wit::DocRef {
    wit::DocRef {
        id: id.as_str().to_owned(),
        locator: locator.to_owned(),
    }
}

/// A call's result with the plugin's answer checked and converted by `check`, or its own error.
pub(super) fn answer<W, T>(
    result: wasmtime::Result<Result<W, wit::ConnectorError>>,
    check: impl FnOnce(W) -> Result<T, String>,
) -> Answer<T> {
    Ok(checked(result?, check))
}

/// The plugin's answer checked and converted by `check`, or its own error.
pub(super) fn checked<W, T>(
    result: Result<W, wit::ConnectorError>,
    check: impl FnOnce(W) -> Result<T, String>,
) -> Result<T, CallError> {
    match result {
        Ok(value) => check(value).map_err(CallError::Output),
        Err(error) => Err(CallError::Guest(convert::guest_error(error))),
    }
}
