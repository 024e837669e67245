//! The packed plugin: one file holding a plugin's manifest, component, README and licence (and,
//! once signed, its signature), as a tar archive with every header fixed (mode 0644, owner 0,
//! time 0) and the entries in one order, so the same inputs always give the same bytes and so
//! the same sha256.
//!
//! Reading is for files from strangers: the archive is read from memory already bounded in
//! size, every entry must be a regular file with a plain name Quarry expects, each at most its
//! cap, none twice, and the manifest must name the component inside.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use quarry_runtime::{
    MANIFEST_FILE, MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES, Manifest, read_bounded,
    read_bounded_text,
};
use sha2::{Digest, Sha256};

use crate::error::PackageError;

/// The usual extension of a packed plugin (`folder-1.2.0.qplugin`).
pub const PACK_EXTENSION: &str = "qplugin";
/// The README every packed plugin carries.
pub const README_FILE: &str = "README.md";
/// The entry holding a packed plugin's signature (`signature.rs`).
pub const SIGNATURE_FILE: &str = "quarry-plugin.sig";
/// The names a licence file may have, in the order a folder is searched.
pub const LICENCE_FILES: [&str; 6] = [
    "LICENSE",
    "LICENSE.md",
    "LICENSE.txt",
    "LICENCE",
    "LICENCE.md",
    "COPYING",
];
/// The largest README or licence packed.
const MAX_TEXT_BYTES: u64 = 1 << 20;
/// The largest signature entry.
const MAX_SIGNATURE_BYTES: u64 = 4 << 10;
/// The largest packed file read: its entries at their caps, with room for the headers.
pub const MAX_PACK_BYTES: u64 = MAX_COMPONENT_BYTES
    + MAX_MANIFEST_BYTES
    + 2 * MAX_TEXT_BYTES
    + MAX_SIGNATURE_BYTES
    + (64 << 10);

/// A plugin in its distributable form.
#[derive(Debug, Clone)]
pub struct Pack {
    manifest_text: String,
    manifest: Manifest,
    component: Vec<u8>,
    readme: Vec<u8>,
    licence_name: String,
    licence: Vec<u8>,
    signature: Option<Vec<u8>>,
}

/// One entry as it is written: its name and bytes.
pub struct Entry<'a> {
    /// The file name inside the pack.
    pub name: &'a str,
    /// Its bytes.
    pub bytes: &'a [u8],
}

impl Pack {
    /// Reads the plugin in `dir`: its manifest, the component it names (a file beside it), its
    /// `README.md` and its licence (`LICENSE`, `COPYING`, ...). The error names what is
    /// missing and how to add it.
    pub fn from_folder(dir: &Path) -> Result<Pack, PackageError> {
        let manifest_path = dir.join(MANIFEST_FILE);
        let manifest_text = read_bounded_text(&manifest_path, MAX_MANIFEST_BYTES)
            .map_err(PackageError::io(&manifest_path))?;
        let manifest = parse_manifest(&manifest_text)?;
        let component_path = manifest.component_path(dir);
        let component = read_bounded(&component_path, MAX_COMPONENT_BYTES).map_err(|e| {
            PackageError::Plugin(format!(
                "cannot read the component {}: {e}; build the plugin first (its build.sh, or `make plugins`)",
                component_path.display()
            ))
        })?;
        let readme_path = dir.join(README_FILE);
        let readme = read_bounded(&readme_path, MAX_TEXT_BYTES).map_err(|e| {
            PackageError::Plugin(format!(
                "cannot read {}: {e}; a packed plugin carries a README.md saying what it does and how to set it up",
                readme_path.display()
            ))
        })?;
        let Some(licence_name) = LICENCE_FILES.iter().find(|name| dir.join(name).is_file()) else {
            return Err(PackageError::Plugin(format!(
                "{} has no licence file; add one ({}) saying under which terms others may use the plugin",
                dir.display(),
                LICENCE_FILES.join(", ")
            )));
        };
        let licence_path = dir.join(licence_name);
        let licence =
            read_bounded(&licence_path, MAX_TEXT_BYTES).map_err(PackageError::io(&licence_path))?;
        Ok(Pack {
            manifest_text,
            manifest,
            component,
            readme,
            licence_name: (*licence_name).to_owned(),
            licence,
            signature: None,
        })
    }

