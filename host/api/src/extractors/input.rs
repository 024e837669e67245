//! Reading and validating what clients send: JSON bodies and query strings. Every problem is
//! collected with the field it concerns; the message is the first problem as a sentence.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, header};
use http_body_util::BodyExt;
use quarry_core::ErrorKind;
use serde_json::{Map, Value};

use crate::error::{ApiError, Detail, MAX_DETAILS, MAX_MESSAGE_CHARS, clip, detail};

/// The largest request body accepted.
pub(crate) const MAX_BODY_BYTES: usize = 1 << 20;

/// A request's body, a JSON object of at most `MAX` bytes. As an extractor it runs after the
/// handler's other extractors (after the access checks): 415 unless the body is declared as JSON,
/// 413 when it is over `MAX`, 400 when it is not a JSON object.
pub(crate) struct JsonObject<const MAX: usize = MAX_BODY_BYTES>(pub Map<String, Value>);

impl<S: Send + Sync, const MAX: usize> FromRequest<S> for JsonObject<MAX> {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Self, ApiError> {
        let (parts, body) = request.into_parts();
        json_object(&parts.headers, body, MAX).await.map(JsonObject)
    }
}

/// Reads a JSON object body of at most `max_bytes`.
async fn json_object(
    headers: &HeaderMap,
    body: Body,
    max_bytes: usize,
) -> Result<Map<String, Value>, ApiError> {
    let media_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(str::trim);
    if !media_type.is_some_and(|m| m.eq_ignore_ascii_case("application/json")) {
        return Err(ApiError::new(
            ErrorKind::UnsupportedMediaType,
            "the request body must be JSON, sent with Content-Type: application/json",
        ));
    }
    let too_large = || {
        ApiError::new(
            ErrorKind::PayloadTooLarge,
            format!("the request body is over the limit of {max_bytes} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_bytes as u64) {
        return Err(too_large());
    }
    let mut body = body;
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            let timed_out = e
                .into_inner()
                .downcast::<std::io::Error>()
                .is_ok_and(|e| e.kind() == std::io::ErrorKind::TimedOut);
            if timed_out {
                ApiError::new(
                    ErrorKind::RequestTimeout,
                    "the request body stopped arriving or took too long; send it whole, at once",
                )
            } else {
                ApiError::new(ErrorKind::Validation, "the request body could not be read")
            }
        })?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > max_bytes {
                return Err(too_large());
            }
            bytes.extend_from_slice(&data);
        }
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(ApiError::validation(
            format!(
                "the request body must be a JSON object, got {}",
                kind_of(&other)
            ),
            vec![detail("body", "must be a JSON object")],
        )),
        Err(e) => Err(ApiError::validation(
            format!("the request body is not valid JSON: {e}"),
            vec![detail("body", "must be valid JSON")],
        )),
    }
}

/// Problems found so far. At most [`MAX_DETAILS`] different ones are kept, each cut to a
/// readable length; the rest are only counted, so that an answer stays small whatever was sent
/// (200,000 unknown names in one request are one detail and a count).
#[derive(Default)]
pub(crate) struct Problems {
    message: Option<String>,
    details: Vec<Detail>,
    /// Problems found beyond those kept.
    more: usize,
}

impl Problems {
    /// Records a problem: `field`, a short `issue`, and the sentence for the message.
    pub(crate) fn add(
        &mut self,
        field: &str,
        issue: impl Into<String>,
        message: impl Into<String>,
    ) {
        let detail = detail(field, &issue.into());
        if self.details.contains(&detail) {
            return;
        }
        if self.details.len() >= MAX_DETAILS {
            self.more += 1;
            return;
        }
        self.message
            .get_or_insert_with(|| clip(&message.into(), MAX_MESSAGE_CHARS));
        self.details.push(detail);
    }

    /// Adds the problems found in a nested object.
    pub(crate) fn absorb(&mut self, other: Problems) {
        if self.message.is_none() {
            self.message = other.message;
        }
        for detail in other.details {
            self.add(&detail.field, detail.issue, "");
        }
        self.more += other.more;
    }

    /// `Ok` when nothing was found, else the validation error.
    pub(crate) fn finish(self) -> Result<(), ApiError> {
        let Some(mut message) = self.message else {
            return Ok(());
        };
        if self.more > 0 {
            message.push_str(&format!(" ({} more problem(s) not listed)", self.more));
        }
        Err(ApiError::validation(message, self.details))
    }
}

/// Reads the fields of a JSON object, recording problems.
pub(crate) struct Fields<'a> {
    object: &'a Map<String, Value>,
    /// Prepended to field names in problems (`update_time_filter.`).
    prefix: String,
    /// Problems found.
    pub problems: Problems,
}

