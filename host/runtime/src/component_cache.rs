//! The on-disk cache of compiled components. What it holds is loaded as native code, so it lives
//! in a folder of this user's that no one else may write to (checked when the runtime starts),
//! and each file is opened without following links and checked before it is loaded.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use quarry_core::trust::{owned_and_guarded, owner_is_me, write_new_private};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::error::{RuntimeError, RuntimeErrorKind};

/// A private folder of compiled components, one file per component and engine build.
pub(crate) struct ComponentCache {
    dir: PathBuf,
}

impl ComponentCache {
    /// The cache in `dir`, created (readable by this user only) if needed. A folder of this
    /// user's that others may write to (as an older Quarry left it under a lax umask) is made
    /// private; one that belongs to someone else is refused.
    pub(crate) fn open(dir: &Path) -> Result<ComponentCache, RuntimeError> {
        let io = |source| {
            RuntimeError::from(RuntimeErrorKind::Io {
                path: dir.to_owned(),
                source,
            })
        };
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io)?;
        let meta = fs::symlink_metadata(dir).map_err(io)?;
        if meta.is_dir() && owner_is_me(&meta) && meta.mode() & 0o022 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(meta.mode() & 0o755))
                .map_err(io)?;
            tracing::warn!(path = %dir.display(), "the component cache was writable by others; it no longer is");
        }
        let meta = fs::symlink_metadata(dir).map_err(io)?;
        let trusted = if meta.is_dir() {
            owned_and_guarded(dir, &meta)
        } else {
            Err(format!("{} is not a folder", dir.display()))
        };
        trusted.map_err(|message| {
            RuntimeError::of(
                "(runtime)",
                RuntimeErrorKind::Component {
                    message: format!("the component cache cannot be trusted: {message}"),
                },
            )
        })?;
        prune(dir, SystemTime::now(), MAX_BYTES);
        Ok(ComponentCache {
            dir: dir.to_owned(),
        })
    }

    /// The compiled component cached under `key`, if there is a usable one. A file that is a
    /// link, not this user's, or writable by others is not loaded. The file is mapped, not
    /// copied: its code is the kernel's to page in and drop, not memory of the process's own.
    pub(crate) fn load(&self, engine: &Engine, key: &str) -> Option<Component> {
        let path = self.path(key);
        let checked = match checked_file(&path) {
            Ok(file) => {
                let file = file?;
                // Used now: kept by the pruning of files unused for a month.
                let _ = file.set_modified(SystemTime::now());
                file.metadata().ok()?
            }
            Err(why) => {
                tracing::warn!(path = %path.display(), "not loading a cached component: {why}");
                return None;
            }
        };
        let loaded = map_file(engine, &path);
        // The file mapped is the one checked (files here are only ever replaced, by rename).
        let mapped = fs::symlink_metadata(&path).ok()?;
        if (mapped.dev(), mapped.ino()) != (checked.dev(), checked.ino()) {
            tracing::warn!(path = %path.display(), "recompiling: the cached component was replaced while loaded");
            return None;
        }
        match loaded {
            Ok(component) => Some(component),
            Err(e) => {
                tracing::warn!(path = %path.display(), "recompiling: cached component unusable: {e:#}");
                None
            }
        }
    }

    /// Caches `compiled` under `key`: written to a new private file, then renamed into place.
    pub(crate) fn store(&self, key: &str, compiled: &[u8]) -> Result<(), RuntimeError> {
        let path = self.path(key);
        let io = |source| {
            RuntimeError::from(RuntimeErrorKind::Io {
                path: path.clone(),
                source,
            })
        };
        // Unique per process and write, so concurrent writers never share a temporary file.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let n = WRITES.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_extension(format!("tmp-{}-{n}", std::process::id()));
        let written = write_new_private(&tmp, compiled).and_then(|()| fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(io(e));
        }
        Ok(())
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.cwasm"))
    }
}

