//! An API error: the command line's message for the same input, as JSON (`{"error": ...}`),
//! with a 4xx status for anything the request got wrong.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// What went wrong with a request, and the status that says whose fault it was.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
}

impl ApiError {
    /// Bad input: the message the command line gives for it.
    pub(crate) fn bad(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    pub(crate) fn with_status(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    /// A library error, in the words `stepcost` prints after `error: `.
    pub(crate) fn from_error(error: impl Into<anyhow::Error>) -> ApiError {
        ApiError::bad(format!("{:#}", error.into()))
    }

    /// A flag's value that its parser refused, worded as clap words it on the command line.
    pub(crate) fn flag(flag: &str, value_name: &str, text: &str, why: &str) -> ApiError {
        ApiError::bad(format!(
            "invalid value '{text}' for '--{flag} <{value_name}>': {why}"
        ))
    }
}

impl From<crate::base::error::Error> for ApiError {
    fn from(error: crate::base::error::Error) -> ApiError {
        ApiError::from_error(error)
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(error: anyhow::Error) -> ApiError {
        ApiError::bad(format!("{error:#}"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message });
        (self.status, Json(body)).into_response()
    }
}
