//! Who may ask, checked before a request's body is read: the `Host` it is addressed to (so
//! that a page of another site whose name resolves to this machine, DNS rebinding, is
//! refused), its `Origin` (absent, or this server's own: a page of another site may not
//! post to it), the access token when the server has one, and `Content-Type:
//! application/json` on every `POST` (a plain HTML form cannot send it). Every answer
//! carries the headers that keep the page out of other sites' frames.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use anyhow::{Context, Result};
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use super::error::ApiError;

/// The header an API request carries the server's access token in.
pub(crate) const TOKEN_HEADER: &str = "x-stepcost-token";

/// The page's own scripts, styles and requests only; no frame of another site may hold it.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src 'self' data:; \
     object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// What the server lets in beyond its own address: names it may be addressed by, and the
/// token API requests must carry.
#[derive(Debug, Clone, Default)]
pub(crate) struct Access {
    /// Host names (without port) a request may be addressed to, besides the defaults.
    pub allow_hosts: Vec<String>,
    /// The token every `/api/` request must carry in `X-Stepcost-Token`, if any.
    pub token: Option<String>,
}

/// A new random token: 128 bits from the system's generator, as 32 hex digits.
pub(crate) fn random_token() -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("cannot draw a random access token (give one with --token)")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The checks of [`Access`] for a server listening on one address.
pub(crate) struct Gate {
    loopback: bool,
    /// Names (lower case, IPv6 in brackets) a request may be addressed to; on an address
    /// that is not loopback, any IP address is accepted too.
    names: Vec<String>,
    /// Whether `--allow-host` named any.
    named: bool,
    token: Option<String>,
}

impl Gate {
    pub(crate) fn new(host: IpAddr, access: &Access) -> Gate {
        let mut names = vec!["localhost".to_owned()];
        if host.is_loopback() {
            names.extend(["127.0.0.1".to_owned(), "[::1]".to_owned(), bracketed(host)]);
        }
        names.extend(access.allow_hosts.iter().map(|h| h.to_ascii_lowercase()));
        Gate {
            loopback: host.is_loopback(),
            names,
            named: !access.allow_hosts.is_empty(),
            token: access.token.clone(),
        }
    }

    /// Why `request` is not answered, if it is not.
    pub(crate) fn refusal(&self, request: &Request) -> Option<ApiError> {
        let headers = request.headers();
        let text = |name| headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"));
        let host = text(header::HOST.as_str());
        if let Some(refusal) = self.misaddressed(host.unwrap_or_default()) {
            return Some(refusal);
        }
        if let Some(origin) = text(header::ORIGIN.as_str()) {
            if !same_origin(origin, host.unwrap_or_default()) {
                return Some(forbidden(format!(
                    "Origin `{}`: this server answers only its own page (http://{}) and \
                     requests with no Origin; a page of another site may not use it",
                    origin.escape_debug(),
                    host.unwrap_or_default().escape_debug()
                )));
            }
        }
        if request.uri().path().starts_with("/api/") {
            if let Some(refusal) = self.untokened(text(TOKEN_HEADER)) {
                return Some(refusal);
            }
        }
        if request.method() == Method::POST {
            return not_json(text(header::CONTENT_TYPE.as_str()));
        }
        None
    }

    fn misaddressed(&self, host: &str) -> Option<ApiError> {
        let name = split_host(host).map(|(name, _)| name.to_ascii_lowercase());
        let known = name.as_ref().is_some_and(|name| {
            self.names.contains(name) || (!self.loopback && is_ip_literal(name))
        });
        if known {
            return None;
        }
        let allowed = if self.loopback {
            "this server listens on a loopback address and answers only requests addressed to \
             localhost or 127.0.0.1"
        } else {
            "this server answers only requests addressed to an IP address, localhost"
        };
        let extra = if self.named {
            " or a name given with --allow-host"
        } else {
            ""
        };
        Some(forbidden(format!(
            "Host `{}`: {allowed}{extra} (a page of another site must not read it)",
            host.escape_debug()
        )))
    }

    fn untokened(&self, given: Option<&str>) -> Option<ApiError> {
        let token = self.token.as_ref()?;
        match given {
            None => Some(ApiError::with_status(
                StatusCode::UNAUTHORIZED,
                "this server requires its access token: send it in the `X-Stepcost-Token` \
                 header (the page takes it from the address printed at start, `?token=...`)",
            )),
            Some(given) if equal_in_constant_time(given.as_bytes(), token.as_bytes()) => None,
            Some(_) => Some(forbidden(
                "the `X-Stepcost-Token` header is not this server's access token",
            )),
        }
    }
}

