//! The limits every request runs under, in order: who may ask ([`Gate`]: host, origin,
//! token, content type), its body read whole within the body limit and the body-read
//! timeout, and only then a slot among the requests in flight (the excess waits for one up
//! to the time limit, then gets 503) and the time limit from the read body to the answer
//! (408 past it). A client that trickles its body holds a connection, never a slot.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State as Extract};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;
use tokio::time::{timeout, timeout_at, Instant};

use super::error::ApiError;
use super::origin::{Access, Gate};
use super::state::State;

/// Slots for requests in flight, the limits, and who may ask.
pub(crate) struct Guard {
    pub(crate) state: Arc<State>,
    slots: Arc<Semaphore>,
    gate: Gate,
}

impl Guard {
    pub(crate) fn new(state: Arc<State>, host: std::net::IpAddr, access: &Access) -> Guard {
        let slots = Arc::new(Semaphore::new(state.limits.max_requests));
        Guard {
            state,
            slots,
            gate: Gate::new(host, access),
        }
    }

    /// The whole body: 413 past the body limit (at once when its `Content-Length` says so),
    /// 408 when it has not all arrived within the body-read timeout.
    async fn body(&self, body: Body, declared: Option<u64>) -> Result<Bytes, ApiError> {
        let limits = &self.state.limits;
        let limit = limits.body_bytes;
        let too_large = || {
            ApiError::with_status(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the request body is larger than the limit of {limit} bytes"),
            )
        };
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(too_large());
        }
        let read = async {
            let mut body = std::pin::pin!(body);
            // Room for what arrives, not for what a header promises: a client that declares
            // a megabyte and sends nothing must not have it reserved.
            let mut bytes = Vec::new();
            while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
                let frame = frame
                    .map_err(|e| ApiError::bad(format!("cannot read the request body: {e}")))?;
                if let Ok(data) = frame.into_data() {
                    if bytes.len() + data.len() > limit {
                        return Err(too_large());
                    }
                    bytes.extend_from_slice(&data);
                }
            }
            Ok(Bytes::from(bytes))
        };
        timeout(limits.body_timeout, read)
            .await
            .unwrap_or_else(|_| {
                Err(ApiError::with_status(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "the request body did not arrive within the body-read timeout of {} s (it \
                     was sent too slowly); nothing was done",
                        limits.body_timeout.as_secs_f64()
                    ),
                ))
            })
    }
}

/// Runs a request that may ask, its body read, in a slot, within the time limit.
pub(crate) async fn limit(
    Extract(guard): Extract<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(refusal) = guard.gate.refusal(&request) {
        return refusal.into_response();
    }
    let (parts, body) = request.into_parts();
    let declared = (parts.headers.get(header::CONTENT_LENGTH))
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let body = match guard.body(body, declared).await {
        Ok(body) => body,
        Err(refusal) => return refusal.into_response(),
    };
    let request = Request::from_parts(parts, Body::from(body));
    let limits = &guard.state.limits;
    let deadline = Instant::now() + limits.time_limit;
    let Ok(Ok(_slot)) = timeout_at(deadline, Arc::clone(&guard.slots).acquire_owned()).await else {
        return ApiError::with_status(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the server is busy: {} requests in flight, and none ended within the time limit of {} s; try again",
                limits.max_requests,
                limits.time_limit.as_secs_f64()
            ),
        )
        .into_response();
    };
    match timeout_at(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::with_status(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request took longer than the time limit of {} s (too large a sweep); nothing was answered",
                limits.time_limit.as_secs_f64()
            ),
        )
        .into_response(),
    }
}

/// A flag that a long job (a sweep) reads to stop: set when the request that started it is
/// dropped, at its time limit or when the client goes away.
#[derive(Default, Clone)]
pub(crate) struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub(crate) fn flag(&self) -> &AtomicBool {
        &self.0
    }
}

/// Sets its [`Cancel`] when dropped.
pub(crate) struct CancelOnDrop(pub(crate) Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0 .0.store(true, Ordering::Relaxed);
    }
}
