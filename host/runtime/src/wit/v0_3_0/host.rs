//! The host interface of 0.3.0 (`quarry:connector/host`): 0.1.0's, and the bulk reads
//! (`read-folder`, `read-file-start`, in `sandbox/files/bulk.rs`), on the version-independent
//! [`HostState`].

use super::bindings::quarry::connector::{host, types};
use super::convert;
use crate::sandbox::files::bulk::{EntryKind, ReadError};
use crate::sandbox::instance::HostState;

impl types::Host for HostState {}

impl host::Host for HostState {
    host_calls_since_0_1_0!();

    fn read_folder(&mut self, path: String) -> Result<Vec<types::FolderEntry>, types::ReadError> {
        let entries = self.files.read_folder(&path).map_err(read_error)?;
        Ok(entries
            .into_iter()
            .map(|entry| types::FolderEntry {
                name: entry.name,
                kind: match entry.kind {
                    EntryKind::File => types::EntryKind::File,
                    EntryKind::Folder => types::EntryKind::Folder,
                    EntryKind::Symlink => types::EntryKind::Symlink,
                    EntryKind::Other => types::EntryKind::Other,
                },
                size_bytes: entry.size_bytes,
                modified_ns: entry.modified_ns,
            })
            .collect())
    }

    fn read_file_start(
        &mut self,
        path: String,
        max_bytes: u32,
    ) -> Result<(Vec<u8>, u64), types::ReadError> {
        self.files
            .read_file_start(&path, max_bytes)
            .map_err(read_error)
    }
}

fn read_error(error: ReadError) -> types::ReadError {
    match error {
        ReadError::NotFound => types::ReadError::NotFound,
        ReadError::Refused => types::ReadError::Refused,
        ReadError::WrongKind => types::ReadError::WrongKind,
        ReadError::TooLarge => types::ReadError::TooLarge,
        ReadError::Other => types::ReadError::Other,
    }
}
