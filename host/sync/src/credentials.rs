//! Credentials are held back before indexing: each fetched document is judged by the credential
//! detector under its connector's policy (hold back, redact, or off; paths the user released)
//! before the index sees it. The index of an older Quarry, or one checked with older rules, is
//! checked again at the next start ([`recheck_index`]).

use quarry_core::{DocId, ExtractedText, SourceDoc};
use quarry_credentials::{Detector, Rule, Scan, Subject, budget, redact};
use quarry_index::{SearchIndex, WriteBatch};
use quarry_store::{Connector, CredentialMode, CredentialPolicy, Original, Store};
use tokio::runtime::Handle;

use crate::SyncError;

/// The version of the rules documents are judged by: raise it when the rules find more, and
/// the next start checks the index again.
pub const RULES_VERSION: u32 = 3;

/// What becomes of a fetched document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Judgement {
    /// Indexed; `redacted` when its secrets were replaced (its file is then not served).
    Index { redacted: bool },
    /// Not indexed, for this reason (shown to the user only).
    HoldBack(String),
}

/// What judging an original found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct OriginalVerdict {
    /// What the catalog keeps: the fingerprint, or why it could not be judged. `Pending`
    /// when it holds a credential (the document is then held back or redacted, and its file is
    /// not served whatever this says).
    pub original: Original,
    /// The rule by which the file is a credential as a whole, if it is one.
    pub credential_file: Option<Rule>,
    /// The rules of the secrets found in it.
    pub rules: Vec<Rule>,
    /// True when it is a copy of Quarry's own database.
    pub quarry_database: bool,
    /// True when the file changed while it was read: its text may be of another version, so
    /// the next sync fetches it again.
    pub changed: bool,
}

impl OriginalVerdict {
    /// A file that could not be judged, and why.
    pub(crate) fn unjudged(why: String) -> OriginalVerdict {
        OriginalVerdict {
            original: Original::Unjudged(why),
            ..OriginalVerdict::default()
        }
    }

    /// True when something in it is a credential.
    pub(crate) fn found(&self) -> bool {
        self.credential_file.is_some() || !self.rules.is_empty() || self.quarry_database
    }
}

/// Why a copy of Quarry's own database is held back, whatever the policy.
pub(crate) const LEFT_OUT_DATABASE: &str = "left out: a copy of Quarry's own database";

/// Whether `doc`'s credentials are checked under `policy`: not when the check is off or the
/// user released its path.
pub(crate) fn checks(policy: &CredentialPolicy, doc: &SourceDoc) -> bool {
    policy.mode != CredentialMode::Off && !is_released(&policy.released, shown_path(doc))
}

/// The path the rules and the user's releases see: the document's path, or its title.
pub(crate) fn shown_path(doc: &SourceDoc) -> &str {
    doc.meta.path.as_deref().unwrap_or(&doc.meta.title)
}

