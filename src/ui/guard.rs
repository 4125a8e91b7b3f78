//! The limits every request runs under: a cap on requests in flight (the excess waits for a
//! slot up to the time limit, then gets 503), and a time limit on each request from its
//! first byte of body to its last byte of answer (408 past it, which also ends a client that
//! sends its body too slowly).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::extract::{Request, State as Extract};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;
use tokio::time::{timeout_at, Instant};

use super::error::ApiError;
use super::state::State;

/// Slots for requests in flight, the limits, and the host names a loopback server answers.
pub(crate) struct Guard {
    pub(crate) state: Arc<State>,
    slots: Arc<Semaphore>,
    /// On a loopback address, the names a request may be addressed to: a page of another
    /// site whose name resolves to 127.0.0.1 (DNS rebinding) is refused.
    hosts: Option<Vec<String>>,
}

impl Guard {
    pub(crate) fn new(state: Arc<State>, host: std::net::IpAddr) -> Guard {
        let slots = Arc::new(Semaphore::new(state.limits.max_requests));
        let hosts = host.is_loopback().then(|| {
            let own = match host {
                std::net::IpAddr::V6(ip) => format!("[{ip}]"),
                ip => ip.to_string(),
            };
            vec![
                "localhost".to_owned(),
                "127.0.0.1".to_owned(),
                "[::1]".to_owned(),
                own,
            ]
        });
        Guard {
            state,
            slots,
            hosts,
        }
    }

    /// Why a request addressed to `host` (its `Host` header) is not answered, if it is not.
    fn misaddressed(&self, host: Option<&str>) -> Option<ApiError> {
        let hosts = self.hosts.as_ref()?;
        let host = host.unwrap_or_default();
        // `name:port`, `[v6]:port`, or the name alone.
        let name = match host.rsplit_once(':') {
            Some((name, port))
                if !name.is_empty()
                    && port.bytes().all(|b| b.is_ascii_digit())
                    && !host.ends_with(']') =>
            {
                name
            }
            _ => host,
        };
        if hosts.iter().any(|h| h.eq_ignore_ascii_case(name)) {
            return None;
        }
        Some(ApiError::with_status(
            StatusCode::FORBIDDEN,
            format!(
                "Host `{}`: this server listens on a loopback address and answers only requests \
                 addressed to localhost or 127.0.0.1 (a page of another site must not read it)",
                host.escape_debug()
            ),
        ))
    }
}

/// Runs a request in a slot, within the time limit.
pub(crate) async fn limit(
    Extract(guard): Extract<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    let host = request.headers().get(axum::http::header::HOST);
    if let Some(refusal) = guard.misaddressed(host.and_then(|h| h.to_str().ok())) {
        return refusal.into_response();
    }
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
                "the request took longer than the time limit of {} s (a body sent too slowly, or too large a sweep); nothing was answered",
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
