//! The plugin manifest, `quarry-plugin.toml`: what a plugin is, what it may be configured with and
//! what it asks to be allowed to do. Unknown keys are errors, so a typo never silently drops a
//! setting or a restriction.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use crate::error::{RuntimeError, RuntimeErrorKind};
use crate::plugin_files::{MAX_MANIFEST_BYTES, read_bounded_text};
use crate::policy::hosts::{WEB_SCHEMES, check_host_entry, entry_for_url, is_known_scheme};
use crate::wit::version::WitVersion;

/// File name of a manifest, next to the component it describes.
pub const MANIFEST_FILE: &str = "quarry-plugin.toml";

/// A parsed and checked plugin manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Plugin id: lowercase letters, digits and `-`, starting with a letter (`folder`, `rss-feed`).
    pub id: String,
    /// Name shown to users.
    pub name: String,
    /// The plugin's own version (`1.2.0`).
    pub version: String,
    /// Version of the `quarry:connector` WIT package the component implements (`0.1.0`).
    pub wit: String,
    /// What the plugin does, for the install prompt.
    #[serde(default)]
    pub description: String,
    /// The component file, relative to the manifest's folder.
    pub component: String,
    /// Settings the user fills in when adding a connector.
    #[serde(default)]
    pub config: Vec<ConfigField>,
    /// What the plugin asks to be allowed to do besides reading its `directory` fields.
    #[serde(default)]
    pub capabilities: Capabilities,
    /// How often the host syncs the plugin's connectors, unless the user set otherwise.
    #[serde(default)]
    pub sync: SyncSchedule,
}

/// Default sync intervals of a plugin's connectors (`[sync]` in the manifest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncSchedule {
    /// Minutes between syncs. Each sync lists what changed since the last (or everything, for
    /// a source without a change log) and fetches only changed documents. Folders are also
    /// synced as soon as their files change. At least 1; default 15.
    #[serde(default = "SyncSchedule::default_interval")]
    pub interval_minutes: u32,
    /// Hours between full listings, which remove whatever a listing of changes missed. At least
    /// 1; default 24.
    #[serde(default = "SyncSchedule::default_full_interval")]
    pub full_interval_hours: u32,
}

impl SyncSchedule {
    fn default_interval() -> u32 {
        15
    }

    fn default_full_interval() -> u32 {
        24
    }
}

impl Default for SyncSchedule {
    fn default() -> Self {
        SyncSchedule {
            interval_minutes: SyncSchedule::default_interval(),
            full_interval_hours: SyncSchedule::default_full_interval(),
        }
    }
}

/// One configuration field.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigField {
    /// Key passed to the plugin: lowercase letters, digits and `_`, starting with a letter.
    pub key: String,
    /// Label shown to users.
    #[serde(default)]
    pub label: String,
    /// What kind of value it holds.
    #[serde(rename = "type")]
    pub kind: FieldKind,
    /// Whether a value must be given (a default counts).
    #[serde(default)]
    pub required: bool,
    /// Value used when the user gives none.
    pub default: Option<String>,
    /// Help text shown next to the field.
    #[serde(default)]
    pub description: String,
    /// For a `url` field, the schemes it takes (`["imaps", "imap"]`); `http` and `https`
    /// when not given.
    #[serde(default)]
    pub schemes: Vec<String>,
    /// For a `directory` field, where such folders usually are: paths from the home folder
    /// (`~/.config/chromium/*/History`) of a file the folder holds, `*` standing for any one
    /// name. `connector add` without the field offers the folders found (`suggest.rs`).
    #[serde(default)]
    pub suggest: Vec<String>,
}

/// The kinds of configuration values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldKind {
    /// Any text.
    Text,
    /// A secret: never logged, never shown back.
    Password,
    /// A whole number (decimal, non-negative).
    Number,
    /// `true` or `false`.
    Bool,
    /// A folder on this machine, mounted read-only in the sandbox: this is the filesystem
    /// capability, and the user grants it when adding the connector.
    Directory,
    /// An `http://` or `https://` URL: the plugin may reach its host (and port) over HTTP. This
    /// is the network capability of sources the user names (a feed, an API); the user grants
    /// the host when adding the connector. A field whose `schemes` name a protocol of streams
    /// (`imaps`, `imap`, `smtps`...) grants its host and port (the scheme's by default) to the
    /// plugin's streams (`network.open-stream`) instead.
    Url,
    /// A PEM file on this machine of certificate authorities the host trusts for this
    /// connector's TLS, besides the system's (a private CA). The host reads it; the plugin
    /// gets only its path and cannot read the file.
    Certificate,
    /// `true` or `false`, `false` unless the user sets it: the user's consent to connections in
    /// clear (no TLS) to the servers of the plugin's stream `url` fields. Without it the host
    /// refuses every connection in clear. A manifest cannot make `true` the default.
    #[serde(rename = "plaintext-consent")]
    PlaintextConsent,
}

