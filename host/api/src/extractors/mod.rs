//! What stands between a request and a handler: the frame every request passes (request id,
//! `Host` check, panic guard, error rendering), the access checks as an extractor (`guard`), the
//! bounds of integrations and of the service (`limits`), and request input read and checked with
//! every problem named (`input`).

pub(crate) mod frame;
pub(crate) mod guard;
pub(crate) mod input;
pub(crate) mod limits;
pub(crate) mod path_ids;
