//! The folders a `directory` setting usually names, found on this machine from its manifest's
//! `suggest` patterns (`~/.config/chromium/*/History`: a folder that holds that file), so that
//! `connector add` can offer them when the setting is not given.

use std::path::{Path, PathBuf};

/// Patterns a manifest may give per field, at most.
pub const MAX_PATTERNS: usize = 16;
/// Folders looked at for a `*`, at most, per pattern.
const MAX_LOOKED_AT: usize = 256;

/// Whether `pattern` is one: `~/` then names (`*` for any one), the last a file's name.
pub fn is_pattern(pattern: &str) -> bool {
    let Some(rest) = pattern.strip_prefix("~/") else {
        return false;
    };
    let names: Vec<&str> = rest.split('/').collect();
    names.len() >= 2
        && names
            .iter()
            .all(|n| !n.is_empty() && *n != "." && *n != "..")
        && names.last().is_some_and(|last| !last.contains('*'))
}

/// The folders under `home` that hold a file `patterns` describe, sorted, each once.
pub fn folders(home: &Path, patterns: &[String]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for pattern in patterns.iter().take(MAX_PATTERNS) {
        let Some(rest) = pattern.strip_prefix("~/") else {
            continue;
        };
        let names: Vec<&str> = rest.split('/').collect();
        let Some((file, folders)) = names.split_last() else {
            continue;
        };
        let mut at = vec![home.to_path_buf()];
        for name in folders {
            at = at
                .into_iter()
                .flat_map(|dir| matching(&dir, name))
                .take(MAX_LOOKED_AT)
                .collect();
        }
        found.extend(at.into_iter().filter(|dir| dir.join(file).is_file()));
    }
    found.sort();
    found.dedup();
    found
}

/// The folders in `dir` that `name` (a name, or `*`) names.
fn matching(dir: &Path, name: &str) -> Vec<PathBuf> {
    if name != "*" {
        let path = dir.join(name);
        return if path.is_dir() {
            vec![path]
        } else {
            Vec::new()
        };
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_holding_the_named_file_are_found_and_patterns_checked() {
        let home = tempfile::tempdir().expect("tempdir");
        for (dir, file) in [
            (".config/chromium/Default", "History"),
            (".config/chromium/Profile 1", "History"),
            (".config/chromium/Crash Reports", "settings.dat"),
            (".mozilla/firefox/abc.default-release", "places.sqlite"),
        ] {
            let dir = home.path().join(dir);
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(dir.join(file), b"").expect("write");
        }
        let patterns = [
            "~/.config/chromium/*/History".to_owned(),
            "~/.mozilla/firefox/*/places.sqlite".to_owned(),
            "~/.config/google-chrome/*/History".to_owned(),
        ];
        let found = folders(home.path(), &patterns);
        let rel: Vec<String> = found
            .iter()
            .map(|p| {
                p.strip_prefix(home.path())
                    .unwrap_or(p)
                    .display()
                    .to_string()
            })
            .collect();
        assert_eq!(
            rel,
            [
                ".config/chromium/Default",
                ".config/chromium/Profile 1",
                ".mozilla/firefox/abc.default-release"
            ]
        );
        assert!(is_pattern("~/.config/chromium/*/History"));
        for bad in ["/etc/*/passwd", "~/../x/y", "~/a/*", "~/History", "~//x"] {
            assert!(!is_pattern(bad), "{bad}");
        }
    }
}