/// Capabilities beyond reading `directory` fields.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    /// Hosts the plugin always needs to reach over outgoing HTTP (`api.example.com`, or
    /// `host:port`), besides the hosts of its `url` fields. Shown to the user at install and
    /// granted when a connector is added.
    #[serde(default)]
    pub network: Vec<String>,
    /// Whether the plugin opens streams (`network.open-stream`, WIT 0.5.0) to the hosts of its
    /// grant: TLS done and verified by the host. Shown to the user at install.
    #[serde(default)]
    pub streams: bool,
}

impl Manifest {
    /// Reads and checks the manifest at `path`.
    pub fn load(path: &Path) -> Result<Manifest, RuntimeError> {
        let text = read_bounded_text(path, MAX_MANIFEST_BYTES).map_err(|e| {
            RuntimeError::from(RuntimeErrorKind::Manifest {
                path: path.to_owned(),
                message: format!("cannot read it: {e}"),
            })
        })?;
        Manifest::parse(&text).map_err(|message| {
            RuntimeError::from(RuntimeErrorKind::Manifest {
                path: path.to_owned(),
                message,
            })
        })
    }

    /// Parses and checks manifest text; the error says what is wrong and how to fix it.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let manifest: Manifest = toml::from_str(text).map_err(|e| e.to_string())?;
        manifest.check()?;
        Ok(manifest)
    }

    /// The component's path, given the folder holding the manifest.
    pub fn component_path(&self, dir: &Path) -> PathBuf {
        dir.join(&self.component)
    }

    /// The field with key `key`.
    pub fn field(&self, key: &str) -> Option<&ConfigField> {
        self.config.iter().find(|f| f.key == key)
    }

    /// The keys of its secret settings (`password` fields): sealed at rest, never shown.
    pub fn secret_keys(&self) -> std::collections::BTreeSet<String> {
        self.config
            .iter()
            .filter(|f| f.kind == FieldKind::Password)
            .map(|f| f.key.clone())
            .collect()
    }

    fn check(&self) -> Result<(), String> {
        if !is_name(&self.id, b'-') {
            return Err(format!(
                "id {:?}: use lowercase letters, digits and '-', starting with a letter (at most 64)",
                self.id
            ));
        }
        if self.name.trim().is_empty() {
            return Err("name must not be empty".into());
        }
        if self.sync.interval_minutes == 0 || self.sync.full_interval_hours == 0 {
            return Err(
                "[sync] interval_minutes and full_interval_hours must be at least 1".into(),
            );
        }
        if WitVersion::parse(&self.wit).is_none() {
            return Err(format!(
                "wit = {:?} is not a version this host supports ({})",
                self.wit,
                WitVersion::all_joined(", ")
            ));
        }
        let component = Path::new(&self.component);
        let plain = component
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
        if self.component.is_empty() || !plain {
            return Err(format!(
                "component {:?} must be a file name or relative path inside the plugin's folder",
                self.component
            ));
        }
        let mut keys = BTreeSet::new();
        for field in &self.config {
            field.check()?;
            if !keys.insert(field.key.as_str()) {
                return Err(format!("config key {:?} is declared twice", field.key));
            }
        }
        for host in &self.capabilities.network {
            check_host_entry(host).map_err(|e| format!("capabilities.network: {e}"))?;
        }
        let consents = self
            .config
            .iter()
            .filter(|f| f.kind == FieldKind::PlaintextConsent)
            .count();
        if consents > 1 {
            return Err("only one config field may be of type plaintext-consent".into());
        }
        if consents == 1 && !self.capabilities.streams {
            return Err(
                "a plaintext-consent field allows connections in clear, which needs capabilities.streams = true"
                    .into(),
            );
        }
        Ok(())
    }

    /// Whether the plugin reaches a network source: streams, a `url` setting or hosts of
    /// `capabilities.network`. Such a source can only tell of changes through `watch`.
    pub fn reaches_network(&self) -> bool {
        self.capabilities.streams
            || !self.capabilities.network.is_empty()
            || self.config.iter().any(|f| f.kind == FieldKind::Url)
    }

    /// The field whose value is the user's consent to connections in clear, if the plugin
    /// asks for one.
    pub fn plaintext_consent(&self) -> Option<&ConfigField> {
        self.config
            .iter()
            .find(|f| f.kind == FieldKind::PlaintextConsent)
    }
}