/// Judges `doc` by its fetched `content` (redacted in place when the policy says so), by its
/// names (title and path, which cannot be redacted), and by what judging its `original` file
/// found (`None` when it was not read).
pub(crate) fn judge(
    policy: &CredentialPolicy,
    doc: &SourceDoc,
    content: &mut ExtractedText,
    original: Option<&OriginalVerdict>,
) -> Judgement {
    if original.is_some_and(|o| o.quarry_database) {
        return Judgement::HoldBack(LEFT_OUT_DATABASE.to_owned());
    }
    if !checks(policy, doc) {
        return Judgement::Index { redacted: false };
    }
    let path = shown_path(doc);
    let detector = Detector::shared();
    let scan = detector.scan(
        &Subject {
            path,
            text: &content.text,
        },
        budget(content.text.len()),
    );
    // What the connector says of the document is shown too: its names (title and path) and
    // its metadata.
    let names = std::iter::once(doc.meta.title.as_str()).chain(doc.meta.path.as_deref());
    let name_count = 1 + usize::from(doc.meta.path.is_some());
    let mut extra: Vec<(usize, Scan)> = Vec::new();
    for (i, value) in names
        .chain(content.metadata.iter().map(|(_, v)| v.as_str()))
        .enumerate()
    {
        let found = detector.scan(
            &Subject {
                path: "",
                text: value,
            },
            budget(value.len()),
        );
        if !found.is_clear() {
            extra.push((i, found));
        }
    }
    if !scan.complete || extra.iter().any(|(_, s)| !s.complete) {
        return Judgement::HoldBack(format!(
            "could not be checked for credentials in time ({} KiB of text)",
            content.text.len() >> 10
        ));
    }
    if let Some(rule) = scan
        .credential_file
        .or_else(|| original.and_then(|o| o.credential_file))
    {
        return Judgement::HoldBack(format!("a credential: {}", rule.what));
    }
    let mut rules = scan.rules();
    for (_, found) in &extra {
        rules.extend(found.rules());
    }
    rules.extend(original.iter().flat_map(|o| o.rules.iter().copied()));
    if rules.is_empty() {
        return Judgement::Index { redacted: false };
    }
    if policy.mode == CredentialMode::Hold {
        return Judgement::HoldBack(holds(&rules));
    }
    // A name is not rewritten, so a document whose name holds a secret is held back.
    if let Some((_, found)) = extra.iter().find(|(i, _)| *i < name_count) {
        return Judgement::HoldBack(holds(&found.rules()));
    }
    let (text, page_starts) = redact(&content.text, &content.page_starts, &scan.secrets);
    content.text = text;
    content.page_starts = page_starts;
    for (i, found) in extra {
        if let Some((_, value)) = content.metadata.get_mut(i - name_count) {
            *value = redact(value, &[], &found.secrets).0;
        }
    }
    // The original's findings need nothing here: a redacted document's file is not served.
    Judgement::Index { redacted: true }
}

/// "holds a GitHub token and a password in a URL".
fn holds(rules: &[Rule]) -> String {
    let mut whats: Vec<&str> = Vec::new();
    for rule in rules {
        if !whats.contains(&rule.what) {
            whats.push(rule.what);
        }
    }
    let listed = match whats.as_slice() {
        [] => "a credential".to_owned(),
        [one] => (*one).to_owned(),
        [first @ .., last] => format!("{} and {last}", first.join(", ")),
    };
    format!("holds {listed}")
}

/// Whether `path` is released by one of `patterns`: a path as it is, a folder's path ending in
/// `/` (everything under it), or a pattern with `*` (within a name), `**` (across folders) and
/// `?` (one character).
pub(crate) fn is_released(patterns: &[String], path: &str) -> bool {
    patterns.iter().any(|pattern| {
        if let Some(folder) = pattern.strip_suffix('/') {
            return path.starts_with(folder) && path.as_bytes().get(folder.len()) == Some(&b'/');
        }
        glob(pattern.as_bytes(), path.as_bytes())
    })
}

/// Whether `text` matches the glob `pattern` (`*`, `**`, `?`), by dynamic programming over both
/// (no backtracking blow-up whatever the pattern).
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    // matches[j]: whether the pattern so far matches text[..j].
    let mut matches = vec![false; text.len() + 1];
    matches[0] = true;
    let mut p = 0;
    while p < pattern.len() {
        let mut next = vec![false; text.len() + 1];
        match pattern[p] {
            b'*' => {
                let across = pattern.get(p + 1) == Some(&b'*');
                let mut reach = false;
                for j in 0..=text.len() {
                    reach |= matches[j];
                    next[j] = reach;
                    if j < text.len() && !across && text[j] == b'/' {
                        reach = false;
                    }
                }
                if across {
                    p += 1;
                }
            }
            b'?' => {
                for j in 0..text.len() {
                    next[j + 1] = matches[j] && text[j] != b'/';
                }
            }
            c => {
                for j in 0..text.len() {
                    next[j + 1] = matches[j] && text[j] == c;
                }
            }
        }
        matches = next;
        p += 1;
    }
    matches[text.len()]
}

/// What [`recheck_index`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recheck {
    /// Documents read from the index.
    pub checked: u64,
    /// Documents removed from the index and held back, by connector name.
    pub held_back: Vec<(String, u64)>,
}

/// Documents read from the index between two writes of what they decided.
const RECHECK_BATCH: usize = 256;

