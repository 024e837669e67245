//! The sandbox's files through WASI, stricter than WASI's own: wasmtime-wasi's `open-at` and
//! `stat-at` are replaced in the linker by versions that pass the guarded open
//! (`guard.rs`), so a plugin opens only regular files and folders, never blocks on one, and
//! never reaches one of Quarry's own. The other functions of `wasi:filesystem` act on
//! descriptors that passed through them. `read` is replaced too, for speed alone (`read.rs`).

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorFlags, ErrorCode, OpenFlags, PathFlags,
};

use super::descriptors::open_descriptor;
use super::read::read_at;
use super::stat::stat_at;
use crate::sandbox::instance::HostState;

/// The `wasi:filesystem/types` instance whose functions are replaced (any 0.2.x a guest imports
/// resolves to it).
const TYPES: &str = "wasi:filesystem/types@0.2.12";

/// Replaces `open-at`, `stat-at` and `read` of `wasi:filesystem/types` in `linker` (which must
/// already hold wasmtime-wasi's).
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut types = linker.instance(TYPES)?;
    types.func_wrap(
        "[method]descriptor.open-at",
        |mut store: StoreContextMut<'_, HostState>,
         (fd, path_flags, path, open_flags, flags): (
            Resource<Descriptor>,
            PathFlags,
            String,
            OpenFlags,
            DescriptorFlags,
        )| {
            let mut view = store.data_mut().files();
            let opened =
                match open_descriptor(&mut view, &fd, path_flags, &path, open_flags, flags)? {
                    Ok((descriptor, size)) => {
                        let opened = view.wasi.table.push(descriptor)?;
                        view.guard.opened.record(&opened, size);
                        Ok(opened)
                    }
                    Err(denied) => Err(denied.code()),
                };
            Ok((opened,))
        },
    )?;
    types.func_wrap(
        "[method]descriptor.stat-at",
        |mut store: StoreContextMut<'_, HostState>,
         (fd, path_flags, path): (Resource<Descriptor>, PathFlags, String)| {
            Ok((stat_at(
                &mut store.data_mut().files(),
                fd,
                path_flags,
                path,
            )?,))
        },
    )?;
    types.func_wrap(
        "[method]descriptor.read",
        |mut store: StoreContextMut<'_, HostState>,
         (fd, len, offset): (Resource<Descriptor>, u64, u64)| {
            let view = store.data_mut().files();
            let read = match view.wasi.table.get(&fd)? {
                Descriptor::File(file) => {
                    read_at(&file.file, len, offset, view.guard.opened.size_of(&fd))
                }
                Descriptor::Dir(_) => Err(ErrorCode::BadDescriptor),
            };
            Ok((read,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
