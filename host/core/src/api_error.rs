//! The API's error codes, and the one table that maps each kind of failure to its code and HTTP
//! status (`docs/api.md`, "Errors"). Every part of the service that answers with an error goes
//! through [`ErrorKind::code`] and [`ErrorKind::status`]; each crate's error says its kind
//! through [`ErrorCode`].

/// The `error.code` values of the API contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiCode {
    /// The key is missing, malformed, unknown, revoked or expired.
    Unauthorized,
    /// The request is malformed or out of range.
    RequestValidationFailed,
    /// The connector, document or route does not exist.
    ResourceNotFound,
    /// The integration's monthly quota is used up.
    QuotaExceeded,
    /// The user declined data sharing, or the connector is outside what was shared.
    DataSharingDeclined,
    /// Anything unexpected.
    InternalError,
}

impl ApiCode {
    /// The code as it appears in responses.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiCode::Unauthorized => "UNAUTHORIZED",
            ApiCode::RequestValidationFailed => "REQUEST_VALIDATION_FAILED",
            ApiCode::ResourceNotFound => "RESOURCE_NOT_FOUND",
            ApiCode::QuotaExceeded => "QUOTA_EXCEEDED",
            ApiCode::DataSharingDeclined => "DATA_SHARING_DECLINED",
            ApiCode::InternalError => "INTERNAL_ERROR",
        }
    }
}

/// Every kind of failure the API reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// No valid key.
    Unauthorized,
    /// Malformed JSON, wrong types, unknown fields, out-of-range values, bad path ids.
    Validation,
    /// A route that exists, with a method it does not accept.
    MethodNotAllowed,
    /// A body over the size limit.
    PayloadTooLarge,
    /// A body that is not JSON.
    UnsupportedMediaType,
    /// A `Range` that starts past the end of the file.
    RangeNotSatisfiable,
    /// A request body that stopped arriving, or took too long in all.
    RequestTimeout,
    /// An unknown connector, document, file or route.
    NotFound,
    /// Data sharing declined, or the connector is not shared with this integration.
    SharingDeclined,
    /// The monthly quota is used up.
    QuotaExceeded,
    /// A settings-page change without the page's CSRF token, or from another origin.
    CsrfRejected,
    /// Anything unexpected; details go to the log only.
    Internal,
    /// The database cannot be reached for a moment (a team database failing over to its
    /// standby): answered 503 with `Retry-After`, code `INTERNAL_ERROR`.
    Unavailable,
}

impl ErrorKind {
    /// The table: each kind's code and HTTP status. A `match`, so a kind without a row does not
    /// compile.
    fn row(self) -> (ApiCode, u16) {
        match self {
            ErrorKind::Unauthorized => (ApiCode::Unauthorized, 401),
            ErrorKind::Validation => (ApiCode::RequestValidationFailed, 400),
            ErrorKind::MethodNotAllowed => (ApiCode::RequestValidationFailed, 405),
            ErrorKind::PayloadTooLarge => (ApiCode::RequestValidationFailed, 413),
            ErrorKind::UnsupportedMediaType => (ApiCode::RequestValidationFailed, 415),
            ErrorKind::RangeNotSatisfiable => (ApiCode::RequestValidationFailed, 416),
            ErrorKind::RequestTimeout => (ApiCode::RequestValidationFailed, 408),
            ErrorKind::NotFound => (ApiCode::ResourceNotFound, 404),
            ErrorKind::SharingDeclined => (ApiCode::DataSharingDeclined, 403),
            ErrorKind::QuotaExceeded => (ApiCode::QuotaExceeded, 429),
            ErrorKind::CsrfRejected => (ApiCode::Unauthorized, 403),
            ErrorKind::Internal => (ApiCode::InternalError, 500),
            ErrorKind::Unavailable => (ApiCode::InternalError, 503),
        }
    }

    /// The API code of this kind.
    pub fn code(self) -> ApiCode {
        self.row().0
    }

    /// The HTTP status of this kind.
    pub fn status(self) -> u16 {
        self.row().1
    }
}

/// An error that knows which kind of API failure it is. Each crate's error type implements it
/// once, so an error travels to an answer with `?` (the API turns any `ErrorCode` error into its
/// answer) instead of being mapped by hand at each call.
pub trait ErrorCode {
    /// The kind of failure, which decides the answer's code and status. [`ErrorKind::Internal`]
    /// errors are logged in full and answered without detail; others are answered with their
    /// message.
    fn error_kind(&self) -> ErrorKind;
}

impl ErrorCode for crate::CoreError {
    fn error_kind(&self) -> ErrorKind {
        match self {
            crate::CoreError::InvalidId { .. } => ErrorKind::Validation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_answers_with_its_code_and_status() {
        assert_eq!(ErrorKind::PayloadTooLarge.status(), 413);
        assert_eq!(
            ErrorKind::PayloadTooLarge.code().as_str(),
            "REQUEST_VALIDATION_FAILED"
        );
        assert_eq!(ErrorKind::QuotaExceeded.status(), 429);
        assert_eq!(ErrorKind::CsrfRejected.code(), ApiCode::Unauthorized);
        assert_eq!(ErrorKind::Internal.status(), 500);
        assert_eq!(ErrorKind::Unavailable.status(), 503);
        assert_eq!(ErrorKind::Unavailable.code(), ApiCode::InternalError);
    }
}
