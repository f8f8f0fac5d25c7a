//! What every request of a route says besides where it goes: its method,
//! the headers a user adds and its body, checked once when made (a method
//! that is an RFC 9110 token, `Name: value` headers whose name is a token
//! and whose value holds no control byte), so that every protocol can write
//! it as it is. The bytes themselves are the protocol's (`http1::request`).
//!
//! Headers the client writes itself are not the user's to give twice: a
//! `Host` header replaces the URL's authority (as curl and oha do: name-based
//! virtual hosts behind a loopback address); `Content-Length` and
//! `Transfer-Encoding` (written from the body) and `Connection` (the engine
//! keeps its connections alive; churn is `--requests-per-connection`) are
//! refused.

use thiserror::Error;

/// A request's method, added headers and body, checked ([`Request::new`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    method: String,
    host: Option<String>,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
}

impl Default for Request {
    fn default() -> Self {
        Self::get()
    }
}

/// Why a request was refused, by the part that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RequestError {
    /// The method is empty or holds a byte no RFC 9110 token may.
    #[error("method '{0}' is not an HTTP method (letters, digits and !#$%&'*+-.^_`|~, no space)")]
    Method(String),
    /// `CONNECT` asks for a tunnel, not an answer to count.
    #[error("method CONNECT opens a tunnel: there is no answer to load")]
    Connect,
    /// A header without a colon.
    #[error("header '{0}' has no colon: write it 'Name: value'")]
    NoColon(String),
    /// A header name that is empty or not a token.
    #[error("header '{0}': the name before the colon is not a header name (no space, no control byte)")]
    Name(String),
    /// A value with a control byte (a line break would start another header).
    #[error("header '{0}': its value holds a control byte (a line break, NUL, ...)")]
    Value(String),
    /// A header the client writes itself.
    #[error("header '{name}' is written by the client: {why}")]
    Reserved {
        /// The name, as given.
        name: String,
        /// What the client writes instead.
        why: &'static str,
    },
    /// A second `Host` header.
    #[error("header 'Host' given twice: a request has one Host")]
    TwoHosts,
    /// A connection-specific field, which an HTTP/2 request must not carry
    /// (RFC 9113 section 8.2.2: the request would be malformed).
    #[error("header '{0}' is specific to an HTTP/1.1 connection: an HTTP/2 request must not carry it (RFC 9113 8.2.2)")]
    ConnectionSpecific(String),
}

/// RFC 9110 section 5.6.2's `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_token(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(is_tchar)
}

/// Methods whose request carries a body by definition: without one, they
/// are sent with `Content-Length: 0` (RFC 9110 section 8.6).
const BODY_METHODS: [&str; 3] = ["POST", "PUT", "PATCH"];

impl Request {
    /// A `GET` with no added header and no body: what the suite sends.
    pub fn get() -> Self {
        Self { method: "GET".to_owned(), host: None, headers: Vec::new(), body: None }
    }

    /// `method` with `headers` (each `Name: value`, in order) and `body`.
    ///
    /// # Errors
    /// [`RequestError`]: a method that is not a token or is `CONNECT`; a
    /// header without a colon, with a name that is not a token or a value
    /// with a control byte; `Content-Length`, `Transfer-Encoding` or
    /// `Connection`; `Host` twice.
    pub fn new(method: &str, headers: &[String], body: Option<Vec<u8>>) -> Result<Self, RequestError> {
        if !is_token(method) {
            return Err(RequestError::Method(method.to_owned()));
        }
        if method.eq_ignore_ascii_case("CONNECT") {
            return Err(RequestError::Connect);
        }
        let mut request = Self { method: method.to_owned(), host: None, headers: Vec::new(), body };
        for text in headers {
            let (name, value) = parse_header(text)?;
            let reserved = |why| Err(RequestError::Reserved { name: name.clone(), why });
            match name.to_ascii_lowercase().as_str() {
                "host" if request.host.is_some() => return Err(RequestError::TwoHosts),
                "host" => request.host = Some(value),
                "content-length" | "transfer-encoding" => {
                    return reserved("the body given (--body, -D) is sent with its Content-Length");
                }
                "connection" => return reserved("connections are kept alive; --requests-per-connection churns them"),
                _ => request.headers.push((name, value)),
            }
        }
        Ok(request)
    }

    /// This request as HTTP/2 may carry it: none of the connection-specific
    /// fields of RFC 9113 section 8.2.2 (`Keep-Alive`, `Proxy-Connection`,
    /// `Upgrade`, and `TE` other than `trailers`; `Connection` and
    /// `Transfer-Encoding` are refused for both protocols by [`Request::new`]).
    ///
    /// # Errors
    /// [`RequestError::ConnectionSpecific`] naming the first such header.
    pub fn check_http2(&self) -> Result<(), RequestError> {
        let specific = |(name, value): &&(String, String)| match name.to_ascii_lowercase().as_str() {
            "keep-alive" | "proxy-connection" | "upgrade" => true,
            "te" => !value.trim().eq_ignore_ascii_case("trailers"),
            _ => false,
        };
        match self.headers.iter().find(specific) {
            Some((name, value)) => Err(RequestError::ConnectionSpecific(format!("{name}: {value}"))),
            None => Ok(()),
        }
    }

    /// The method, as given (methods are case-sensitive).
    pub fn method(&self) -> &str {
        &self.method
    }

    /// A `Host` header given to replace the URL's authority.
    pub fn host(&self) -> Option<&str> {
        self.host.as_deref()
    }

    /// The added headers, in order (without `Host`).
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// The body, if one was given (it may be empty).
    pub fn body(&self) -> Option<&[u8]> {
        self.body.as_deref()
    }