    /// Reads a packed plugin from its bytes; the error says what is wrong (cut short, changed,
    /// an entry Quarry does not expect).
    pub fn parse(bytes: &[u8]) -> Result<Pack, PackageError> {
        if bytes.len() as u64 > MAX_PACK_BYTES {
            return Err(PackageError::Format(format!(
                "larger than {} MiB",
                MAX_PACK_BYTES >> 20
            )));
        }
        Pack::from_entries(read_entries(bytes)?)
    }

    /// Puts a packed plugin together from its entries but the component, and the component
    /// (how a registry holds it, `oci.rs`); checked as [`Pack::parse`] checks.
    pub fn from_entries_and_component(
        mut entries: Vec<(String, Vec<u8>)>,
        component: Vec<u8>,
    ) -> Result<Pack, PackageError> {
        let manifest = entries
            .iter()
            .find(|(name, _)| name == MANIFEST_FILE)
            .and_then(|(_, bytes)| std::str::from_utf8(bytes).ok())
            .ok_or_else(|| PackageError::Format(format!("it holds no {MANIFEST_FILE}")))?;
        let name = parse_manifest(manifest)?.component;
        if entries.iter().any(|(n, _)| *n == name) {
            return Err(PackageError::Format(format!("it holds {name:?} twice")));
        }
        entries.push((name, component));
        Pack::from_entries(entries)
    }

    /// The plugin of these entries: each known and once, the manifest naming the component held.
    fn from_entries(list: Vec<(String, Vec<u8>)>) -> Result<Pack, PackageError> {
        let count = list.len();
        let mut entries: BTreeMap<String, Vec<u8>> = list.into_iter().collect();
        if entries.len() != count {
            return Err(PackageError::Format("it holds an entry twice".into()));
        }
        let manifest_bytes = entries
            .remove(MANIFEST_FILE)
            .ok_or_else(|| PackageError::Format(format!("it holds no {MANIFEST_FILE}")))?;
        let manifest_text = String::from_utf8(manifest_bytes)
            .map_err(|_| PackageError::Format(format!("its {MANIFEST_FILE} is not UTF-8")))?;
        let manifest = parse_manifest(&manifest_text)?;
        let component = entries.remove(&manifest.component).ok_or_else(|| {
            PackageError::Format(format!(
                "its manifest names the component {:?}, which it does not hold",
                manifest.component
            ))
        })?;
        let readme = entries
            .remove(README_FILE)
            .ok_or_else(|| PackageError::Format(format!("it holds no {README_FILE}")))?;
        let Some(licence_name) = LICENCE_FILES
            .iter()
            .find(|name| entries.contains_key(**name))
            .map(|name| (*name).to_owned())
        else {
            return Err(PackageError::Format("it holds no licence file".into()));
        };
        let licence = entries.remove(&licence_name).unwrap_or_default();
        let signature = entries.remove(SIGNATURE_FILE);
        if let Some(name) = entries.keys().next() {
            return Err(PackageError::Format(format!(
                "it holds {name:?} besides the manifest, the component, README.md, one licence and a signature"
            )));
        }
        Ok(Pack {
            manifest_text,
            manifest,
            component,
            readme,
            licence_name,
            licence,
            signature,
        })
    }

    /// The packed bytes: the same for the same plugin, always.
    pub fn to_bytes(&self) -> Result<Vec<u8>, PackageError> {
        let mut builder = tar::Builder::new(Vec::new());
        for entry in self.entries() {
            let mut header = tar::Header::new_ustar();
            header
                .set_path(entry.name)
                .map_err(|e| PackageError::Plugin(format!("{:?}: {e}", entry.name)))?;
            header.set_size(entry.bytes.len() as u64);
            header.set_mode(0o644);
            header.set_uid(0);
            header.set_gid(0);
            header.set_mtime(0);
            header.set_entry_type(tar::EntryType::Regular);
            header.set_cksum();
            builder
                .append(&header, entry.bytes)
                .map_err(|e| PackageError::Plugin(format!("cannot pack {}: {e}", entry.name)))?;
        }
        builder
            .into_inner()
            .map_err(|e| PackageError::Plugin(format!("cannot pack: {e}")))
    }