impl ConfigField {
    /// The label users see, or the key when the manifest gives none.
    pub fn display_name(&self) -> &str {
        if self.label.trim().is_empty() {
            &self.key
        } else {
            &self.label
        }
    }

    fn check(&self) -> Result<(), String> {
        if !is_name(&self.key, b'_') {
            return Err(format!(
                "config key {:?}: use lowercase letters, digits and '_', starting with a letter (at most 64)",
                self.key
            ));
        }
        if !self.schemes.is_empty() && self.kind != FieldKind::Url {
            return Err(format!(
                "config key {:?}: only a url field takes `schemes`",
                self.key
            ));
        }
        if !self.suggest.is_empty() && self.kind != FieldKind::Directory {
            return Err(format!(
                "config key {:?}: only a directory field takes `suggest`",
                self.key
            ));
        }
        if self.suggest.len() > crate::suggest::MAX_PATTERNS {
            return Err(format!(
                "config key {:?}: at most {} suggest patterns",
                self.key,
                crate::suggest::MAX_PATTERNS
            ));
        }
        if let Some(bad) = self.suggest.iter().find(|p| !crate::suggest::is_pattern(p)) {
            return Err(format!(
                "config key {:?}: suggest {bad:?}: write a path from the home folder (~/...) to a file, `*` for any one name",
                self.key
            ));
        }
        if let Some(unknown) = self.schemes.iter().find(|s| !is_known_scheme(s)) {
            return Err(format!(
                "config key {:?}: scheme {unknown:?} is not one Quarry grants (http, https, imaps, imap, smtps, submission, smtp, pop3s, pop3, ldaps, ldap, tls)",
                self.key
            ));
        }
        if let Some(default) = &self.default {
            if self.kind == FieldKind::Directory {
                return Err(format!(
                    "config key {:?}: a directory field cannot have a default (the user picks the folder)",
                    self.key
                ));
            }
            if self.kind == FieldKind::PlaintextConsent && default != "false" {
                return Err(format!(
                    "config key {:?}: a plaintext-consent field's default must be \"false\" (only the user can consent)",
                    self.key
                ));
            }
            self.check_value(default)
                .map_err(|e| format!("config key {:?}: default {e}", self.key))?;
        }
        Ok(())
    }

    /// Checks a value against the field's kind; the error completes "`key` ...".
    pub fn check_value(&self, value: &str) -> Result<(), String> {
        match self.kind {
            FieldKind::Number if value.trim().parse::<u64>().is_err() => {
                Err(format!("must be a whole number, got {value:?}"))
            }
            FieldKind::Bool | FieldKind::PlaintextConsent
                if value != "true" && value != "false" =>
            {
                Err(format!("must be true or false, got {value:?}"))
            }
            FieldKind::Directory if !Path::new(value).is_absolute() => {
                Err(format!("must be an absolute path, got {value:?}"))
            }
            FieldKind::Certificate if !Path::new(value).is_absolute() => Err(format!(
                "must be the absolute path of a PEM file of certificates, got {value:?}"
            )),
            FieldKind::Url => self.url_entry(value).map(|_| ()),
            _ => Ok(()),
        }
    }

    /// The schemes a `url` field takes.
    pub fn schemes(&self) -> Vec<String> {
        if self.schemes.is_empty() {
            WEB_SCHEMES.map(str::to_owned).to_vec()
        } else {
            self.schemes.clone()
        }
    }

    /// Whether this is a `url` field of a protocol other than the web's (its host is reached
    /// over a stream).
    pub fn is_stream_url(&self) -> bool {
        self.kind == FieldKind::Url
            && self
                .schemes()
                .iter()
                .any(|s| !WEB_SCHEMES.contains(&s.as_str()))
    }

    /// The grant entry of `value`, a URL of this field; the error completes "`key` ...".
    pub(crate) fn url_entry(&self, value: &str) -> Result<String, String> {
        entry_for_url(value, &self.schemes())
    }
}

