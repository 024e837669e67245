//! A page drawn: what the cache keeps and the answer sends.

/// A page drawn: the PNG and what the renderer said of it.
#[derive(Debug)]
pub(crate) struct Drawn {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub page_count: u32,
}
