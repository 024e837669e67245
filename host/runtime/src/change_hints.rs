//! Change hints: the paths a file watcher saw change, turned into paths the sandbox knows. Only
//! a path inside one of the session's granted folders, made of plain names (no `..`, no `.`),
//! valid UTF-8, and outside Quarry's own folders becomes a hint; every other path is dropped, so
//! a plugin never learns of a path it was not granted.

use std::path::{Component, Path, PathBuf};

use crate::policy::protected::ProtectedPaths;

/// Hints passed to one `list-changes` call at most; more are passed in several calls.
pub const MAX_HINTS_PER_CALL: usize = 256;

/// The sandbox paths of `changed` (host paths) under `mounts` ((host folder, guest path)
/// pairs); paths that are not inside a granted folder, or are inside a protected one, are left
/// out. Each path appears once.
pub(crate) fn to_sandbox(
    mounts: &[(PathBuf, String)],
    protected: &ProtectedPaths,
    changed: &[PathBuf],
) -> Vec<String> {
    let mut hints: Vec<String> = changed
        .iter()
        .filter(|path| !protected.covers(path))
        .filter_map(|path| {
            mounts
                .iter()
                .find_map(|(host, guest)| inside(host, guest, path))
        })
        .collect();
    hints.sort_unstable();
    hints.dedup();
    hints
}

/// `path` as the sandbox sees it when it lies inside the mount of `host` at `guest`.
fn inside(host: &Path, guest: &str, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(host).ok()?;
    let mut out = guest.trim_end_matches('/').to_owned();
    for component in relative.components() {
        match component {
            Component::Normal(name) => {
                out.push('/');
                out.push_str(name.to_str()?);
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mounts() -> Vec<(PathBuf, String)> {
        vec![
            (PathBuf::from("/home/u/notes"), "/folder".to_owned()),
            (PathBuf::from("/home/u/mail"), "/mail".to_owned()),
        ]
    }

    #[test]
    fn paths_inside_granted_folders_become_sandbox_paths() {
        let hints = to_sandbox(
            &mounts(),
            &ProtectedPaths::default(),
            &[
                PathBuf::from("/home/u/notes/a/b.md"),
                PathBuf::from("/home/u/mail/inbox"),
                PathBuf::from("/home/u/notes"),
                PathBuf::from("/home/u/notes/a/b.md"),
            ],
        );
        assert_eq!(hints, ["/folder", "/folder/a/b.md", "/mail/inbox"]);
    }

    #[test]
    fn paths_outside_the_grant_or_escaping_it_are_never_passed() {
        let protected = ProtectedPaths::new([PathBuf::from("/home/u/notes/.quarry")]);
        let hints = to_sandbox(
            &mounts(),
            &protected,
            &[
                PathBuf::from("/home/u/secret.txt"),
                PathBuf::from("/home/u/notes-other/x.md"),
                PathBuf::from("/home/u/notes/../secret.txt"),
                PathBuf::from("/home/u/notes/.quarry/quarry.db"),
                PathBuf::from("relative/notes/x.md"),
                #[cfg(unix)]
                {
                    use std::os::unix::ffi::OsStrExt;
                    PathBuf::from(std::ffi::OsStr::from_bytes(b"/home/u/notes/\xff.md"))
                },
            ],
        );
        assert!(hints.is_empty(), "{hints:?}");
    }
}
