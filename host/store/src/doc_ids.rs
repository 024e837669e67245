//! Lists of document ids in SQL statements.

use quarry_core::DocId;
use sqlx::{QueryBuilder, Sqlite};

/// Appends ` AND doc_id IN (?, ...)` with `ids` bound.
pub(crate) fn push_ids(query: &mut QueryBuilder<Sqlite>, ids: &[DocId]) {
    query.push(" AND doc_id IN (");
    let mut list = query.separated(", ");
    for id in ids {
        list.push_bind(id.as_str());
    }
    query.push(")");
}
