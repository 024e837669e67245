//! Lists of document ids in SQL statements.

use quarry_core::DocId;

use crate::db::Sql;

/// Appends ` AND doc_id IN (?, ...)` with `ids` bound.
pub(crate) fn push_ids(query: &mut Sql, ids: &[DocId]) {
    query.push(" AND doc_id IN ");
    query.push_tuple(ids.iter().map(|id| id.as_str().into()).collect());
}
