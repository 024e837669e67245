//! Secret setting values (a connector's `password` settings), blanked out of whatever text
//! leaves the sandbox: log lines, progress, errors, the plugin's output.

use std::sync::Arc;

/// The secret values of one connector's settings.
#[derive(Clone, Default)]
pub(crate) struct Secrets(Arc<[String]>);

impl Secrets {
    /// These secret values; the longest is blanked out first, so that one secret holding
    /// another leaves nothing of itself behind.
    pub(crate) fn new(mut values: Vec<String>) -> Secrets {
        values.retain(|v| !v.is_empty());
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Secrets(values.into())
    }

    /// `text` with every secret replaced by `[secret]`.
    pub(crate) fn redact(&self, text: &str) -> String {
        self.0.iter().fold(text.to_owned(), |text, secret| {
            text.replace(secret.as_str(), "[secret]")
        })
    }

    /// Whether there are none to blank out.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_holding_another_leaves_nothing_of_itself() {
        let nested = Secrets::new(vec!["abc".to_owned(), "xxabcxx".to_owned()]);
        assert_eq!(nested.redact("a xxabcxx b abc"), "a [secret] b [secret]");
        assert!(Secrets::new(vec![String::new()]).is_empty());
    }
}