    /// Its entries in the order they are packed, the signature last.
    pub fn entries(&self) -> Vec<Entry<'_>> {
        let mut entries = self.signed_entries();
        if let Some(signature) = &self.signature {
            entries.push(Entry {
                name: SIGNATURE_FILE,
                bytes: signature,
            });
        }
        entries
    }

    /// The entries a signature covers: all but the signature.
    pub fn signed_entries(&self) -> Vec<Entry<'_>> {
        vec![
            Entry {
                name: MANIFEST_FILE,
                bytes: self.manifest_text.as_bytes(),
            },
            Entry {
                name: &self.manifest.component,
                bytes: &self.component,
            },
            Entry {
                name: README_FILE,
                bytes: &self.readme,
            },
            Entry {
                name: &self.licence_name,
                bytes: &self.licence,
            },
        ]
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The manifest as written.
    pub fn manifest_text(&self) -> &str {
        &self.manifest_text
    }

    /// The component's bytes.
    pub fn component(&self) -> &[u8] {
        &self.component
    }

    /// The files besides manifest and component that an installed plugin keeps: README,
    /// licence and signature.
    pub fn extra_files(&self) -> Vec<(&str, &[u8])> {
        self.entries()
            .into_iter()
            .skip(2)
            .map(|e| (e.name, e.bytes))
            .collect()
    }

    /// The signature entry, if it is signed.
    pub fn signature(&self) -> Option<&[u8]> {
        self.signature.as_deref()
    }

    /// The same plugin with `signature` as its signature entry (replacing any).
    pub fn with_signature(mut self, signature: Vec<u8>) -> Pack {
        self.signature = Some(signature);
        self
    }

    /// The name a packed file of it usually has: `<id>-<version>.qplugin`.
    pub fn file_name(&self) -> String {
        format!(
            "{}-{}.{PACK_EXTENSION}",
            self.manifest.id, self.manifest.version
        )
    }
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The manifest, checked as the runtime checks it, and with a version a newer one can be told
/// from (semantic versioning).
fn parse_manifest(text: &str) -> Result<Manifest, PackageError> {
    let manifest =
        Manifest::parse(text).map_err(|e| PackageError::Plugin(format!("{MANIFEST_FILE}: {e}")))?;
    if semver::Version::parse(&manifest.version).is_err() {
        return Err(PackageError::Plugin(format!(
            "{MANIFEST_FILE}: version {:?} is not a semantic version (MAJOR.MINOR.PATCH, such as 1.2.0); updates are told from downgrades by it",
            manifest.version
        )));
    }
    let component = Path::new(&manifest.component);
    if component.components().count() != 1 {
        return Err(PackageError::Plugin(format!(
            "{MANIFEST_FILE}: component {:?} must be a file name beside the manifest to be packed; build it there",
            manifest.component
        )));
    }
    Ok(manifest)
}