/// Checks every document in the index with the credential rules, unless the index was checked
/// with these rules already: a document that would now be held back is removed from the index,
/// then marked held back in the catalog (a crash in between leaves it out of the index, and the
/// next start checks again). Under a redacting connector it is fetched again instead, at the
/// next sync. Blocks: call it from a blocking thread.
pub fn recheck_index(
    store: &Store,
    index: &SearchIndex,
    runtime: &Handle,
) -> Result<Option<Recheck>, SyncError> {
    if runtime.block_on(store.credential_rules_checked())? >= RULES_VERSION {
        return Ok(None);
    }
    let mut report = Recheck::default();
    for connector in runtime.block_on(store.connectors())? {
        if connector.credentials.mode == CredentialMode::Off {
            continue;
        }
        let held = recheck_connector(store, index, runtime, &connector, &mut report.checked)?;
        if held > 0 {
            report.held_back.push((connector.name.clone(), held));
        }
    }
    runtime.block_on(store.set_credential_rules_checked(RULES_VERSION))?;
    Ok(Some(report))
}

/// [`recheck_index`] for one connector; returns how many documents it held back.
fn recheck_connector(
    store: &Store,
    index: &SearchIndex,
    runtime: &Handle,
    connector: &Connector,
    checked: &mut u64,
) -> Result<u64, SyncError> {
    let docs = runtime.block_on(store.indexed_docs(&connector.id))?;
    let mut held_total = 0;
    for chunk in docs.chunks(RECHECK_BATCH) {
        let mut held: Vec<(DocId, String)> = Vec::new();
        let mut again: Vec<DocId> = Vec::new();
        for (id, _) in chunk {
            let Some(stored) = index.document(&connector.id, id)? else {
                // The catalog has it, the index not (a crash between the two): fetch it again.
                again.push(id.clone());
                continue;
            };
            *checked += 1;
            let doc = SourceDoc {
                id: id.clone(),
                locator: String::new(),
                meta: stored.info.meta.clone(),
                version: String::new(),
                has_text: true,
            };
            let mut content = ExtractedText {
                text: stored.text,
                page_starts: stored.page_starts,
                metadata: stored.metadata,
            };
            let hold_policy = CredentialPolicy {
                mode: CredentialMode::Hold,
                released: connector.credentials.released.clone(),
            };
            if let Judgement::HoldBack(why) = judge(&hold_policy, &doc, &mut content, None) {
                match connector.credentials.mode {
                    CredentialMode::Redact => again.push(id.clone()),
                    _ => held.push((id.clone(), why)),
                }
            }
        }
        if !held.is_empty() {
            index.write(WriteBatch {
                deletes: held
                    .iter()
                    .map(|(id, _)| (connector.id.clone(), id.clone()))
                    .collect(),
                ..WriteBatch::default()
            })?;
            runtime.block_on(store.hold_back(&connector.id, &held))?;
            held_total += held.len() as u64;
        }
        if !again.is_empty() {
            runtime.block_on(store.refetch(&connector.id, &again))?;
            runtime.block_on(store.request_sync(&connector.id, quarry_store::now_ms()))?;
        }
    }
    Ok(held_total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_paths_folders_and_patterns_match_as_people_expect() {
        let released = |patterns: &[&str], path: &str| {
            is_released(
                &patterns.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>(),
                path,
            )
        };
        assert!(released(&["keys/test.pem"], "keys/test.pem"));
        assert!(!released(&["keys/test.pem"], "keys/test.pem.bak"));
        assert!(released(&["fixtures/"], "fixtures/a/b.key"));
        assert!(!released(&["fixtures/"], "fixtures-old/b.key"));
        assert!(released(&["*.pem"], "test.pem"));
        assert!(
            !released(&["*.pem"], "keys/test.pem"),
            "* stays within a name"
        );
        assert!(released(&["**/*.pem"], "keys/deep/test.pem"));
        assert!(released(&["keys/**"], "keys/deep/test.pem"));
        assert!(released(&["key?.txt"], "key1.txt"));
        assert!(!released(&["key?.txt"], "key12.txt"));
        assert!(!released(&[], "anything"));
        let long = "a".repeat(4000);
        assert!(!released(&["*a*a*a*a*a*a*a*a*b"], &long), "no blow-up");
    }

    fn doc(path: &str) -> SourceDoc {
        SourceDoc {
            id: DocId::parse("d1".to_owned()).expect("id"),
            locator: path.to_owned(),
            meta: quarry_core::DocMeta {
                title: path.rsplit('/').next().unwrap_or(path).to_owned(),
                path: Some(path.to_owned()),
                mime_type: "text/plain".to_owned(),
                ..Default::default()
            },
            version: "v1".to_owned(),
            has_text: true,
        }
    }

    fn text(text: &str) -> ExtractedText {
        ExtractedText {
            text: text.to_owned(),
            ..Default::default()
        }
    }

    #[test]
    fn the_policy_decides_between_holding_back_redacting_and_indexing() {
        let token = "ghp_R8x2kLq9ZtW4mN7vB3cY6dH1fJ5sA0gE2uPo";
        let note = format!("Deploy with GITHUB_TOKEN={token} from the build host.");
        let mut policy = CredentialPolicy::default();
        let held = judge(&policy, &doc("deploy.md"), &mut text(&note), None);
        assert_eq!(held, Judgement::HoldBack("holds a GitHub token".to_owned()));

        policy.mode = CredentialMode::Redact;
        let mut redacted = text(&note);
        assert_eq!(
            judge(&policy, &doc("deploy.md"), &mut redacted, None),
            Judgement::Index { redacted: true }
        );
        assert!(!redacted.text.contains(token) && redacted.text.contains("build host"));
        let key = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7".repeat(4)
        );
        assert!(
            matches!(judge(&policy, &doc("server.key"), &mut text(&key), None), Judgement::HoldBack(why) if why.contains("private key")),
            "a key file is held back even when redacting"
        );

        policy.mode = CredentialMode::Hold;
        policy.released = vec!["deploy.md".to_owned()];
        assert_eq!(
            judge(&policy, &doc("deploy.md"), &mut text(&note), None),
            Judgement::Index { redacted: false }
        );
        // A page whose markup holds a key its text leaves out is held back too: the original's
        // findings count as the text's.
        policy.released.clear();
        let html = doc("map.html");
        let markup = OriginalVerdict {
            rules: vec![quarry_credentials::Rule {
                id: "google-api-key",
                what: "a Google API key",
            }],
            ..OriginalVerdict::default()
        };
        assert_eq!(
            judge(&policy, &html, &mut text("Office map"), Some(&markup)),
            Judgement::HoldBack("holds a Google API key".to_owned())
        );
        policy.mode = CredentialMode::Redact;
        assert_eq!(
            judge(&policy, &html, &mut text("Office map"), Some(&markup)),
            Judgement::Index { redacted: true },
            "its text is clean; its original is not served"
        );
        policy.mode = CredentialMode::Off;
        assert_eq!(
            judge(&policy, &doc("deploy.md"), &mut text(&note), None),
            Judgement::Index { redacted: false }
        );
    }

    #[test]
    fn a_secret_in_a_path_holds_the_document_back_even_when_redacting() {
        let path = "tokens/ghp_R8x2kLq9ZtW4mN7vB3cY6dH1fJ5sA0gE2uPo/readme.txt";
        let mut policy = CredentialPolicy::default();
        let held = judge(&policy, &doc(path), &mut text("Read me first."), None);
        assert_eq!(held, Judgement::HoldBack("holds a GitHub token".to_owned()));
        policy.mode = CredentialMode::Redact;
        let held = judge(&policy, &doc(path), &mut text("Read me first."), None);
        assert_eq!(held, Judgement::HoldBack("holds a GitHub token".to_owned()));
        let plain = judge(
            &policy,
            &doc("tokens/readme.txt"),
            &mut text("Read me."),
            None,
        );
        assert_eq!(plain, Judgement::Index { redacted: false });
    }

    #[test]
    fn a_copy_of_quarrys_database_is_held_back_under_every_policy() {
        let copy = OriginalVerdict {
            quarry_database: true,
            ..OriginalVerdict::default()
        };
        for mode in [
            CredentialMode::Hold,
            CredentialMode::Redact,
            CredentialMode::Off,
        ] {
            let policy = CredentialPolicy {
                mode,
                released: vec!["backup.bin".to_owned()],
            };
            assert_eq!(
                judge(&policy, &doc("backup.bin"), &mut text(""), Some(&copy)),
                Judgement::HoldBack(LEFT_OUT_DATABASE.to_owned()),
                "{mode:?}"
            );
        }
    }
}