/// A `POST` whose body is not declared JSON: 415, saying what to send.
fn not_json(content_type: Option<&str>) -> Option<ApiError> {
    let given = content_type.unwrap_or_default();
    let media = given.split(';').next().unwrap_or_default().trim();
    if media.eq_ignore_ascii_case("application/json") {
        return None;
    }
    let got = if content_type.is_some() {
        format!("`{}`", given.escape_debug())
    } else {
        "none".to_owned()
    };
    Some(ApiError::with_status(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        format!(
            "send the request as JSON, with the header `Content-Type: application/json` (the \
             request's Content-Type: {got})"
        ),
    ))
}

fn forbidden(message: impl Into<String>) -> ApiError {
    ApiError::with_status(StatusCode::FORBIDDEN, message)
}

/// An address as a `Host` header writes it: IPv6 in brackets.
fn bracketed(ip: IpAddr) -> String {
    match ip {
        IpAddr::V6(ip) => format!("[{ip}]"),
        IpAddr::V4(ip) => ip.to_string(),
    }
}

/// `name:port`, `[v6]:port`, `name` or `[v6]`: the name and the port, if the text is one.
fn split_host(host: &str) -> Option<(&str, Option<u16>)> {
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) if !host.ends_with(']') => (name, Some(port.parse().ok()?)),
        _ => (host, None),
    };
    let bare = name
        .strip_prefix('[')
        .map_or(Some(name), |v6| v6.strip_suffix(']'));
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"-._:".contains(&b);
    let ok = !name.is_empty() && bare.is_some_and(|n| !n.is_empty() && n.bytes().all(plain));
    ok.then_some((name, port))
}

/// An IPv4 address, or an IPv6 one in brackets: no DNS name, so nothing to rebind.
fn is_ip_literal(name: &str) -> bool {
    match name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
        Some(v6) => v6.parse::<Ipv6Addr>().is_ok(),
        None => name.parse::<Ipv4Addr>().is_ok(),
    }
}

/// Whether `origin` is `http://` and the very host (and port, 80 when none) the request was
/// addressed to: the origin of a page this server served.
fn same_origin(origin: &str, host: &str) -> bool {
    let Some(scheme) = origin.get(..7) else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("http://") {
        return false;
    }
    match (split_host(&origin[7..]), split_host(host)) {
        (Some((a, a_port)), Some((b, b_port))) => {
            a.eq_ignore_ascii_case(b) && a_port.unwrap_or(80) == b_port.unwrap_or(80)
        }
        _ => false,
    }
}

/// Compares every byte whatever the first difference, so that the time taken does not tell
/// how much of a guessed token was right (only whether its length was).
fn equal_in_constant_time(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// Adds the headers every answer carries: no framing by another site, the page's content
/// policy, no guessing of content types, and no address (with its token) sent on.
pub(crate) async fn headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_split_into_name_and_port() {
        assert_eq!(
            split_host("localhost:8080"),
            Some(("localhost", Some(8080)))
        );
        assert_eq!(split_host("[::1]:80"), Some(("[::1]", Some(80))));
        assert_eq!(split_host("[::1]"), Some(("[::1]", None)));
        assert_eq!(split_host("10.0.0.2"), Some(("10.0.0.2", None)));
        for bad in ["", ":80", "a:b", "a b", "[::1", "a/b:80", "[]:1", "x:99999"] {
            assert_eq!(split_host(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_the_servers_own_origin_is_the_same() {
        assert!(same_origin("http://localhost:8080", "localhost:8080"));
        assert!(same_origin("HTTP://LocalHost", "localhost:80"));
        assert!(!same_origin("https://localhost:8080", "localhost:8080"));
        assert!(!same_origin("http://localhost:8081", "localhost:8080"));
        assert!(!same_origin("http://evil.example", "evil.example:80x"));
        assert!(!same_origin("null", "localhost:8080"));
        assert!(!same_origin("http://127.0.0.1:8080", "localhost:8080"));
    }

    #[test]
    fn ip_literals_are_told_from_names() {
        assert!(is_ip_literal("192.168.1.20"));
        assert!(is_ip_literal("[fe80::1]"));
        assert!(!is_ip_literal("evil.example"));
        assert!(!is_ip_literal("fe80::1"));
        assert!(!is_ip_literal("1.2.3.4.nip.io"));
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(equal_in_constant_time(b"abc", b"abc"));
        assert!(!equal_in_constant_time(b"abc", b"abd"));
        assert!(!equal_in_constant_time(b"abc", b"abcd"));
        let token = random_token().unwrap();
        assert_eq!(token.len(), 32);
        assert_ne!(token, random_token().unwrap());
    }
}