/// A cached file unused this long is removed when a runtime opens the cache: compilations of
/// plugins removed or upgraded, and of older Quarrys (each wasmtime build has its own files).
const UNUSED_FOR: Duration = Duration::from_secs(30 * 86_400);

/// The most the compiled files may take together: past it, the least recently used go first
/// (a plugin rebuilt often, or many upgrades within a month, never fill the disk).
const MAX_BYTES: u64 = 2 << 30;

/// A temporary file this old is one a crashed write left.
const STALE_WRITE: Duration = Duration::from_secs(86_400);

/// Entries looked at in one pruning, at most.
const PRUNE_AT_MOST: usize = 10_000;

/// A compiled file in the cache: its path, size and when it was last used.
struct Cached {
    path: PathBuf,
    bytes: u64,
    used: SystemTime,
}

/// Removes from the cache folder `dir`, as of `now`, the temporary files of writes that never
/// finished, the compiled files unused for [`UNUSED_FOR`], and then the least recently used
/// until the rest take at most `max_bytes`. Only regular files named as the cache names them
/// are touched. A file removed while another process has it mapped stays readable to that
/// process; the next load compiles it again.
fn prune(dir: &Path, now: SystemTime, max_bytes: u64) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut kept: Vec<Cached> = Vec::new();
    let (mut removed, mut unused) = (0u64, 0u64);
    for entry in entries.flatten().take(PRUNE_AT_MOST) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let compiled = name.ends_with(".cwasm");
        if !compiled && !name.contains(".tmp-") {
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let used = meta.modified().unwrap_or(now);
        let age = now.duration_since(used).unwrap_or_default();
        let limit = if compiled { UNUSED_FOR } else { STALE_WRITE };
        if age > limit {
            if fs::remove_file(entry.path()).is_ok() {
                unused += meta.len();
            }
        } else if compiled {
            kept.push(Cached {
                path: entry.path(),
                bytes: meta.len(),
                used,
            });
        }
    }
    let mut total: u64 = kept.iter().map(|c| c.bytes).sum();
    kept.sort_by_key(|c| c.used);
    for oldest in &kept {
        if total <= max_bytes {
            break;
        }
        if fs::remove_file(&oldest.path).is_ok() {
            removed += oldest.bytes;
        }
        total = total.saturating_sub(oldest.bytes);
    }
    if unused + removed > 0 {
        tracing::info!(
            dir = %dir.display(),
            "removed {} MiB of compiled components unused for {} days and {} MiB of the least recently used, to keep under {} MiB",
            unused >> 20,
            UNUSED_FOR.as_secs() / 86_400,
            removed >> 20,
            max_bytes >> 20
        );
    }
}

/// The cached file at `path`, opened without following a link and checked: `Ok(None)` when there
/// is none, an error saying why one is not used.
fn checked_file(path: &Path) -> Result<Option<fs::File>, String> {
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    owned_and_guarded(path, &meta)?;
    Ok(Some(file))
}

/// Loads a compiled component: bytes `Engine::precompile_component` made in this process, or
/// read back from the cache by [`ComponentCache::load`].
#[allow(unsafe_code)]
pub(crate) fn deserialize(engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: the bytes were produced by `Engine::precompile_component` of an engine with the
    // same compatibility hash (part of the cache file's name): either just now, in this process,
    // or read from a regular file of this user's, writable by no one else, in a folder of this
    // user's that no one else may write to (checked by `open` and `load`). wasmtime additionally
    // checks the header.
    unsafe { Component::deserialize(engine, bytes) }
}

