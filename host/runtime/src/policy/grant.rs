//! What a grant is: a connector's settings and the user's grant, checked against the manifest,
//! and turned into what the sandbox gets: the config the plugin reads, the folders mounted
//! read-only (never one of Quarry's own, under any name), the hosts it may reach, and the
//! secret values to keep out of every text.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use crate::manifest::{ConfigField, FieldKind, Manifest};
use crate::policy::hosts::{check_host_entry, has_clear_form};
use crate::policy::protected::ProtectedPaths;
use crate::policy::secrets::Secrets;

/// What the user allowed a connector to do. Anything not here is denied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grant {
    /// Folders the plugin may read, by the `directory` field that names them.
    pub directories: BTreeMap<String, PathBuf>,
    /// Hosts the plugin may reach over HTTP: `host` (ports 80 and 443) or `host:port`.
    pub hosts: Vec<String>,
    /// Of those, the `host:port` the user consented to reach in clear when adding the connector
    /// (its `plaintext-consent` setting set to true, for the servers of its stream `url`
    /// settings whose scheme has a clear form: `imap://`, not `imaps://`).
    pub clear: Vec<String>,
}

/// How a grant keeps, among its hosts, one the user consented to reach in clear.
const CLEAR: &str = "clear:";

impl Grant {
    /// A grant kept as text ([`Grant::stored_hosts`]): directory field -> host folder, and the
    /// granted hosts.
    pub fn from_stored(dirs: &BTreeMap<String, String>, hosts: &[String]) -> Grant {
        let (clear, hosts): (Vec<&String>, Vec<&String>) =
            hosts.iter().partition(|h| h.starts_with(CLEAR));
        Grant {
            directories: dirs
                .iter()
                .map(|(field, folder)| (field.clone(), PathBuf::from(folder)))
                .collect(),
            hosts: hosts.into_iter().cloned().collect(),
            clear: clear
                .into_iter()
                .map(|h| h[CLEAR.len()..].to_owned())
                .collect(),
        }
    }

    /// The hosts as the store keeps them: the granted ones, then those consented to in clear
    /// as `clear:host:port`.
    pub fn stored_hosts(&self) -> Vec<String> {
        let clear = self.clear.iter().map(|h| format!("{CLEAR}{h}"));
        self.hosts.iter().cloned().chain(clear).collect()
    }

    /// Whether a stored host entry is a consent to reach it in clear; its `host:port` if so.
    pub fn in_clear(stored: &str) -> Option<&str> {
        stored.strip_prefix(CLEAR)
    }

    /// The grant a user gives by adding a connector with these settings: every folder named in
    /// its `directory` fields, the host of every `url` field, and the hosts the manifest's
    /// `capabilities.network` asks for (shown to the user when the plugin was installed).
    pub fn for_settings(manifest: &Manifest, values: &BTreeMap<String, String>) -> Grant {
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
        let mut hosts: Vec<String> = manifest.capabilities.network.clone();
        let consented = manifest
            .plaintext_consent()
            .is_some_and(|f| values.get(&f.key).is_some_and(|v| v == "true"));
        let mut clear = Vec::new();
        for field in manifest.config.iter().filter(|f| f.kind == FieldKind::Url) {
            let value = values.get(&field.key).or(field.default.as_ref());
            let Some((value, entry)) = value.and_then(|v| Some((v, field.url_entry(v).ok()?)))
            else {
                continue;
            };
            if consented && field.is_stream_url() && has_clear_form(value) {
                clear.push(entry.clone());
            }
            hosts.push(entry);
        }
        hosts.sort();
        hosts.dedup();
        clear.sort();
        clear.dedup();
        Grant {
            directories,
            hosts,
            clear,
        }
    }
}

/// What a sandbox is set up with: the config the plugin sees, and the folders it gets.
#[derive(Clone)]
pub(crate) struct SandboxSetup {
    pub(crate) config: Vec<(String, String)>,
    /// (host folder, guest path) pairs, mounted read-only.
    pub(crate) mounts: Vec<(PathBuf, String)>,
    /// Hosts the sandbox may reach over HTTP, and over streams when `streams`.
    pub(crate) hosts: Vec<String>,
    /// Whether the plugin may open streams (`capabilities.streams`).
    pub(crate) streams: bool,
    /// PEM files of the certificate authorities its TLS trusts besides the system's.
    pub(crate) certificates: Vec<PathBuf>,
    /// Whether the user consented to its connections in clear.
    pub(crate) plaintext: Plaintext,
    /// The values of its `password` settings, kept out of logs and errors.
    pub(crate) secrets: Secrets,
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
            .field("hosts", &self.hosts)
            .field("streams", &self.streams)
            .field("certificates", &self.certificates)
            .field("plaintext", &self.plaintext)
            .finish()
    }
}

