//! The ids in a document route's path and their check in the validation step.

use std::collections::BTreeMap;

use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use quarry_core::{ConnectorId, DocId};

use crate::error::ApiError;
use crate::extractors::input::{self, Problems};

/// What is wrong with an id that does not parse.
pub(crate) const ID_ISSUE: &str = "must be 1 to 128 characters from A-Z, a-z, 0-9, '_' and '-'";

/// The ids in a document route's path, checked in the validation step.
pub(crate) struct PathIds {
    /// The connector id as sent (empty when the path could not be decoded).
    pub connector: Option<String>,
    doc: Option<String>,
}

impl From<Result<Path<(String, String)>, PathRejection>> for PathIds {
    fn from(path: Result<Path<(String, String)>, PathRejection>) -> PathIds {
        match path {
            Ok(Path((connector, doc))) => PathIds {
                connector: Some(connector),
                doc: Some(doc),
            },
            Err(_) => PathIds {
                connector: Some(String::new()),
                doc: None,
            },
        }
    }
}

impl PathIds {
    /// The validation step of a document route: the query string (only `allowed` parameters),
    /// `extra` checks on them, and both ids. Every problem is reported together.
    pub(crate) fn check<T>(
        &self,
        query: Option<&str>,
        allowed: &[&str],
        extra: impl FnOnce(&BTreeMap<String, String>, &mut Problems) -> T,
    ) -> Result<(ConnectorId, DocId, T), ApiError> {
        let params = input::query_params(query, allowed)?;
        let mut problems = Problems::default();
        let checked = extra(&params, &mut problems);
        let issue = ID_ISSUE;
        let connector = match self.connector.as_deref().map(ConnectorId::parse) {
            Some(Ok(id)) => Some(id),
            _ => {
                problems.add(
                    "connector_id",
                    issue,
                    format!("connector_id in the path {issue}"),
                );
                None
            }
        };
        let doc = match self.doc.as_deref().map(DocId::parse) {
            Some(Ok(id)) => Some(id),
            _ => {
                problems.add("doc_id", issue, format!("doc_id in the path {issue}"));
                None
            }
        };
        problems.finish()?;
        match (connector, doc) {
            (Some(connector), Some(doc)) => Ok((connector, doc, checked)),
            _ => Err(ApiError::internal(
                "path ids",
                &"checked without problems, yet missing",
            )),
        }
    }
}
