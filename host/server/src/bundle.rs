//! What an installed Quarry ships beside its binary: the bundled plugins, the default model and
//! ONNX Runtime's library, found from the running binary's own install prefix, so that an
//! installed `quarry` needs no flag, environment variable or checkout.
//!
//! The layout (`make install`, the Debian package):
//!
//! ```text
//! <prefix>/bin/quarry
//! <prefix>/share/quarry/plugins/<id>/quarry-plugin.toml (and its component)
//! <prefix>/share/quarry/models/<model>/ (tokenizer.json, onnx/model.onnx)
//! <prefix>/lib/quarry/libonnxruntime.so
//! ```

use std::path::{Path, PathBuf};

use quarry_core::trust::check_trusted_tree;

/// The model used when none is named.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";

/// The install prefix of the running binary, when it holds a Quarry installation.
#[derive(Debug, Clone)]
pub struct Bundle {
    share: PathBuf,
    lib: PathBuf,
}

impl Bundle {
    /// The installation the running binary belongs to: `<prefix>` is the folder above the one
    /// holding the binary (links resolved), and counts when `<prefix>/share/quarry` exists and
    /// no one but its owner (this user or root) may write to it or to anything in it (plugins,
    /// models). A binary run from a build folder has none.
    pub fn of_this_binary() -> Option<Bundle> {
        let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
        let prefix = exe.parent()?.parent()?;
        Bundle::at(prefix)
    }

    /// The installation under `prefix`, if there is a trusted one.
    fn at(prefix: &Path) -> Option<Bundle> {
        let share = prefix.join("share/quarry");
        if !share.is_dir() {
            return None;
        }
        if let Err(why) = check_trusted_tree(&share) {
            tracing::warn!("the bundled plugins and model are not used: {why}");
            return None;
        }
        Some(Bundle {
            share,
            lib: prefix.join("lib/quarry"),
        })
    }

    /// The folder of bundled plugin folders, when there is one.
    pub fn plugins(&self) -> Option<PathBuf> {
        Some(self.share.join("plugins")).filter(|p| p.is_dir())
    }

    /// The bundled page renderer, when it is installed.
    pub fn renderer(&self) -> Option<PathBuf> {
        Some(self.share.join("renderer/quarry_preview.wasm")).filter(|p| p.is_file())
    }

    /// The bundled model `name`, when it is installed.
    pub fn model(&self, name: &str) -> Option<PathBuf> {
        Some(self.share.join("models").join(name)).filter(|p| p.is_dir())
    }

    /// The bundled ONNX Runtime library, when it is installed and its folder, and everything
    /// in it, is guarded as the bundle's share folder is.
    pub fn runtime_library(&self) -> Option<PathBuf> {
        let library = Some(self.lib.join("libonnxruntime.so")).filter(|p| p.is_file())?;
        match check_trusted_tree(&self.lib) {
            Ok(()) => Some(library),
            Err(why) => {
                tracing::warn!("the bundled ONNX Runtime is not used: {why}");
                None
            }
        }
    }

    /// Whether `path` is one of this installation's files.
    pub fn holds(&self, path: &Path) -> bool {
        path.starts_with(&self.share) || path.starts_with(&self.lib)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn an_install_prefix_is_found_by_its_share_folder_and_refused_when_others_may_write_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let prefix = dir.path();
        assert!(Bundle::at(prefix).is_none(), "no share/quarry: no bundle");
        std::fs::create_dir_all(prefix.join("share/quarry/plugins/folder")).expect("mkdir");
        std::fs::create_dir_all(prefix.join("share/quarry/models/all-MiniLM-L6-v2"))
            .expect("mkdir");
        std::fs::create_dir_all(prefix.join("lib/quarry")).expect("mkdir");
        std::fs::write(prefix.join("lib/quarry/libonnxruntime.so"), b"elf").expect("write");
        let bundle = Bundle::at(prefix).expect("a bundle");
        assert_eq!(bundle.plugins(), Some(prefix.join("share/quarry/plugins")));
        assert_eq!(
            bundle.model(DEFAULT_MODEL),
            Some(prefix.join("share/quarry/models/all-MiniLM-L6-v2"))
        );
        assert_eq!(bundle.model("multilingual-e5-small"), None);
        assert_eq!(
            bundle.runtime_library(),
            Some(prefix.join("lib/quarry/libonnxruntime.so"))
        );
        assert!(bundle.holds(&prefix.join("share/quarry/plugins/folder")));
        assert!(!bundle.holds(&prefix.join("bin/quarry")));
        std::fs::set_permissions(
            prefix.join("share/quarry"),
            std::fs::Permissions::from_mode(0o777),
        )
        .expect("chmod");
        assert!(Bundle::at(prefix).is_none(), "writable by others: not used");
        std::fs::set_permissions(
            prefix.join("share/quarry"),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
        // Anything inside the share folder, or the library's folder, counts too.
        let plugins = prefix.join("share/quarry/plugins/folder");
        std::fs::set_permissions(&plugins, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        assert!(
            Bundle::at(prefix).is_none(),
            "a plugin folder others may write"
        );
        std::fs::set_permissions(&plugins, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let bundle = Bundle::at(prefix).expect("a bundle again");
        let library = prefix.join("lib/quarry/libonnxruntime.so");
        std::fs::set_permissions(&library, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        assert_eq!(bundle.runtime_library(), None, "a library others may write");
    }
}
