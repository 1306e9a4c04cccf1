//! A local HTTP gateway: what the IC's HTTP gateway (the boundary nodes behind
//! `https://<canister-id>.icp0.io`) does for a canister's `http_request`, over any [`Backend`].
//!
//! - the request goes to the canister's `http_request` as a query from the anonymous principal
//!   (`certificate_version = opt 2`); an answer with `upgrade = opt true` is asked again as the
//!   update `http_request_update`, whose answer is final (it went through consensus);
//! - the answer's status, headers and body are what the client gets; a rejected call is a 502
//!   with the reject in a text body, a request body over the IC's ingress limit a 413;
//! - a query answer is checked as `icp0.io` checks it ([`Domain::Certified`]): it must carry an
//!   `IC-Certificate` header whose certificate holds, as the canister's certified data, the root
//!   hash of the header's tree, and whose tree holds the expression of `IC-CertificateExpression`
//!   at its `expr_path`. Only `no_certification` expressions (answers the canister states are
//!   not certified) are accepted; anything else is refused with 503, as a gateway that cannot
//!   verify it does. The local host signs no certificate (`docs/local-ic.md`), so the BLS
//!   signature is the one part not checked. [`Domain::Raw`] skips the check, as `raw.icp0.io`
//!   does.
//!
//! [`Gateway::serve_until`] puts it on a TCP port (tiny_http) so that real HTTP clients (the MCP
//! SDK's Streamable HTTP transport) reach the canister.

use crate::backend::{Backend, BackendError};
use candid::{CandidType, Decode, Encode, Principal};
use ic_certification::{Certificate, HashTree, LookupResult};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::time::Duration;

/// The IC's HTTP gateway request (`HttpRequest` of the HTTP gateway protocol).
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    #[serde(with = "serde_bytes")]
    pub body: Vec<u8>,
    pub certificate_version: Option<u16>,
}

/// The canister's answer (`HttpResponse`; no streaming: the tool host never streams).
#[derive(CandidType, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    pub status_code: u16,
    pub headers: Vec<(String, String)>,
    #[serde(with = "serde_bytes")]
    pub body: Vec<u8>,
    pub upgrade: Option<bool>,
}

/// What the client gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The answer came from `http_request_update` (through consensus).
    pub via_update: bool,
}

impl Reply {
    /// A header's value, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn plain(status: u16, message: String, via_update: bool) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "text/plain; charset=utf-8".into())],
            body: message.into_bytes(),
            via_update,
        }
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Which domain the client used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// `<id>.icp0.io`: query answers are verified.
    Certified,
    /// `<id>.raw.icp0.io`: answers are passed on unverified.
    Raw,
}

/// The IC's ingress message limit: a request body the gateway cannot pass on whole.
pub const MAX_REQUEST_BODY: usize = 2 * 1024 * 1024;

#[derive(Clone, Copy, Debug)]
pub struct Gateway {
    pub canister: Principal,
    pub domain: Domain,
}

impl Gateway {
    pub fn new(canister: Principal) -> Self {
        Gateway {
            canister,
            domain: Domain::Certified,
        }
    }

    pub fn raw(canister: Principal) -> Self {
        Gateway {
            canister,
            domain: Domain::Raw,
        }
    }

