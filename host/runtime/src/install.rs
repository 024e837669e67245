//! Installing a plugin from its two files (manifest and component), in two steps so that the
//! user sees what the plugin asks for before anything is installed:
//! [`Runtime::stage`] checks both (manifest keys and values, WIT world and version, compiles the
//! component) in a staging folder; [`StagedPlugin::install`] then moves that folder into place.

use std::path::{Component, Path, PathBuf};

use crate::error::RuntimeErrorKind;
use crate::manifest::{MANIFEST_FILE, Manifest};
use crate::{Limits, Plugin, Runtime, RuntimeError};

/// A checked plugin waiting in a staging folder for the user's grant.
pub struct StagedPlugin {
    /// The loaded plugin (its manifest says what it asks for).
    pub plugin: Plugin,
    dir: PathBuf,
}

impl Runtime {
    /// Writes `manifest` and `component` into a new folder under `staging` and loads them as a
    /// plugin would be loaded: the error says what is wrong with either.
    pub fn stage(
        &self,
        manifest: &str,
        component: &[u8],
        staging: &Path,
    ) -> Result<StagedPlugin, RuntimeError> {
        self.stage_with_files(manifest, component, &[], staging)
    }

    /// [`Runtime::stage`] with `files` beside the two (a packed plugin's README, licence and
    /// signature), each a plain file name other than theirs.
    pub fn stage_with_files(
        &self,
        manifest: &str,
        component: &[u8],
        files: &[(&str, &[u8])],
        staging: &Path,
    ) -> Result<StagedPlugin, RuntimeError> {
        let parsed = Manifest::parse(manifest).map_err(|message| {
            RuntimeError::from(RuntimeErrorKind::Manifest {
                path: PathBuf::from(MANIFEST_FILE),
                message,
            })
        })?;
        let file_name = Path::new(&parsed.component);
        if file_name.components().count() != 1
            || !matches!(file_name.components().next(), Some(Component::Normal(_)))
        {
            return Err(RuntimeErrorKind::Manifest {
                path: PathBuf::from(MANIFEST_FILE),
                message: format!(
                    "component {:?}: an uploaded plugin's component must be a plain file name",
                    parsed.component
                ),
            }
            .into());
        }
        let dir = staging.join(format!("{}-{}", parsed.id, unique_suffix()));
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| RuntimeError::from(RuntimeErrorKind::Io { path, source })
        };
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let staged = (|| {
            std::fs::write(dir.join(MANIFEST_FILE), manifest).map_err(io(&dir))?;
            std::fs::write(dir.join(file_name), component).map_err(io(&dir))?;
            for (name, bytes) in files {
                let plain = Path::new(name).components().count() == 1
                    && !name.starts_with('.')
                    && *name != MANIFEST_FILE
                    && Path::new(name) != file_name;
                if !plain {
                    return Err(RuntimeErrorKind::Manifest {
                        path: PathBuf::from(name),
                        message: "a plugin's other files must have plain names of their own".into(),
                    }
                    .into());
                }
                std::fs::write(dir.join(name), bytes).map_err(io(&dir))?;
            }
            self.load(&dir, Limits::default())
        })();
        match staged {
            Ok(plugin) => Ok(StagedPlugin { plugin, dir }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }
}

impl StagedPlugin {
    /// Moves the staged folder to `plugins/<id>`, replacing an installed version, and loads it
    /// from there. The plugin's compiled form is cached, so this does not compile again.
    pub fn install(self, runtime: &Runtime, plugins: &Path) -> Result<Plugin, RuntimeError> {
        let id = self.plugin.id().to_owned();
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| RuntimeError::from(RuntimeErrorKind::Io { path, source })
        };
        std::fs::create_dir_all(plugins).map_err(io(plugins))?;
        let target = plugins.join(&id);
        if target.exists() {
            let old = plugins.join(format!(".{id}-replaced-{}", unique_suffix()));
            std::fs::rename(&target, &old).map_err(io(&target))?;
            let _ = std::fs::remove_dir_all(&old);
        }
        std::fs::rename(&self.dir, &target).map_err(io(&target))?;
        runtime.load(&target, Limits::default())
    }