/// Lowercase ASCII name starting with a letter, with digits and `sep`, at most 64 bytes.
fn is_name(s: &str, sep: u8) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
        id = "notes"
        name = "Notes"
        version = "1.0.0"
        wit = "0.1.0"
        component = "notes.wasm"
        [[config]]
        key = "folder"
        type = "directory"
        required = true
        [[config]]
        key = "depth"
        type = "number"
        default = "3"
    "#;

    #[test]
    fn parses_a_good_manifest() {
        let m = Manifest::parse(GOOD).expect("valid manifest");
        assert_eq!(m.id, "notes");
        assert_eq!(m.field("depth").map(|f| f.kind), Some(FieldKind::Number));
    }

    #[test]
    fn rejects_unknown_keys_with_their_name() {
        let err = Manifest::parse(&format!("{GOOD}\n[capabilities]\nnetwrok = []"))
            .expect_err("typo must be refused");
        assert!(err.contains("netwrok"), "{err}");
        let err = Manifest::parse(&GOOD.replace("id = ", "colour = \"red\"\nid = "))
            .expect_err("unknown key");
        assert!(err.contains("colour"), "{err}");
    }

    #[test]
    fn rejects_bad_values_naming_the_fix() {
        let cases = [
            (GOOD.replace("\"0.1.0\"", "\"9.0.0\""), "9.0.0"),
            (
                GOOD.replace("notes.wasm", "../x.wasm"),
                "inside the plugin's folder",
            ),
            (GOOD.replace("\"notes\"", "\"Notes!\""), "lowercase"),
            (
                GOOD.replace("default = \"3\"", "default = \"three\""),
                "whole number",
            ),
            (
                format!("{GOOD}\n[capabilities]\nnetwork = [\"https://example.com/\"]"),
                "no scheme, no path",
            ),
        ];
        for (text, expected) in cases {
            let err = Manifest::parse(&text).expect_err(expected);
            assert!(err.contains(expected), "{err} should mention {expected}");
        }
        let asks = Manifest::parse(&format!(
            "{GOOD}\n[capabilities]\nnetwork = [\"api.example.com\", \"127.0.0.1:8080\"]"
        ))
        .expect("hosts are a capability a plugin may ask for");
        assert_eq!(asks.capabilities.network.len(), 2);
    }

    #[test]
    fn folder_suggestions_are_only_for_folders_and_only_from_the_home_folder() {
        let with = |kind: &str, patterns: &str| {
            Manifest::parse(&format!(
                "{GOOD}\n[[config]]\nkey = \"profile\"\ntype = \"{kind}\"\nsuggest = [{patterns}]\n"
            ))
        };
        let good = with("directory", "\"~/.config/chromium/*/History\"").expect("a suggestion");
        assert_eq!(good.field("profile").map(|f| f.suggest.len()), Some(1));
        for (kind, patterns, says) in [
            ("text", "\"~/.config/x/File\"", "only a directory field"),
            ("directory", "\"/etc/*/passwd\"", "from the home folder"),
            ("directory", "\"~/../other/File\"", "from the home folder"),
            ("directory", "\"~/.config/*\"", "from the home folder"),
        ] {
            let err = with(kind, patterns).expect_err(patterns);
            assert!(err.contains(says) && err.contains("profile"), "{err}");
        }
        let many = vec!["\"~/a/File\""; 17].join(", ");
        let err = with("directory", &many).expect_err("17 patterns");
        assert!(err.contains("at most 16"), "{err}");
    }

    #[test]
    fn only_the_user_can_consent_to_connections_in_clear() {
        let consent = "[[config]]\nkey = \"allow_plaintext\"\ntype = \"plaintext-consent\"\n";
        let with_streams = format!("{GOOD}\n{consent}\n[capabilities]\nstreams = true");
        let manifest = Manifest::parse(&with_streams).expect("a consent a plugin may ask for");
        assert_eq!(
            manifest.plaintext_consent().map(|f| f.key.as_str()),
            Some("allow_plaintext")
        );
        let cases = [
            (format!("{GOOD}\n{consent}"), "capabilities.streams"),
            (
                with_streams.replace(
                    "type = \"plaintext-consent\"",
                    "type = \"plaintext-consent\"\ndefault = \"true\"",
                ),
                "only the user can consent",
            ),
            (
                format!(
                    "{GOOD}\n{consent}{}\n[capabilities]\nstreams = true",
                    consent.replace("allow_", "also_")
                ),
                "only one",
            ),
        ];
        for (text, expected) in cases {
            let err = Manifest::parse(&text).expect_err(expected);
            assert!(err.contains(expected), "{err} should mention {expected}");
        }
    }
}
