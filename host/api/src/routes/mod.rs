//! The handlers of `/api/v1`: a search, a document's text, its original file, the connectors an
//! integration may see, the integration's guide, and the OpenAPI document. Each takes the
//! extractors' checked input and answers with a view.

pub(crate) mod agent_guide;
pub(crate) mod connectors;
pub(crate) mod docs;
pub(crate) mod file;
pub(crate) mod openapi;
pub(crate) mod preview;
pub(crate) mod search;
