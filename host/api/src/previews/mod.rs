//! Page previews (docs/api.md, "Page previews"): one page of a document as a PNG, drawn by
//! Quarry's page renderer in a sandbox of its own from the file its connector serves (or, for a
//! document that is neither PDF nor image, from its page of extracted text), for
//! `GET /api/v1/connectors/{connector_id}/docs/{doc_id}/pages/{page}/preview` and the search
//! page's twin under `/admin/v1`, with the boxes of a query's words on it. The host parses
//! neither PDF nor image: it hands the renderer the file's bytes, bounded, and serves the PNG it
//! returns, kept per document version in a cache of bounded size.

mod answer;
mod cache;
mod draw;
mod drawn;
pub(crate) mod keep;
mod marks;
mod scan;

pub(crate) use answer::respond;
pub(crate) use draw::draw;
pub(crate) use marks::highlights;