/// Maps the compiled component at `path`, checked by [`ComponentCache::load`].
#[allow(unsafe_code)]
fn map_file(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    // SAFETY: as for `deserialize`: the file was checked just before (a regular file of this
    // user's, writable by no one else, not a link, in a folder of this user's that no one else
    // may write to), and `load` makes sure the file mapped is the one checked. Cache files are
    // never written in place (a new file is renamed over the old), so the mapping never
    // changes under the component. wasmtime checks the header.
    unsafe { Component::deserialize_file(engine, path) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_files_unused_for_a_month_and_stale_writes_are_pruned() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        let now = SystemTime::now();
        let aged = |name: &str, days: u64| {
            let path = dir.join(name);
            let file = fs::File::create(&path).expect("create");
            file.set_modified(now - Duration::from_secs(days * 86_400))
                .expect("age");
            path
        };
        let old = aged("old.cwasm", 31);
        let recent = aged("recent.cwasm", 29);
        let crashed = aged("k.tmp-1-0", 2);
        let writing = aged("k.tmp-2-0", 0);
        let other = aged("notes.txt", 400);
        prune(dir, now, MAX_BYTES);
        assert!(!old.exists(), "unused for a month");
        assert!(recent.exists());
        assert!(!crashed.exists(), "a write that never finished");
        assert!(writing.exists(), "a write under way");
        assert!(other.exists(), "not the cache's");
    }

    #[test]
    fn past_the_size_bound_the_least_recently_used_compiled_files_go_first() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        let now = SystemTime::now();
        let file = |name: &str, bytes: usize, minutes: u64| {
            let path = dir.join(name);
            fs::write(&path, vec![0u8; bytes]).expect("write");
            fs::File::options()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_modified(now - Duration::from_secs(minutes * 60)))
                .expect("age");
            path
        };
        let oldest = file("a.cwasm", 400, 30);
        let older = file("b.cwasm", 400, 20);
        let newer = file("c.cwasm", 400, 10);
        let newest = file("d.cwasm", 400, 0);
        let other = file("notes.txt", 4000, 60);
        prune(dir, now, 1000);
        assert!(
            !oldest.exists() && !older.exists(),
            "the least recently used go"
        );
        assert!(
            newer.exists() && newest.exists(),
            "800 bytes fit under 1000"
        );
        assert!(other.exists(), "not the cache's");
        prune(dir, now, 1000);
        assert!(
            newer.exists() && newest.exists(),
            "under the bound nothing more goes"
        );
    }

    #[test]
    fn a_cache_others_may_write_to_is_made_private() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("components");
        let cache = ComponentCache::open(&dir).expect("a new private folder");
        assert_eq!(
            fs::metadata(&dir).expect("meta").permissions().mode() & 0o777,
            0o700
        );
        cache.store("k", b"compiled").expect("store");
        assert_eq!(
            fs::metadata(dir.join("k.cwasm"))
                .expect("meta")
                .permissions()
                .mode()
                & 0o777,
            0o600
        );
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).expect("chmod");
        ComponentCache::open(&dir).expect("made private");
        assert_eq!(
            fs::metadata(&dir).expect("meta").permissions().mode() & 0o777,
            0o755
        );
    }

    #[test]
    fn a_cached_file_that_is_a_link_is_not_loaded() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let cache = ComponentCache::open(&tmp.path().join("c")).expect("cache");
        let elsewhere = tmp.path().join("elsewhere.cwasm");
        fs::write(&elsewhere, b"not a component").expect("write");
        let link = tmp.path().join("c/k.cwasm");
        std::os::unix::fs::symlink(&elsewhere, &link).expect("link");
        let err = checked_file(&link).expect_err("a link is refused");
        assert!(err.contains("symbolic links"), "{err}");
        assert!(cache.load(&Engine::default(), "k").is_none());
        assert!(matches!(
            checked_file(&tmp.path().join("c/none.cwasm")),
            Ok(None)
        ));
        fs::write(tmp.path().join("c/open.cwasm"), b"x").expect("write");
        fs::set_permissions(
            tmp.path().join("c/open.cwasm"),
            fs::Permissions::from_mode(0o666),
        )
        .expect("chmod");
        let err = checked_file(&tmp.path().join("c/open.cwasm")).expect_err("writable by others");
        assert!(err.contains("other users"), "{err}");
    }
}
