//! The texts a model is trained to see before queries and before passages: sentence-transformers'
//! `prompts` in `config_sentence_transformers.json` (E5 models were trained with `query: ` and
//! `passage: `; docs/languages.md measures them).

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use crate::EmbedError;

/// The file sentence-transformers keeps its prompts in.
const FILE: &str = "config_sentence_transformers.json";

/// The prompt put before each query and before each passage; empty for a model without any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Prompts {
    query: String,
    passage: String,
}

#[derive(Deserialize)]
struct Config {
    #[serde(default)]
    prompts: HashMap<String, String>,
}

impl Prompts {
    /// The prompts of the model in `dir`: `prompts.query`, and `prompts.passage` (or
    /// `prompts.document`, the other name sentence-transformers models use). None without the
    /// file; a file that is not JSON of that shape is an error, since vectors made without the
    /// model's prompts would quietly differ from what the model was trained for.
    pub(crate) fn of_model(dir: &Path) -> Result<Prompts, EmbedError> {
        let path = dir.join(FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Prompts::default()),
            Err(e) => {
                return Err(EmbedError::BadFile {
                    path,
                    message: e.to_string(),
                });
            }
        };
        let mut config: Config =
            serde_json::from_slice(&bytes).map_err(|e| EmbedError::BadFile {
                path: path.clone(),
                message: format!(
                    "{e} (expected {{\"prompts\": {{\"query\": ..., \"passage\": ...}}}})"
                ),
            })?;
        let mut take = |names: &[&str]| {
            names
                .iter()
                .find_map(|name| config.prompts.remove(*name))
                .unwrap_or_default()
        };
        Ok(Prompts {
            query: take(&["query"]),
            passage: take(&["passage", "document"]),
        })
    }

    /// Whether the model has any prompt.
    pub(crate) fn is_empty(&self) -> bool {
        self.query.is_empty() && self.passage.is_empty()
    }

    /// Bytes that name the prompts inside a model's id.
    pub(crate) fn fingerprint(&self) -> Vec<u8> {
        format!("\0query\0{}\0passage\0{}", self.query, self.passage).into_bytes()
    }

    /// `query` as the model should see it.
    pub(crate) fn query<'a>(&self, query: &'a str) -> Cow<'a, str> {
        prefixed(&self.query, query)
    }

    /// `passage` as the model should see it.
    pub(crate) fn passage<'a>(&self, passage: &'a str) -> Cow<'a, str> {
        prefixed(&self.passage, passage)
    }
}

fn prefixed<'a>(prompt: &str, text: &'a str) -> Cow<'a, str> {
    if prompt.is_empty() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("{prompt}{text}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompts_of(json: &str) -> Result<Prompts, EmbedError> {
        let dir = tempfile::tempdir().map_err(|e| EmbedError::Inference(e.to_string()))?;
        std::fs::write(dir.path().join(FILE), json)
            .map_err(|e| EmbedError::Inference(e.to_string()))?;
        Prompts::of_model(dir.path())
    }

    #[test]
    fn e5_prompts_are_put_before_queries_and_passages() -> Result<(), EmbedError> {
        let p = prompts_of(
            r#"{"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": null}"#,
        )?;
        assert_eq!(p.query("dog"), "query: dog");
        assert_eq!(p.passage("a dog"), "passage: a dog");
        let d = prompts_of(r#"{"prompts": {"query": "q: ", "document": "d: "}}"#)?;
        assert_eq!(d.passage("x"), "d: x");
        assert_ne!(p.fingerprint(), d.fingerprint());
        Ok(())
    }

    #[test]
    fn no_file_or_no_prompts_means_texts_as_they_are() -> Result<(), EmbedError> {
        let none = Prompts::of_model(Path::new("/nonexistent/model"))?;
        assert!(none.is_empty());
        assert!(matches!(none.query("dog"), Cow::Borrowed("dog")));
        assert!(prompts_of(r#"{"__version__": {"sentence_transformers": "2.0.0"}}"#)?.is_empty());
        Ok(())
    }

    #[test]
    fn a_malformed_prompts_file_is_an_error_naming_it() {
        let err = prompts_of(r#"{"prompts": ["query: "]}"#).err();
        let message = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains(FILE) && message.contains("expected"),
            "{message}"
        );
    }
}
