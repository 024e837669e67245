//! The connector's configuration, as key-value strings.

use crate::Error;
use crate::bindings::quarry::connector::host;

/// The configuration the user set for this connector, validated by the host against the manifest.
#[derive(Debug, Clone, Default)]
pub struct Config {
    entries: Vec<(String, String)>,
}

impl Config {
    /// Wraps key-value pairs.
    pub fn new(entries: Vec<(String, String)>) -> Self {
        Config { entries }
    }

    /// Reads the configuration the host holds for the current call.
    pub fn from_host() -> Self {
        Config::new(host::config())
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `key`, or an `invalid-config` error naming it.
    pub fn require(&self, key: &str) -> Result<&str, Error> {
        self.get(key)
            .ok_or_else(|| Error::InvalidConfig(format!("`{key}` is required but not set")))
    }

    /// The value of `key` as an unsigned number, `default` when unset.
    pub fn u64_or(&self, key: &str, default: u64) -> Result<u64, Error> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| {
                Error::InvalidConfig(format!("`{key}` must be a whole number, got {v:?}"))
            }),
        }
    }

    /// The value of `key` as a boolean (`true`/`false`), `default` when unset.
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, Error> {
        match self.get(key) {
            None => Ok(default),
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(v) => Err(Error::InvalidConfig(format!(
                "`{key}` must be true or false, got {v:?}"
            ))),
        }
    }

    /// The value of `key` split on commas and newlines, trimmed, empty parts dropped; `default`
    /// when unset.
    pub fn list_or(&self, key: &str, default: &[&str]) -> Vec<String> {
        match self.get(key) {
            None => default.iter().map(|s| (*s).to_owned()).collect(),
            Some(v) => v
                .split([',', '\n'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        }
    }
}
