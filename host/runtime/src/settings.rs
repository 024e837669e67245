//! A connector's settings and the user's grant, checked against the manifest, and turned into what
//! the sandbox gets: the config the plugin reads and the folders mounted read-only.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use crate::manifest::{FieldKind, Manifest};

/// What the user allowed a connector to do. Anything not here is denied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grant {
    /// Folders the plugin may read, by the `directory` field that names them.
    pub directories: BTreeMap<String, PathBuf>,
}

impl Grant {
    /// A grant of folders kept as text: directory field -> host folder.
    pub fn from_dirs(dirs: &BTreeMap<String, String>) -> Grant {
        Grant {
            directories: dirs
                .iter()
                .map(|(field, folder)| (field.clone(), PathBuf::from(folder)))
                .collect(),
        }
    }

    /// The grant a user gives by approving every folder named in `values`' directory fields.
    pub fn for_directories(manifest: &Manifest, values: &BTreeMap<String, String>) -> Grant {
        let directories = manifest
            .config
            .iter()
            .filter(|f| f.kind == FieldKind::Directory)
            .filter_map(|f| {
                values
                    .get(&f.key)
                    .map(|v| (f.key.clone(), PathBuf::from(v)))
            })
            .collect();
        Grant { directories }
    }
}

/// What a sandbox is set up with: the config the plugin sees, and the folders it gets.
#[derive(Clone)]
pub(crate) struct SandboxSetup {
    pub(crate) config: Vec<(String, String)>,
    /// (host folder, guest path) pairs, mounted read-only.
    pub(crate) mounts: Vec<(PathBuf, String)>,
}

impl fmt::Debug for SandboxSetup {
    // Config values can be secrets: only the keys are shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SandboxSetup")
            .field(
                "config_keys",
                &self.config.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("mounts", &self.mounts)
            .finish()
    }
}

/// Checks `values` and `grant` against the manifest. The error names the field and the fix.
pub(crate) fn resolve(
    manifest: &Manifest,
    values: &BTreeMap<String, String>,
    grant: &Grant,
) -> Result<SandboxSetup, String> {
    if let Some(unknown) = values.keys().find(|k| manifest.field(k).is_none()) {
        let known: Vec<&str> = manifest.config.iter().map(|f| f.key.as_str()).collect();
        return Err(format!(
            "unknown setting `{unknown}`; this plugin's settings are: {}",
            known.join(", ")
        ));
    }
    if let Some(key) = grant.directories.keys().find(|k| {
        manifest
            .field(k)
            .is_none_or(|f| f.kind != FieldKind::Directory)
    }) {
        return Err(format!(
            "the grant names `{key}`, which is not a directory setting of this plugin"
        ));
    }
    let mut config = Vec::new();
    let mut mounts = Vec::new();
    for field in &manifest.config {
        let value = values.get(&field.key).or(field.default.as_ref());
        let Some(value) = value else {
            if field.required {
                return Err(format!("`{}` is required", field.key));
            }
            continue;
        };
        field
            .check_value(value)
            .map_err(|e| format!("`{}` {e}", field.key))?;
        if field.kind == FieldKind::Directory {
            let host = PathBuf::from(value);
            if grant.directories.get(&field.key) != Some(&host) {
                return Err(format!(
                    "`{}`: reading {} was not granted",
                    field.key,
                    host.display()
                ));
            }
            if !host.is_dir() {
                return Err(format!(
                    "`{}`: {} is not a folder that exists",
                    field.key,
                    host.display()
                ));
            }
            let guest = format!("/{}", field.key);
            config.push((field.key.clone(), guest.clone()));
            mounts.push((host, guest));
        } else {
            config.push((field.key.clone(), value.clone()));
        }
    }
    Ok(SandboxSetup { config, mounts })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest::parse(
            r#"
            id = "t"
            name = "T"
            version = "1.0.0"
            wit = "0.1.0"
            component = "t.wasm"
            [[config]]
            key = "folder"
            type = "directory"
            required = true
            [[config]]
            key = "limit"
            type = "number"
            default = "5"
            [[config]]
            key = "token"
            type = "password"
        "#,
        )
        .expect("test manifest")
    }

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn mounts_granted_folders_and_fills_defaults() -> Result<(), String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = dir.path().to_string_lossy().into_owned();
        let m = manifest();
        let v = values(&[("folder", &path), ("token", "s3cret")]);
        let setup = resolve(&m, &v, &Grant::for_directories(&m, &v))?;
        assert_eq!(
            setup.config,
            vec![
                ("folder".to_owned(), "/folder".to_owned()),
                ("limit".to_owned(), "5".to_owned()),
                ("token".to_owned(), "s3cret".to_owned()),
            ]
        );
        assert_eq!(
            setup.mounts,
            vec![(dir.path().to_owned(), "/folder".to_owned())]
        );
        assert!(!format!("{setup:?}").contains("s3cret"));
        Ok(())
    }

    #[test]
    fn refuses_what_was_not_granted_or_declared() {
        let m = manifest();
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().to_string_lossy().into_owned();
        let cases = [
            (
                values(&[("folder", &path)]),
                Grant::default(),
                "was not granted",
            ),
            (values(&[]), Grant::default(), "`folder` is required"),
            (
                values(&[("folder", &path), ("colour", "red")]),
                Grant::default(),
                "unknown setting `colour`",
            ),
            (
                values(&[("folder", "relative/path")]),
                Grant::default(),
                "absolute path",
            ),
        ];
        for (v, grant, expected) in cases {
            let err = resolve(&m, &v, &grant).expect_err(expected);
            assert!(err.contains(expected), "{err} should mention {expected}");
        }
        let v = values(&[("folder", &path), ("limit", "many")]);
        let err = resolve(&m, &v, &Grant::for_directories(&m, &v)).expect_err("bad number");
        assert!(err.contains("`limit` must be a whole number"), "{err}");
    }
}
