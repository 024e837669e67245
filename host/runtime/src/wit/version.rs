//! The versions of the connector contract (`quarry:connector`) this host runs, oldest first,
//! with what each can do. A new version is a variant here, its entry in [`WitVersion::ALL`], and
//! its folder under `wit/` (the compiler then asks for its arm wherever versions are matched).

use std::fmt;

/// A version of `quarry:connector`. Ordered: a later version can do all an earlier one can.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WitVersion {
    /// `list-docs`, `fetch-content`, `read-file`, `validate-config`.
    V0_1_0,
    /// Adds `list-changes`.
    V0_2_0,
    /// Adds `fetch-contents`, and the host's bulk reads (`read-folder`, `read-file-start`).
    V0_3_0,
    /// Adds `read-scans`, and the host's OCR (`recognize-text`).
    V0_4_0,
    /// Adds `watch`, and the host's streams (`network.open-stream`).
    V0_5_0,
}

/// The functions of `quarry:connector/source`, in the WIT's order, each with the version that
/// brought it.
const SOURCE_FUNCTIONS: [(&str, WitVersion); 8] = [
    ("list-docs", WitVersion::V0_1_0),
    ("list-changes", WitVersion::V0_2_0),
    ("fetch-content", WitVersion::V0_1_0),
    ("fetch-contents", WitVersion::V0_3_0),
    ("read-file", WitVersion::V0_1_0),
    ("read-scans", WitVersion::V0_4_0),
    ("watch", WitVersion::V0_5_0),
    ("validate-config", WitVersion::V0_1_0),
];

impl WitVersion {
    /// Every version this host runs, oldest first.
    pub const ALL: [WitVersion; 5] = [
        WitVersion::V0_1_0,
        WitVersion::V0_2_0,
        WitVersion::V0_3_0,
        WitVersion::V0_4_0,
        WitVersion::V0_5_0,
    ];

    /// The version as manifests and component exports write it (`0.3.0`).
    pub const fn as_str(self) -> &'static str {
        match self {
            WitVersion::V0_1_0 => "0.1.0",
            WitVersion::V0_2_0 => "0.2.0",
            WitVersion::V0_3_0 => "0.3.0",
            WitVersion::V0_4_0 => "0.4.0",
            WitVersion::V0_5_0 => "0.5.0",
        }
    }

    /// The version written `version`, if this host runs it.
    pub fn parse(version: &str) -> Option<WitVersion> {
        WitVersion::ALL.into_iter().find(|v| v.as_str() == version)
    }

    /// The versions this host runs, written out and joined by `separator`.
    pub fn all_joined(separator: &str) -> String {
        WitVersion::ALL.map(WitVersion::as_str).join(separator)
    }

    /// Whether plugins of this version can tell what changed from a watcher's paths
    /// (`list-changes`, since 0.2.0).
    pub fn has_list_changes(self) -> bool {
        self >= WitVersion::V0_2_0
    }

    /// Whether plugins of this version can extract several documents in one call
    /// (`fetch-contents`, since 0.3.0).
    pub fn fetches_together(self) -> bool {
        self >= WitVersion::V0_3_0
    }

    /// Whether plugins of this version read scans with the host's OCR (`read-scans`, since
    /// 0.4.0).
    pub fn reads_scans(self) -> bool {
        self >= WitVersion::V0_4_0
    }

    /// Whether plugins of this version can watch their source (`watch`) and open streams
    /// (`network.open-stream`), since 0.5.0.
    pub fn watches(self) -> bool {
        self >= WitVersion::V0_5_0
    }

    /// The functions of `quarry:connector/source` in this version, in the WIT's order.
    pub fn source_functions(self) -> Vec<&'static str> {
        SOURCE_FUNCTIONS
            .iter()
            .filter(|(_, since)| self >= *since)
            .map(|(name, _)| *name)
            .collect()
    }
}

impl fmt::Display for WitVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_version_has_the_functions_of_those_before_it_and_its_own() {
        assert_eq!(
            WitVersion::V0_1_0.source_functions(),
            ["list-docs", "fetch-content", "read-file", "validate-config"]
        );
        assert_eq!(
            WitVersion::V0_5_0.source_functions(),
            [
                "list-docs",
                "list-changes",
                "fetch-content",
                "fetch-contents",
                "read-file",
                "read-scans",
                "watch",
                "validate-config"
            ]
        );
        for pair in WitVersion::ALL.windows(2) {
            let (older, newer) = (pair[0].source_functions(), pair[1].source_functions());
            assert!(older.iter().all(|f| newer.contains(f)), "{pair:?}");
        }
        for version in WitVersion::ALL {
            assert_eq!(WitVersion::parse(version.as_str()), Some(version));
            assert_eq!(
                version.has_list_changes(),
                version.source_functions().contains(&"list-changes")
            );
            assert_eq!(
                version.fetches_together(),
                version.source_functions().contains(&"fetch-contents")
            );
            assert_eq!(
                version.reads_scans(),
                version.source_functions().contains(&"read-scans")
            );
            assert_eq!(
                version.watches(),
                version.source_functions().contains(&"watch")
            );
        }
        assert_eq!(WitVersion::parse("0.9.0"), None);
        assert_eq!(
            WitVersion::all_joined(", "),
            "0.1.0, 0.2.0, 0.3.0, 0.4.0, 0.5.0"
        );
    }
}
