//! JSON to text: one line per value, prefixed with the keys that lead to it.

use serde_json::Value;

/// Lines of `key.path: value` for every scalar in the document; `None` if it is not valid JSON.
pub fn to_text(source: &str) -> Option<String> {
    let value: Value = serde_json::from_str(source).ok()?;
    let mut out = String::new();
    let mut path = Vec::new();
    flatten(&value, &mut path, &mut out);
    Some(out)
}

fn flatten<'a>(value: &'a Value, path: &mut Vec<&'a str>, out: &mut String) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                path.push(key);
                flatten(v, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for v in items {
                flatten(v, path, out);
            }
        }
        Value::Null => {}
        scalar => {
            if !path.is_empty() {
                out.push_str(&path.join("."));
                out.push_str(": ");
            }
            match scalar {
                Value::String(s) => out.push_str(s),
                other => out.push_str(&other.to_string()),
            }
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattens_nested_values() {
        let text =
            to_text(r#"{"name":"Ada","tags":["math","poetry"],"born":{"year":1815},"x":null}"#);
        assert_eq!(
            text.as_deref(),
            Some("name: Ada\ntags: math\ntags: poetry\nborn.year: 1815\n")
        );
        assert_eq!(to_text("{oops"), None);
    }
}