    /// A POST of a JSON body to `path`, with these headers besides `content-type` and `accept`.
    pub fn post_json(
        &self,
        b: &mut dyn Backend,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Reply {
        let mut all = vec![
            ("content-type".to_string(), "application/json".to_string()),
            (
                "accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
        ];
        all.extend(headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self.forward(b, "POST", path, all, body.as_bytes().to_vec())
    }

    /// One request, as the IC's HTTP gateway handles it.
    pub fn forward(
        &self,
        b: &mut dyn Backend,
        method: &str,
        url: &str,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> Reply {
        if body.len() > MAX_REQUEST_BODY {
            return Reply::plain(
                413,
                format!(
                    "request body of {} bytes is over the IC's {MAX_REQUEST_BODY}-byte ingress limit",
                    body.len()
                ),
                false,
            );
        }
        let request = HttpRequest {
            method: method.to_string(),
            url: url.to_string(),
            headers,
            body,
            certificate_version: Some(2),
        };
        let arg = match Encode!(&request) {
            Ok(a) => a,
            Err(x) => return Reply::plain(500, format!("encoding the request: {x}"), false),
        };
        let anonymous = Principal::anonymous();
        let answer = match b.query(self.canister, anonymous, "http_request", arg.clone()) {
            Ok(bytes) => bytes,
            Err(x) => return rejected("http_request", x, false),
        };
        let response = match Decode!(&answer, HttpResponse) {
            Ok(r) => r,
            Err(x) => return Reply::plain(502, format!("http_request's answer: {x}"), false),
        };
        if response.upgrade == Some(true) {
            let answer = match b.update(self.canister, anonymous, "http_request_update", arg) {
                Ok(bytes) => bytes,
                Err(x) => return rejected("http_request_update", x, true),
            };
            return match Decode!(&answer, HttpResponse) {
                Ok(r) => Reply {
                    status: r.status_code,
                    headers: r.headers,
                    body: r.body,
                    via_update: true,
                },
                Err(x) => Reply::plain(502, format!("http_request_update's answer: {x}"), true),
            };
        }
        if self.domain == Domain::Certified {
            if let Err(why) = verify(self.canister, url, &response) {
                return Reply::plain(503, format!("response verification failed: {why}"), false);
            }
        }
        Reply {
            status: response.status_code,
            headers: response.headers,
            body: response.body,
            via_update: false,
        }
    }

    /// Serves HTTP on `server` until `done` says so, checking it at least every 50 ms.
    /// Requests are handled one at a time, in the caller's thread (the backend is not shared).
    pub fn serve_until(
        &self,
        b: &mut dyn Backend,
        server: &tiny_http::Server,
        mut done: impl FnMut() -> bool,
    ) -> std::io::Result<u64> {
        let mut served = 0;
        while !done() {
            let Some(mut request) = server.recv_timeout(Duration::from_millis(50))? else {
                continue;
            };
            let method = request.method().as_str().to_string();
            let url = request.url().to_string();
            let headers: Vec<(String, String)> = request
                .headers()
                .iter()
                .map(|h| (h.field.as_str().as_str().to_string(), h.value.to_string()))
                .collect();
            let mut body = Vec::new();
            // One byte more than the limit, so that an oversized body is told from a full one.
            let read = request
                .as_reader()
                .take(MAX_REQUEST_BODY as u64 + 1)
                .read_to_end(&mut body);
            let reply = match read {
                Ok(_) => self.forward(b, &method, &url, headers, body),
                Err(x) => Reply::plain(400, format!("reading the request body: {x}"), false),
            };
            let mut response =
                tiny_http::Response::from_data(reply.body).with_status_code(reply.status);
            for (k, v) in &reply.headers {
                if let Ok(h) = tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()) {
                    response.add_header(h);
                }
            }
            // A client that went away is not the gateway's failure.
            let _ = request.respond(response);
            served += 1;
        }
        Ok(served)
    }
}

fn rejected(method: &str, x: BackendError, via_update: bool) -> Reply {
    Reply::plain(502, format!("{method} was rejected: {x}"), via_update)
}

/// The `IC-Certificate` header's fields: `certificate=:<b64>:, tree=:<b64>:, expr_path=:<b64>:,
/// version=2` (the HTTP gateway protocol's response verification, version 2).
struct CertificateFields {
    certificate: Vec<u8>,
    tree: Vec<u8>,
    expr_path: Vec<u8>,
}

fn certificate_fields(value: &str) -> Result<CertificateFields, String> {
    use data_encoding::BASE64;
    let mut certificate = None;
    let mut tree = None;
    let mut expr_path = None;
    let mut version = None;
    for part in value.split(',') {
        let Some((name, v)) = part.trim().split_once('=') else {
            return Err(format!("IC-Certificate field {part:?} has no value"));
        };
        let bytes = |v: &str| {
            let inner = v
                .strip_prefix(':')
                .and_then(|v| v.strip_suffix(':'))
                .ok_or_else(|| format!("IC-Certificate {name} is not :base64:"))?;
            BASE64
                .decode(inner.as_bytes())
                .map_err(|x| format!("IC-Certificate {name}: {x}"))
        };
        match name {
            "certificate" => certificate = Some(bytes(v)?),
            "tree" => tree = Some(bytes(v)?),
            "expr_path" => expr_path = Some(bytes(v)?),
            "version" => version = Some(v.to_string()),
            _ => {}
        }
    }
    if version.as_deref() != Some("2") {
        return Err(format!(
            "IC-Certificate version {version:?}: only version 2 is verified here"
        ));
    }
    Ok(CertificateFields {
        certificate: certificate.ok_or("IC-Certificate has no certificate")?,
        tree: tree.ok_or("IC-Certificate has no tree")?,
        expr_path: expr_path.ok_or("IC-Certificate has no expr_path")?,
    })
}

/// The expression of an answer its canister states is not certified, as DFINITY's
/// `ic-http-certification` writes it (`DefaultCelBuilder::skip_certification`).
const SKIP_EXPRESSION: &str = "default_certification(ValidationArgs{no_certification:Empty{}})";

/// `expr_path` (`http_expr`, the URL's segments, then `<$>` for exactly that path or `<*>` for
/// all under it) names the request's path.
fn covers(expr_path: &[String], url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let Some(("http_expr", rest)) = expr_path.split_first().map(|(a, r)| (a.as_str(), r)) else {
        return false;
    };
    let Some((last, named)) = rest.split_last() else {
        return false;
    };
    let named: Vec<&str> = named.iter().map(String::as_str).collect();
    match last.as_str() {
        "<$>" => named == segments,
        // `wildcard("")` is `http_expr/<*>`: every path; `wildcard("/a")` is `http_expr/a/<*>`.
        "<*>" => {
            let named: Vec<&str> = named.into_iter().filter(|s| !s.is_empty()).collect();
            segments.len() >= named.len() && segments[..named.len()] == named[..]
        }
        _ => false,
    }
}

/// Verifies a query answer (but the certificate's signature, see the module's comment).
pub fn verify(canister: Principal, url: &str, response: &HttpResponse) -> Result<(), String> {
    let value = header(&response.headers, "ic-certificate")
        .ok_or("the answer has no IC-Certificate header (an uncertified query answer)")?;
    let CertificateFields {
        certificate,
        tree,
        expr_path,
    } = certificate_fields(value)?;
    let certificate: Certificate =
        serde_cbor::from_slice(&certificate).map_err(|x| format!("certificate: {x}"))?;
    let tree: HashTree = serde_cbor::from_slice(&tree).map_err(|x| format!("tree: {x}"))?;
    let certified = match certificate.tree.lookup_path(
        [
            b"canister".as_slice(),
            canister.as_slice(),
            b"certified_data",
        ]
        .iter(),
    ) {
        LookupResult::Found(v) => v.to_vec(),
        other => return Err(format!("the certificate has no certified data: {other:?}")),
    };
    if certified != tree.digest().to_vec() {
        return Err("the tree's root hash is not the canister's certified data".into());
    }
    let expr_path: Vec<String> =
        serde_cbor::from_slice(&expr_path).map_err(|x| format!("expr_path: {x}"))?;
    if !covers(&expr_path, url) {
        return Err(format!("expr_path {expr_path:?} is not a path of {url}"));
    }
    let expression = header(&response.headers, "ic-certificateexpression")
        .ok_or("the answer has no IC-CertificateExpression header")?;
    let compact: String = expression.chars().filter(|c| !c.is_whitespace()).collect();
    if compact != SKIP_EXPRESSION {
        return Err(format!(
            "expression {expression:?}: this gateway verifies only no_certification answers"
        ));
    }
    let expr_hash = Sha256::digest(expression.as_bytes());
    let mut path: Vec<&[u8]> = expr_path.iter().map(|s| s.as_bytes()).collect();
    path.push(expr_hash.as_slice());
    match tree.lookup_path(path.iter()) {
        LookupResult::Found(_) => Ok(()),
        other => Err(format!(
            "the tree does not hold the expression at {expr_path:?}: {other:?}"
        )),
    }
}