/// The user's answer to connections in clear (a `plaintext-consent` setting).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plaintext {
    /// The plugin has no such setting: it cannot be allowed.
    NotAsked,
    /// The setting of this key is not `true`.
    Declined(String),
    /// The user set it to `true` when adding the connector: connections in clear to these
    /// `host:port` (the servers of its stream `url` settings with a clear form).
    Allowed(Vec<String>),
}

/// Checks `values` and `grant` against the manifest. The error names the field and the fix.
pub(crate) fn resolve(
    manifest: &Manifest,
    values: &BTreeMap<String, String>,
    grant: &Grant,
    protected: &ProtectedPaths,
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
    let mut secrets = Vec::new();
    let mut certificates = Vec::new();
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
            let (host, guest) = granted_folder(&field.key, value, grant, protected)?;
            config.push((field.key.clone(), guest.clone()));
            mounts.push((host, guest));
            continue;
        }
        if field.kind == FieldKind::Url {
            granted_url(field, value, grant)?;
        }
        if field.kind == FieldKind::Certificate {
            certificates.push(PathBuf::from(value));
        }
        if field.kind == FieldKind::Password {
            secrets.push(value.clone());
        }
        config.push((field.key.clone(), value.clone()));
    }
    if let Some(asked) = manifest
        .capabilities
        .network
        .iter()
        .find(|h| !grant_covers(&grant.hosts, h))
    {
        return Err(format!(
            "capabilities.network asks for {asked}, which this connector's grant does not include (granted hosts: {}); add the connector again to grant it",
            list_or_none(&grant.hosts)
        ));
    }
    for host in &grant.hosts {
        check_host_entry(host).map_err(|e| format!("the grant's host {e}"))?;
    }
    // The consent is the grant's, given when the connector was added with the setting true:
    // a value that turned into a consent later (a plugin update retyping a setting) is none.
    let plaintext = match manifest.plaintext_consent() {
        None => Plaintext::NotAsked,
        Some(field)
            if values.get(&field.key).is_some_and(|v| v == "true") && !grant.clear.is_empty() =>
        {
            Plaintext::Allowed(grant.clear.clone())
        }
        Some(field) => Plaintext::Declined(field.key.clone()),
    };
    Ok(SandboxSetup {
        config,
        mounts,
        hosts: grant.hosts.clone(),
        streams: manifest.capabilities.streams,
        certificates,
        plaintext,
        secrets: Secrets::new(secrets),
    })
}

/// The folder of directory setting `key`: granted, an existing folder, none of Quarry's own.
/// Returns it and where the sandbox mounts it.
fn granted_folder(
    key: &str,
    value: &str,
    grant: &Grant,
    protected: &ProtectedPaths,
) -> Result<(PathBuf, String), String> {
    let host = PathBuf::from(value);
    if grant.directories.get(key) != Some(&host) {
        return Err(format!(
            "`{key}`: reading {} was not granted",
            host.display()
        ));
    }
    if !host.is_dir() {
        return Err(format!(
            "`{key}`: {} is not a folder that exists",
            host.display()
        ));
    }
    // By real path, and by device and inode up the path: a bind mount or a second mount of one
    // of Quarry's folders is the folder itself; a copy of a data folder holds the same data.
    if protected.covers_folder(&host) {
        return Err(format!(
            "`{key}`: {} is one of Quarry's own folders (or inside one, or another name for one, or a copy of a Quarry data folder), which no plugin may read",
            host.display()
        ));
    }
    Ok((host, format!("/{key}")))
}

/// Checks that the grant covers the host of URL setting `field`.
fn granted_url(field: &ConfigField, value: &str, grant: &Grant) -> Result<(), String> {
    let key = &field.key;
    let entry = field.url_entry(value).map_err(|e| format!("`{key}` {e}"))?;
    if grant_covers(&grant.hosts, &entry) {
        return Ok(());
    }
    Err(format!(
        "`{key}`: connecting to {entry} was not granted (granted hosts: {})",
        list_or_none(&grant.hosts)
    ))
}