impl<'a> Fields<'a> {
    /// The fields of `object`, named with `prefix` in problems.
    pub(crate) fn new(object: &'a Map<String, Value>, prefix: &str) -> Fields<'a> {
        Fields {
            object,
            prefix: prefix.to_owned(),
            problems: Problems::default(),
        }
    }

    fn name(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Records every field not in `allowed`.
    pub(crate) fn reject_unknown(&mut self, allowed: &[&str]) {
        for name in self.object.keys() {
            if !allowed.contains(&name.as_str()) {
                let field = self.name(name);
                self.problems.add(
                    &field,
                    format!("unknown field; allowed: {}", allowed.join(", ")),
                    format!(
                        "unknown field {field:?}; the allowed fields are {}",
                        allowed.join(", ")
                    ),
                );
            }
        }
    }

    /// Records `name` as missing when it is absent; `hint` completes "`name` is required".
    pub(crate) fn require(&mut self, name: &str, hint: &str) {
        if self.object.get(name).is_none() {
            let field = self.name(name);
            self.problems
                .add(&field, "required", format!("{field} is required{hint}"));
        }
    }

    /// The value of a field, if present.
    pub(crate) fn get(&self, name: &str) -> Option<&'a Value> {
        self.object.get(name)
    }

    /// An integer field in `min..=max` (an integral number such as `10.0` counts).
    pub(crate) fn integer(&mut self, name: &str, min: i64, max: i64) -> Option<i64> {
        let value = self.get(name)?;
        let number = value.as_i64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                .map(|f| f as i64)
        });
        let name = self.name(name);
        let range = format!("must be between {min} and {max}");
        let sentence = format!(
            "{name} must be an integer between {min} and {max}, got {}",
            shown(value)
        );
        match number {
            Some(n) if (min..=max).contains(&n) => Some(n),
            Some(_) => {
                self.problems.add(&name, range, sentence);
                None
            }
            None => {
                self.problems.add(&name, "must be an integer", sentence);
                None
            }
        }
    }

    /// A boolean field.
    pub(crate) fn boolean(&mut self, name: &str) -> Option<bool> {
        let value = self.get(name)?;
        let name = self.name(name);
        match value {
            Value::Bool(b) => Some(*b),
            other => {
                self.problems.add(
                    &name,
                    "must be true or false",
                    format!("{name} must be true or false, got {}", shown(other)),
                );
                None
            }
        }
    }

    /// A string field.
    pub(crate) fn string(&mut self, name: &str) -> Option<&'a str> {
        let value = self.get(name)?;
        let name = self.name(name);
        match value {
            Value::String(s) => Some(s),
            other => {
                self.problems.add(
                    &name,
                    "must be a string",
                    format!("{name} must be a string, got {}", shown(other)),
                );
                None
            }
        }
    }

    /// A string field with one of `allowed` values.
    pub(crate) fn choice(&mut self, name: &str, allowed: &[&str]) -> Option<&'a str> {
        let value = self.get(name)?;
        let name = self.name(name);
        let quoted: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
        match value.as_str() {
            Some(s) if allowed.contains(&s) => Some(s),
            _ => {
                self.problems.add(
                    &name,
                    format!("must be one of {}", quoted.join(", ")),
                    format!(
                        "{name} must be one of {}, got {}",
                        quoted.join(", "),
                        shown(value)
                    ),
                );
                None
            }
        }
    }

    /// A non-empty array of strings.
    pub(crate) fn string_list(&mut self, name: &str) -> Option<Vec<&'a str>> {
        let value = self.get(name)?;
        let name = self.name(name);
        let items = value.as_array();
        let strings: Option<Vec<&str>> =
            items.and_then(|items| items.iter().map(Value::as_str).collect());
        match strings {
            Some(list) if !list.is_empty() => Some(list),
            Some(_) => {
                self.problems.add(
                    &name,
                    "must not be empty; leave the field out to apply no filter",
                    format!("{name} must not be an empty array; leave it out to apply no filter"),
                );
                None
            }
            None => {
                self.problems.add(
                    &name,
                    "must be an array of strings",
                    format!("{name} must be an array of strings, got {}", shown(value)),
                );
                None
            }
        }
    }
}

/// Items of a list named in a message at most ("known: a, b, c and 12 more").
pub(crate) const MAX_LISTED: usize = 10;

/// `items` joined with ", ", at most [`MAX_LISTED`] of them, and how many more there are.
pub(crate) fn listed<T: AsRef<str>>(items: &[T]) -> String {
    let shown: Vec<&str> = items.iter().take(MAX_LISTED).map(AsRef::as_ref).collect();
    match items.len().saturating_sub(MAX_LISTED) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// A value as shown in messages: its JSON, cut to 60 characters.
pub(crate) fn shown(value: &Value) -> String {
    clip(&value.to_string(), 60)
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses a query string allowing only `allowed` parameters, each at most once.
pub(crate) fn query_params(
    raw: Option<&str>,
    allowed: &[&str],
) -> Result<BTreeMap<String, String>, ApiError> {
    let mut params = BTreeMap::new();
    let mut problems = Problems::default();
    for (name, value) in form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
        if !allowed.contains(&name.as_ref()) {
            let list = if allowed.is_empty() {
                "this endpoint takes none".to_owned()
            } else {
                format!("allowed: {}", allowed.join(", "))
            };
            problems.add(
                &name,
                format!("unknown query parameter; {list}"),
                format!("unknown query parameter {name:?}; {list}"),
            );
        } else if params.insert(name.to_string(), value.to_string()).is_some() {
            problems.add(
                &name,
                "given more than once",
                format!("query parameter {name:?} is given more than once"),
            );
        }
    }
    problems.finish().map(|()| params)
}

/// An integer query parameter in `min..=max`.
pub(crate) fn param_integer(
    params: &BTreeMap<String, String>,
    name: &str,
    min: u64,
    max: u64,
    problems: &mut Problems,
) -> Option<u64> {
    let raw = params.get(name)?;
    match raw.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Some(n),
        _ => {
            problems.add(
                name,
                format!("must be an integer between {min} and {max}"),
                format!("{name} must be an integer between {min} and {max}, got {raw:?}"),
            );
            None
        }
    }
}