/// The archive's entries by name, each checked: a regular file, a plain name, within its cap,
/// not seen before.
fn read_entries(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, PackageError> {
    let format = |e: std::io::Error| PackageError::Format(e.to_string());
    let mut archive = tar::Archive::new(bytes);
    let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
    for entry in archive.entries().map_err(format)? {
        let entry = entry.map_err(format)?;
        let header = entry.header();
        if header.entry_type() != tar::EntryType::Regular {
            return Err(PackageError::Format(format!(
                "it holds an entry of type {:?}; a packed plugin holds only files",
                header.entry_type()
            )));
        }
        let path = entry.path().map_err(format)?.into_owned();
        let name = match (path.to_str(), path.components().count()) {
            (Some(name), 1) if !name.starts_with('.') => name.to_owned(),
            _ => {
                return Err(PackageError::Format(format!(
                    "it holds {:?}; a packed plugin holds only plain file names",
                    path.display()
                )));
            }
        };
        if entries.iter().any(|(n, _)| *n == name) {
            return Err(PackageError::Format(format!("it holds {name:?} twice")));
        }
        let cap = match name.as_str() {
            MANIFEST_FILE => MAX_MANIFEST_BYTES,
            SIGNATURE_FILE => MAX_SIGNATURE_BYTES,
            README_FILE => MAX_TEXT_BYTES,
            other if LICENCE_FILES.contains(&other) => MAX_TEXT_BYTES,
            _ => MAX_COMPONENT_BYTES,
        };
        let size = entry.size();
        if size > cap {
            return Err(PackageError::Format(format!(
                "its {name} is larger than {} KiB",
                cap >> 10
            )));
        }
        let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        entry.take(cap + 1).read_to_end(&mut data).map_err(format)?;
        if data.len() as u64 != size {
            return Err(PackageError::Format(format!("its {name} is cut short")));
        }
        entries.push((name, data));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = "id = \"notes\"\nname = \"Notes\"\nversion = \"1.2.0\"\nwit = \"0.5.0\"\ncomponent = \"notes.wasm\"\n";

    fn folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(MANIFEST_FILE), MANIFEST).expect("manifest");
        std::fs::write(dir.path().join("notes.wasm"), b"\0asm component bytes").expect("wasm");
        std::fs::write(dir.path().join(README_FILE), "# Notes\n").expect("readme");
        std::fs::write(dir.path().join("LICENSE"), "Apache-2.0\n").expect("licence");
        dir
    }

    #[test]
    fn the_same_folder_packs_to_the_same_bytes_and_reads_back() {
        let dir = folder();
        let first = Pack::from_folder(dir.path())
            .expect("pack")
            .to_bytes()
            .expect("bytes");
        std::fs::write(dir.path().join("notes.wasm"), b"\0asm component bytes").expect("touch");
        let second = Pack::from_folder(dir.path())
            .expect("pack")
            .to_bytes()
            .expect("bytes");
        assert_eq!(sha256_digest(&first), sha256_digest(&second));
        let read = Pack::parse(&first).expect("parse");
        assert_eq!(read.manifest().id, "notes");
        assert_eq!(read.component(), b"\0asm component bytes");
        assert_eq!(read.file_name(), "notes-1.2.0.qplugin");
        assert_eq!(read.to_bytes().expect("bytes"), first);
    }

    #[test]
    fn a_folder_without_readme_licence_or_semantic_version_is_not_packed() {
        let dir = folder();
        std::fs::remove_file(dir.path().join("LICENSE")).expect("rm");
        let err = Pack::from_folder(dir.path()).expect_err("no licence");
        assert!(err.to_string().contains("licence"), "{err}");
        let dir = folder();
        std::fs::remove_file(dir.path().join(README_FILE)).expect("rm");
        let err = Pack::from_folder(dir.path()).expect_err("no readme");
        assert!(err.to_string().contains("README.md"), "{err}");
        let dir = folder();
        std::fs::write(
            dir.path().join(MANIFEST_FILE),
            MANIFEST.replace("1.2.0", "latest"),
        )
        .expect("manifest");
        let err = Pack::from_folder(dir.path()).expect_err("version");
        assert!(err.to_string().contains("semantic version"), "{err}");
    }

    #[test]
    fn cut_short_changed_or_foreign_archives_are_refused() {
        let dir = folder();
        let bytes = Pack::from_folder(dir.path())
            .expect("pack")
            .to_bytes()
            .expect("bytes");
        assert!(Pack::parse(&bytes[..bytes.len() / 2]).is_err());
        let mut flipped = bytes.clone();
        flipped[100] ^= 0x20; // inside the first header: its checksum no longer holds
        assert!(Pack::parse(&flipped).is_err());
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_ustar();
        header.as_old_mut().name[..9].copy_from_slice(b"../escape");
        header.set_size(1);
        header.set_cksum();
        builder.append(&header, &b"x"[..]).expect("append");
        let foreign = builder.into_inner().expect("tar");
        let err = Pack::parse(&foreign).expect_err("escape");
        assert!(err.to_string().contains("plain file names"), "{err}");
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_ustar();
        header.set_path("notes.wasm").expect("path");
        header.set_entry_type(tar::EntryType::Symlink);
        header.set_link_name("/etc/passwd").expect("link");
        header.set_size(0);
        header.set_cksum();
        builder.append(&header, &b""[..]).expect("append");
        let link = builder.into_inner().expect("tar");
        let err = Pack::parse(&link).expect_err("link");
        assert!(err.to_string().contains("only files"), "{err}");
    }
}
