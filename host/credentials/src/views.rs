//! What a text holds in another form, read as the text it stands for: lines quoted in a reply
//! or commented out (`quotes`), string literals joined in code (`literals`), and base64 blocks
//! (`encoded`: mail attachments, Kubernetes secrets, JSON and YAML values, data URLs), which
//! are judged as files of their own, archives opened. Each view is scanned as any text is, within
//! the same time budget, to a bounded depth; what it finds is a secret of the text it came from,
//! at the bytes it stands for.

use std::ops::Range;

use crate::{Readers, Rule, Secret, Subject, Within, encoded, literals, quotes};

/// What the views of a text found.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Secrets, at the bytes of the text they stand for.
    pub secrets: Vec<Secret>,
    /// False when a view's scan ran out of time.
    pub complete: bool,
    /// Why a part could not be read to judge it (an encrypted archive member...).
    pub unread: Option<String>,
}

/// Reads every view of `text` with `readers`, one level deeper than `within`.
pub(crate) fn scan(readers: Readers, text: &str, within: Within) -> Found {
    let deeper = within.deeper();
    let mut found = Found {
        complete: true,
        ..Found::default()
    };
    let text_views = quotes::views(text).into_iter().chain(literals::views(text));
    for view in text_views {
        let inner = (readers.text)(
            &Subject {
                path: "",
                text: &view.text,
            },
            deeper,
        );
        found.complete &= inner.complete;
        found.unread = found.unread.or(inner.unread);
        // A credential by its name or form as a whole (an export) is the whole view; one known
        // by the secrets it holds is those secrets.
        if let Some(rule) = inner.credential_file.filter(|_| inner.secrets.is_empty()) {
            found.secrets.push(secret(rule, view.origin.clone()));
        }
        for inside in inner.secrets {
            let span = view.origin_of(&inside.span);
            found.secrets.push(secret(inside.rule, span));
        }
        if !found.complete {
            return found;
        }
    }
    for block in encoded::blocks(text) {
        let name = block.name.as_deref().unwrap_or("");
        let inner = (readers.file)(name, &block.bytes, deeper);
        found.complete &= inner.complete;
        found.unread = found.unread.or(inner.unread);
        if let Some(rule) = inner.credential_file.or(inner.rules.first().copied()) {
            found.secrets.push(secret(rule, block.origin));
        }
        if !found.complete {
            return found;
        }
    }
    found
}

fn secret(rule: Rule, span: Range<usize>) -> Secret {
    Secret { rule, span }
}