    /// The length its `Content-Length` says: the body's, 0 for a method
    /// that carries a body and has none, `None` when it has no such header.
    pub fn content_length(&self) -> Option<usize> {
        match &self.body {
            Some(body) => Some(body.len()),
            None => BODY_METHODS.contains(&self.method.as_str()).then_some(0),
        }
    }

    /// A `HEAD`: its answers have no body.
    pub fn is_head(&self) -> bool {
        self.method == "HEAD"
    }

    /// The request the route table loads a route with: its method, and a
    /// body with its `Content-Type` (`common::RouteId::request`).
    pub fn of_table(ask: common::RouteRequest) -> Self {
        if ask.content_type.is_none() && ask.body.is_empty() && ask.method == "GET" {
            return Self::get();
        }
        let headers = ask.content_type.map(|t| vec![("Content-Type".to_owned(), t.to_owned())]).unwrap_or_default();
        Self { method: ask.method.to_owned(), host: None, headers, body: Some(ask.body.to_vec()) }
    }
}

/// `Name: value` as a name (a token) and a value (its surrounding spaces
/// and tabs trimmed, no control byte but a tab).
///
/// # Errors
/// No colon, a name that is not a token, a control byte in the value.
fn parse_header(text: &str) -> Result<(String, String), RequestError> {
    let (name, value) = text.split_once(':').ok_or_else(|| RequestError::NoColon(text.to_owned()))?;
    if !is_token(name) {
        return Err(RequestError::Name(text.to_owned()));
    }
    let value = value.trim_matches([' ', '\t']);
    if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err(RequestError::Value(text.escape_debug().to_string()));
    }
    Ok((name.to_owned(), value.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(list: &[&str]) -> Vec<String> {
        list.iter().map(|&h| h.to_owned()).collect()
    }

    #[test]
    fn headers_are_split_at_the_first_colon_and_trimmed() {
        let r = Request::new("POST", &headers(&["Authorization: Bearer a:b ", "X-Empty:", "X-Tab:\tv"]), None).unwrap();
        let got: Vec<(&str, &str)> = r.headers().iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        assert_eq!(got, [("Authorization", "Bearer a:b"), ("X-Empty", ""), ("X-Tab", "v")]);
        assert_eq!(r.content_length(), Some(0), "a POST without a body says so");
        assert_eq!(Request::new("GET", &[], None).unwrap().content_length(), None);
        assert_eq!(Request::new("DELETE", &[], Some(b"x".to_vec())).unwrap().content_length(), Some(1));
        assert_ne!(Request::new("GET", &headers(&["A: b"]), None).unwrap(), Request::get());
        // The table's requests: a plain GET, or a POST with its body's type.
        assert_eq!(Request::of_table(common::RouteId::Plaintext.request()), Request::get());
        let form = Request::of_table(common::RouteId::ExtractForm.request());
        let typed = headers(&["Content-Type: application/x-www-form-urlencoded"]);
        assert_eq!(form, Request::new("POST", &typed, Some(b"device=sensor-0042&reading=7".to_vec())).unwrap());
        assert!(Request::new("HEAD", &[], None).unwrap().is_head());
    }

    #[test]
    fn host_replaces_and_the_client_s_own_headers_are_refused() {
        let r = Request::new("GET", &headers(&["host: api.example"]), None).unwrap();
        assert_eq!((r.host(), r.headers().len()), (Some("api.example"), 0));
        let err = |m: &str, h: &[&str]| Request::new(m, &headers(h), None).unwrap_err();
        assert_eq!(err("GET", &["Host: a", "Host: b"]), RequestError::TwoHosts);
        for name in ["Content-Length", "transfer-encoding", "CONNECTION"] {
            assert!(
                matches!(err("GET", &[&format!("{name}: 1")]), RequestError::Reserved { name: n, .. } if n == name)
            );
        }
        assert_eq!(err("GET", &["X-Token abc"]), RequestError::NoColon("X-Token abc".to_owned()));
        assert_eq!(err("GET", &[": v"]), RequestError::Name(": v".to_owned()));
        assert_eq!(err("GET", &["X A: v"]), RequestError::Name("X A: v".to_owned()));
        assert!(matches!(err("GET", &["X: a\r\nEvil: 1"]), RequestError::Value(_)));
        assert_eq!(err("GET POST", &[]), RequestError::Method("GET POST".to_owned()));
        assert_eq!(err("", &[]), RequestError::Method(String::new()));
        assert_eq!(err("connect", &[]), RequestError::Connect);
        assert_eq!(Request::new("purge", &[], None).unwrap().method(), "purge", "as given");
    }

    #[test]
    fn http2_refuses_the_connection_specific_fields_http1_allows() {
        let request = |h: &[&str]| Request::new("GET", &headers(h), None).unwrap();
        for field in ["Keep-Alive: timeout=5", "upgrade: websocket", "Proxy-Connection: keep-alive", "TE: gzip"] {
            let refused = request(&["X-A: 1", field]).check_http2();
            assert_eq!(refused, Err(RequestError::ConnectionSpecific(field.to_owned())), "{field}");
        }
        // `TE: trailers` is HTTP/2's own; any other field passes.
        assert_eq!(request(&["TE: trailers", "X-Keep: alive", "Accept: */*"]).check_http2(), Ok(()));
        let said = RequestError::ConnectionSpecific("TE: gzip".into()).to_string();
        assert_eq!(
            said,
            "header 'TE: gzip' is specific to an HTTP/1.1 connection: an HTTP/2 request must not carry it (RFC 9113 8.2.2)"
        );
    }
}