/// Whether the granted `hosts` include `entry` as such (`example.com` is not covered by
/// `example.com:8443`, nor the other way round).
fn grant_covers(hosts: &[String], entry: &str) -> bool {
    hosts.iter().any(|h| h.eq_ignore_ascii_case(entry))
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test plugin's manifest with `rest` (its settings and capabilities) after the header.
    fn manifest_with(rest: &str) -> Manifest {
        let header = "id = \"t\"\nname = \"T\"\nversion = \"1.0.0\"\nwit = \"0.1.0\"\ncomponent = \"t.wasm\"\n";
        Manifest::parse(&format!("{header}{rest}")).expect("test manifest")
    }

    fn manifest() -> Manifest {
        manifest_with(
            r#"
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
        let setup = resolve(
            &m,
            &v,
            &Grant::for_settings(&m, &v),
            &ProtectedPaths::default(),
        )?;
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
        assert_eq!(
            setup.secrets.redact("login s3cret refused"),
            "login [secret] refused"
        );
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
            let err = resolve(&m, &v, &grant, &ProtectedPaths::default()).expect_err(expected);
            assert!(err.contains(expected), "{err} should mention {expected}");
        }
        let asking = manifest_with(
            r#"
            [capabilities]
            network = ["api.example.com"]
            [[config]]
            key = "feed"
            type = "url"
        "#,
        );
        let feed = values(&[("feed", "https://feeds.example.org/rss")]);
        let granted = Grant::for_settings(&asking, &feed);
        assert_eq!(granted.hosts, ["api.example.com", "feeds.example.org"]);
        assert!(resolve(&asking, &feed, &granted, &ProtectedPaths::default()).is_ok());
        let err = resolve(
            &asking,
            &feed,
            &Grant::default(),
            &ProtectedPaths::default(),
        )
        .expect_err("nothing granted");
        assert!(
            err.contains("connecting to feeds.example.org was not granted"),
            "{err}"
        );
        let only_feed = Grant {
            hosts: vec!["feeds.example.org".to_owned()],
            ..Grant::default()
        };
        let err = resolve(&asking, &feed, &only_feed, &ProtectedPaths::default())
            .expect_err("capability not granted");
        assert!(
            err.contains("capabilities.network asks for api.example.com")
                && err.contains("granted hosts: feeds.example.org"),
            "{err}"
        );
        let v = values(&[("folder", &path), ("limit", "many")]);
        let err = resolve(
            &m,
            &v,
            &Grant::for_settings(&m, &v),
            &ProtectedPaths::default(),
        )
        .expect_err("bad number");
        assert!(err.contains("`limit` must be a whole number"), "{err}");
    }

    #[test]
    fn consent_to_clear_is_the_grants_and_only_for_a_server_with_a_clear_form() {
        let mail = manifest_with(
            r#"
            [capabilities]
            streams = true
            [[config]]
            key = "server"
            type = "url"
            schemes = ["imaps", "imap"]
            [[config]]
            key = "allow_plaintext"
            type = "plaintext-consent"
            [[config]]
            key = "flag"
            type = "bool"
        "#,
        );
        let protected = ProtectedPaths::default();
        let consented = values(&[
            ("server", "imap://mail.example"),
            ("allow_plaintext", "true"),
        ]);
        let grant = Grant::for_settings(&mail, &consented);
        assert_eq!(grant.clear, ["mail.example:143"]);
        // Kept with the hosts, read back the same.
        let stored = Grant::from_stored(&BTreeMap::new(), &grant.stored_hosts());
        assert_eq!(stored, grant);
        let setup = resolve(&mail, &consented, &stored, &protected).expect("consented");
        assert_eq!(
            setup.plaintext,
            Plaintext::Allowed(vec!["mail.example:143".to_owned()])
        );
        // An imaps:// server gets no consent to clear.
        let tls = values(&[
            ("server", "imaps://mail.example"),
            ("allow_plaintext", "true"),
        ]);
        assert!(Grant::for_settings(&mail, &tls).clear.is_empty());
        // A value set to true without the grant's consent (a plugin update that made another
        // setting the consent) is no consent.
        let without = Grant::for_settings(&mail, &values(&[("server", "imap://mail.example")]));
        let setup = resolve(&mail, &consented, &without, &protected).expect("settings");
        assert_eq!(
            setup.plaintext,
            Plaintext::Declined("allow_plaintext".into())
        );
    }
}