    /// The staged component's bytes.
    pub fn component_bytes(&self) -> Result<Vec<u8>, RuntimeError> {
        let path = self.plugin.manifest().component_path(&self.dir);
        crate::plugin_files::read_bounded(&path, crate::plugin_files::MAX_COMPONENT_BYTES)
            .map_err(|source| RuntimeErrorKind::Io { path, source }.into())
    }

    /// Forgets the staged files (the user did not grant what the plugin asks for).
    pub fn discard(self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A suffix that keeps two stagings of the same plugin apart.
fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

impl Plugin {
    /// What the plugin may do once granted, in words for the user who grants it.
    pub fn requested_capabilities(&self) -> Vec<String> {
        let manifest = self.manifest();
        let mut asks: Vec<String> = manifest
            .config
            .iter()
            .filter(|f| f.kind == crate::FieldKind::Directory)
            .map(|f| {
                format!(
                    "Read the files of the folder you give as \u{201c}{}\u{201d} (read-only; nothing outside it)",
                    f.display_name()
                )
            })
            .collect();
        if asks.is_empty() {
            asks.push("No access to your files".to_owned());
        }
        let quoted = |f: &crate::ConfigField| format!("\u{201c}{}\u{201d}", f.display_name());
        let urls = manifest
            .config
            .iter()
            .filter(|f| f.kind == crate::FieldKind::Url);
        let web: Vec<String> = urls
            .clone()
            .filter(|f| !f.is_stream_url())
            .map(quoted)
            .collect();
        if !web.is_empty() {
            asks.push(format!(
                "Connect over HTTP to the host of the address you give as {} (no other host)",
                web.join(" or ")
            ));
        }
        let clear = match manifest.plaintext_consent() {
            Some(consent) => format!("in clear only if you set {} to true", quoted(consent)),
            None => "never in clear".to_owned(),
        };
        for field in urls.filter(|f| f.is_stream_url()) {
            asks.push(format!(
                "Connect to the server you give as {} ({}), encrypted by TLS that Quarry checks (STARTTLS where the address says so; {clear}), and to no other server",
                quoted(field),
                field
                    .schemes()
                    .iter()
                    .map(|s| format!("{s}://"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ));
        }
        if !manifest.capabilities.network.is_empty() {
            asks.push(format!(
                "Connect over HTTP{} to {}",
                if manifest.capabilities.streams {
                    " and TLS"
                } else {
                    ""
                },
                manifest.capabilities.network.join(", ")
            ));
        }
        if asks_no_network(manifest) {
            asks.push("No network access".to_owned());
        }
        for field in manifest
            .config
            .iter()
            .filter(|f| f.kind == crate::FieldKind::Certificate)
        {
            asks.push(format!(
                "Trust, for its encrypted connections, the certificate authorities in the file you give as {} (Quarry reads the file; the plugin only learns its path)",
                quoted(field)
            ));
        }
        for secret in manifest
            .config
            .iter()
            .filter(|f| f.kind == crate::FieldKind::Password)
        {
            asks.push(format!(
                "Receive the secret you give as {} (only this plugin gets it; it is never logged or shown again)",
                quoted(secret)
            ));
        }
        if self.wit_version().reads_scans() {
            asks.push(
                "Have the images and scanned pages of its documents read by Quarry's text recognition (OCR), which runs on this computer"
                    .to_owned(),
            );
        }
        let limits = self.limits();
        asks.push(format!(
            "Runs sandboxed: at most {} MiB of memory and {} s per call",
            limits.memory_bytes >> 20,
            limits.call_timeout.as_secs()
        ));
        asks
    }
}

/// Whether `manifest` asks for no network access at all.
fn asks_no_network(manifest: &crate::Manifest) -> bool {
    manifest.capabilities.network.is_empty()
        && !manifest
            .config
            .iter()
            .any(|f| f.kind == crate::FieldKind::Url)
}
