//! The team's index log as the store and the index both see it: a change a host appends
//! ([`LogChange`]) and a document's latest change read back ([`LogEntry`]). What a record holds
//! is the index's business; here it is bytes.

use crate::{ConnectorId, DocId};

/// One change to the team's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogChange {
    /// A document written (its record, as the index encodes it), over any version; with `over` a
    /// position, only over the version logged at that position (vectors computed from it).
    Put {
        /// Its connector.
        connector: ConnectorId,
        /// Its id.
        doc: DocId,
        /// Its record.
        record: Vec<u8>,
        /// The position of the version it must replace, when it must replace that one only.
        over: Option<u64>,
    },
    /// A document removed.
    Delete {
        /// Its connector.
        connector: ConnectorId,
        /// Its id.
        doc: DocId,
    },
    /// Every document of a connector removed.
    Purge {
        /// The connector.
        connector: ConnectorId,
    },
}

/// A document's latest change, read back from the team's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// Its connector.
    pub connector: ConnectorId,
    /// Its id.
    pub doc: DocId,
    /// The change's position: the document's revision in every host's index.
    pub position: u64,
    /// Its record; `None` once it was removed.
    pub record: Option<Vec<u8>>,
}
