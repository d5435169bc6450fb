//! One model endpoint: the cassette first, then (unless offline) the network through an
//! injected `Transport`, with the count_tokens client's retry policy: 429 waits for
//! `retry-after` (at most [`RETRY_AFTER_CEILING`]), 408, 5xx and transient transport failures
//! back off exponentially (1 s, 2 s, 4 s …), at most [`MAX_ATTEMPTS`] attempts; 401/403, every
//! other 4xx, 501, 505 and failures no retry mends (a bad URL, an answer over the 1 MiB body
//! limit, TLS) fail at once. Sleep and clock are injected, so tests wait
//! for nothing.

use std::time::Duration;

use serde_json::Value;

use super::cassette::{self, Cassette, Entry};
use super::provider::Provider;
use crate::counter::api::Transport;

pub const MAX_ATTEMPTS: usize = 5;
/// The longest `retry-after` honoured.
pub const RETRY_AFTER_CEILING: Duration = Duration::from_secs(120);

/// Why an exchange could not be had.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LiveError {
    #[error(
        "live: the cassette {cassette} has no answer for this request (model {model:?}, run {run}) and {why}; {holds}; record it by running online"
    )]
    NotRecorded {
        cassette: String,
        model: String,
        run: u32,
        why: String,
        /// What the cassette does hold (its providers, models and runs).
        holds: String,
    },
    #[error("live: {provider} answered {message}; the answer is not recorded and the run stops")]
    OutOfRange { provider: Provider, message: String },
    #[error("live: {provider} refused the key (HTTP {status}): {message}; check {var}")]
    Auth {
        provider: Provider,
        status: u16,
        message: String,
        var: &'static str,
    },
    #[error("live: {provider} rejected the request (HTTP {status}): {message}")]
    Rejected {
        provider: Provider,
        status: u16,
        message: String,
    },
    #[error("live: no answer from {url} after {attempts} attempts: {last}")]
    GaveUp {
        url: String,
        attempts: usize,
        last: String,
    },
    #[error("live: {provider} answered with a body that is not JSON (HTTP 200): {body}")]
    NotJson { provider: Provider, body: String },
    #[error("live: {url} failed in a way no retry mends: {message}")]
    Unrecoverable { url: String, message: String },
    #[error("live: the scorer failed: {0}")]
    Scorer(String),
    #[error("live: {provider}'s answer cannot be read: {message}")]
    Unreadable { provider: Provider, message: String },
}

/// The provider's error message in a body (`{"error": {"message"}}`, `{"error": "..."}`,
/// `{"detail": ...}`), else the body's first 300 characters.
pub fn error_message(body: &str) -> String {
    let v: Option<Value> = serde_json::from_str(body).ok();
    let found = v.as_ref().and_then(|v| {
        let e = v.get("error").or_else(|| v.get("detail"))?;
        Some(match e {
            Value::String(s) => s.clone(),
            Value::Object(_) => e
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| e.to_string(), str::to_string),
            other => other.to_string(),
        })
    });
    found.unwrap_or_else(|| body.chars().take(300).collect())
}

/// Whether a transport failure (ureq's message) fails the same way on every attempt: a bad
/// URL, an answer over the body limit, a redirect, a TLS or certificate refusal. Timeouts,
/// resets and refused connections are retried.
fn deterministic(e: &str) -> bool {
    const SAME_EVERY_TIME: [&str; 11] = [
        "bad uri:",
        "http:",
        "the response body is larger than request limit",
        "response header is too big",
        "too many redirects",
        "redirect failed",
        "invalid proxy url",
        "configured for https only",
        "TLS required",
        "rustls:",
        "PEM:",
    ];
    SAME_EVERY_TIME.iter().any(|p| e.starts_with(p))
}

/// A recorded or fresh answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    pub response: Value,
    pub latency_ms: f64,
    /// Answered from the cassette.
    pub replayed: bool,
}

pub type Sleep = Box<dyn Fn(Duration) + Send + Sync>;
pub type Clock = Box<dyn Fn() -> Duration + Send + Sync>;

pub struct Endpoint {
    pub provider: Provider,
    pub base_url: String,
    /// Never printed, never written (the cassette stores no headers).
    key: Option<String>,
    pub offline: bool,
    /// Where the cassette lives, for messages.
    pub cassette_path: String,
    pub cassette: Cassette,
    transport: Box<dyn Transport>,
    sleep: Sleep,
    clock: Clock,
    /// Keys of every exchange of this run (the cassette keeps only these when re-recorded).
    pub used: std::collections::BTreeSet<String>,
    pub sent: usize,
    pub replayed: usize,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("key", &self.key.as_ref().map(|_| "(set)"))
            .field("offline", &self.offline)
            .finish()
    }
}

impl Endpoint {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        provider: Provider,
        base_url: &str,
        key: Option<String>,
        offline: bool,
        cassette_path: String,
        cassette: Cassette,
        transport: Box<dyn Transport>,
        sleep: Sleep,
        clock: Clock,
    ) -> Endpoint {
        Endpoint {
            provider,
            base_url: base_url.trim_end_matches('/').to_string(),
            key: key.filter(|k| !k.is_empty()),
            offline,
            cassette_path,
            cassette,
            transport,
            sleep,
            clock,
            used: std::collections::BTreeSet::new(),
            sent: 0,
            replayed: 0,
        }
    }

    /// Whether requests to this endpoint need a key: the provider's own host does, a local or
    /// third-party server given by `--base-url` may not.
    fn needs_key(&self) -> bool {
        self.base_url == self.provider.default_base_url().trim_end_matches('/')
    }

    /// The answer to `body` in run `run`: recorded, or sent and recorded.
    pub fn exchange(
        &mut self,
        run: u32,
        body: &Value,
        provider_search: bool,
    ) -> Result<Exchange, LiveError> {
        let body = cassette::canonical(body);
        let key = cassette::key(self.provider, run, &body);
        self.used.insert(key.clone());
        if let Some(e) = self.cassette.get(&key) {
            self.replayed += 1;
            return Ok(Exchange {
                response: e.response.clone(),
                latency_ms: e.latency_ms,
                replayed: true,
            });
        }
        let why = if self.offline {
            Some("--offline is set".to_string())
        } else if self.key.is_none() && self.needs_key() {
            Some(format!("{} is not set", self.provider.key_var()))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(LiveError::NotRecorded {
                cassette: self.cassette_path.clone(),
                model: body
                    .get("model")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                run,
                why,
                holds: self.cassette.holdings(),
            });
        }
        let text = body.to_string();
        let (response, latency_ms) = self.post_with_retries(&text, provider_search)?;
        // A count no reader can sum is refused before it is kept: the cassette stays replayable.
        if let Err((_, message)) = self.provider.check_usage(&response) {
            return Err(LiveError::OutOfRange {
                provider: self.provider,
                message,
            });
        }
        let entry = Entry {
            provider: self.provider,
            run,
            request: body,
            response,
            latency_ms,
        };
        // The answer as stored is the answer used: a live run and its replay read the same.
        let response = entry.response.clone();
        self.cassette.insert(key, entry);
        Ok(Exchange {
            response,
            latency_ms,
            replayed: false,
        })
    }

    fn post_with_retries(
        &mut self,
        body: &str,
        provider_search: bool,
    ) -> Result<(Value, f64), LiveError> {
        let url = format!("{}{}", self.base_url, self.provider.path());
        let headers = self.provider.headers(self.key.as_deref(), provider_search);
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut last = String::new();
        for attempt in 0..MAX_ATTEMPTS {
            self.sent += 1;
            let backoff = Duration::from_secs(1 << attempt.min(5));
            let start = (self.clock)();
            let answer = self.transport.post(&url, &headers, body);
            let elapsed = (self.clock)().saturating_sub(start);
            let wait = match answer {
                Err(e) if deterministic(&e) => {
                    return Err(LiveError::Unrecoverable {
                        url,
                        message: e.chars().take(300).collect(),
                    });
                }
                Err(e) => {
                    last = format!("transport: {e}");
                    backoff
                }
                Ok(r) if r.status == 200 => {
                    let v: Value =
                        serde_json::from_str(&r.body).map_err(|_| LiveError::NotJson {
                            provider: self.provider,
                            body: r.body.chars().take(300).collect(),
                        })?;
                    let ms = (elapsed.as_secs_f64() * 10_000.0).round() / 10.0;
                    return Ok((v, ms));
                }
                Ok(r) if r.status == 401 || r.status == 403 => {
                    return Err(LiveError::Auth {
                        provider: self.provider,
                        status: r.status,
                        message: error_message(&r.body),
                        var: self.provider.key_var(),
                    });
                }
                Ok(r) if r.status == 429 => {
                    last = format!("HTTP 429: {}", error_message(&r.body));
                    r.retry_after
                        .filter(|s| s.is_finite() && *s >= 0.0)
                        // The ceiling first: a huge value cannot become a Duration.
                        .map_or(backoff, |s| {
                            Duration::from_secs_f64(s.min(RETRY_AFTER_CEILING.as_secs_f64()))
                        })
                }
                // A request timeout is the server's to retry; the rest of 4xx and the 5xx
                // that name a missing feature fail the same way every time.
                Ok(r) if r.status == 408 || (r.status >= 500 && !matches!(r.status, 501 | 505)) => {
                    last = format!("HTTP {}: {}", r.status, error_message(&r.body));
                    backoff
                }
                Ok(r) => {
                    return Err(LiveError::Rejected {
                        provider: self.provider,
                        status: r.status,
                        message: error_message(&r.body),
                    });
                }
            };
            if attempt + 1 < MAX_ATTEMPTS {
                (self.sleep)(wait);
            }
        }
        Err(LiveError::GaveUp {
            url,
            attempts: MAX_ATTEMPTS,
            last,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::api::Reply as HttpReply;
    use std::sync::{Arc, Mutex};

    /// Answers from a script, recording every header it was sent.
    struct Scripted {
        answers: Mutex<Vec<Result<HttpReply, String>>>,
        headers: Arc<Mutex<Vec<String>>>,
    }

    impl Transport for Scripted {
        fn post(
            &self,
            _url: &str,
            headers: &[(&str, &str)],
            _body: &str,
        ) -> Result<HttpReply, String> {
            self.headers
                .lock()
                .unwrap()
                .extend(headers.iter().map(|(k, v)| format!("{k}: {v}")));
            self.answers.lock().unwrap().remove(0)
        }
    }

    fn reply(status: u16, retry_after: Option<f64>, body: &str) -> Result<HttpReply, String> {
        Ok(HttpReply {
            status,
            retry_after,
            body: body.into(),
        })
    }

    type Log<T> = Arc<Mutex<Vec<T>>>;

    fn endpoint(
        answers: Vec<Result<HttpReply, String>>,
        key: Option<&str>,
        base: &str,
    ) -> (Endpoint, Log<Duration>, Log<String>) {
        let slept = Arc::new(Mutex::new(Vec::new()));
        let s = slept.clone();
        let headers = Arc::new(Mutex::new(Vec::new()));
        let e = Endpoint::new(
            Provider::OpenaiChat,
            base,
            key.map(str::to_string),
            false,
            "c.json".into(),
            Cassette::default(),
            Box::new(Scripted {
                answers: Mutex::new(answers),
                headers: headers.clone(),
            }),
            Box::new(move |d| s.lock().unwrap().push(d)),
            Box::new(|| Duration::ZERO),
        );
        (e, slept, headers)
    }

    #[test]
    fn retries_wait_as_told_and_the_answer_is_recorded_without_the_key() {
        let (mut e, slept, headers) = endpoint(
            vec![
                reply(429, Some(1000.0), r#"{"error":{"message":"slow down"}}"#),
                reply(503, None, "busy"),
                Err("refused".into()),
                reply(200, None, r#"{"choices":[]}"#),
            ],
            Some("sk-secret"),
            "https://api.openai.com/v1",
        );
        let x = e
            .exchange(0, &serde_json::json!({"b": 1, "a": 2}), false)
            .unwrap();
        assert!(!x.replayed);
        assert_eq!(
            *slept.lock().unwrap(),
            [
                RETRY_AFTER_CEILING,
                Duration::from_secs(2),
                Duration::from_secs(4)
            ]
        );
        assert!(
            headers
                .lock()
                .unwrap()
                .iter()
                .any(|h| h == "authorization: Bearer sk-secret")
        );
        let file = String::from_utf8(e.cassette.to_bytes()).unwrap();
        assert!(!file.contains("sk-secret"));
        assert!(file.contains(r#""request":{"a":2,"b":1}"#), "{file}");
        // The same request again comes from the cassette.
        let again = e
            .exchange(0, &serde_json::json!({"a": 2, "b": 1}), false)
            .unwrap();
        assert!(again.replayed);
        assert_eq!(e.sent, 4);
    }

    #[test]
    fn a_retry_after_beyond_any_duration_waits_the_ceiling() {
        let (mut e, slept, _) = endpoint(
            vec![
                reply(429, Some(99999999999999999999.0), "{}"),
                reply(429, Some(f64::MAX), "{}"),
                reply(200, None, r#"{"choices":[]}"#),
            ],
            None,
            "http://127.0.0.1:9/v1",
        );
        e.exchange(0, &serde_json::json!({}), false).unwrap();
        assert_eq!(
            *slept.lock().unwrap(),
            [RETRY_AFTER_CEILING, RETRY_AFTER_CEILING]
        );
    }

    #[test]
    fn an_answer_with_a_count_out_of_range_is_refused_and_not_recorded() {
        let (mut e, _, _) = endpoint(
            vec![reply(
                200,
                None,
                r#"{"choices":[],"usage":{"prompt_tokens":18446744073709551615}}"#,
            )],
            None,
            "http://127.0.0.1:9/v1",
        );
        let err = e.exchange(0, &serde_json::json!({}), false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "live: openai-chat answered usage.prompt_tokens is 18446744073709551615, not a token \
             count (a whole number from 0 to 1000000000000); the answer is not recorded and the \
             run stops"
        );
        assert!(e.cassette.is_empty());
    }

    #[test]
    fn a_missing_answer_names_the_model_and_runs_the_cassette_holds() {
        let (mut e, _, _) = endpoint(
            vec![reply(200, None, r#"{"choices":[]}"#)],
            None,
            "http://127.0.0.1:9/v1",
        );
        e.exchange(0, &serde_json::json!({"model": "recorded-model"}), false)
            .unwrap();
        e.offline = true;
        let err = e
            .exchange(1, &serde_json::json!({"model": "other"}), false)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "live: the cassette c.json has no answer for this request (model \"other\", run 1) \
             and --offline is set; it holds 1 answer: 1 of openai-chat model \"recorded-model\" \
             in run 0; record it by running online"
        );
    }

    #[test]
    fn a_request_timeout_is_retried_and_failures_that_repeat_are_not() {
        let (mut e, slept, _) = endpoint(
            vec![
                reply(408, None, "{}"),
                reply(200, None, r#"{"choices":[]}"#),
            ],
            None,
            "http://127.0.0.1:9/v1",
        );
        e.exchange(0, &serde_json::json!({}), false).unwrap();
        assert_eq!(*slept.lock().unwrap(), [Duration::from_secs(1)]);
        for (answer, message) in [
            (reply(501, None, "{}"), "HTTP 501"),
            (reply(505, None, "{}"), "HTTP 505"),
            (reply(404, None, "{}"), "HTTP 404"),
            (
                Err("the response body is larger than request limit: 1048576".into()),
                "no retry mends: the response body is larger",
            ),
            (Err("bad uri: no host".into()), "no retry mends: bad uri"),
        ] {
            let (mut e, slept, _) = endpoint(vec![answer], None, "http://127.0.0.1:9/v1");
            let err = e.exchange(0, &serde_json::json!({}), false).unwrap_err();
            assert!(err.to_string().contains(message), "{err}");
            assert!(slept.lock().unwrap().is_empty(), "{message}");
            assert_eq!(e.sent, 1, "{message}");
        }
    }

    #[test]
    fn client_errors_fail_at_once_with_the_providers_message() {
        let (mut e, slept, _) = endpoint(
            vec![reply(
                400,
                None,
                r#"{"error":{"message":"context too long"}}"#,
            )],
            None,
            "http://127.0.0.1:9/v1",
        );
        let err = e.exchange(0, &serde_json::json!({}), false).unwrap_err();
        assert!(
            err.to_string().contains("HTTP 400): context too long"),
            "{err}"
        );
        assert!(slept.lock().unwrap().is_empty());
        let (mut e, _, _) = endpoint(
            vec![reply(401, None, "{\"error\":\"no\"}")],
            None,
            "http://x/v1",
        );
        let err = e.exchange(0, &serde_json::json!({}), false).unwrap_err();
        assert!(err.to_string().contains("check OPENAI_API_KEY"), "{err}");
    }

    #[test]
    fn without_a_key_the_providers_own_host_is_not_called_and_offline_never_calls() {
        let (mut e, _, _) = endpoint(vec![], None, "https://api.openai.com/v1");
        let err = e.exchange(0, &serde_json::json!({}), false).unwrap_err();
        assert!(
            err.to_string().contains("OPENAI_API_KEY is not set"),
            "{err}"
        );
        let (mut e, _, _) = endpoint(vec![], Some("k"), "http://127.0.0.1:1/v1");
        e.offline = true;
        let err = e.exchange(3, &serde_json::json!({}), false).unwrap_err();
        assert!(
            err.to_string()
                .contains("(model \"\", run 3) and --offline is set; the cassette is empty"),
            "{err}"
        );
    }

    #[test]
    fn gives_up_after_the_attempts_and_refuses_a_body_that_is_not_json() {
        let (mut e, slept, _) = endpoint(
            (0..MAX_ATTEMPTS).map(|_| reply(500, None, "{}")).collect(),
            None,
            "http://127.0.0.1:1/v1",
        );
        let err = e.exchange(0, &serde_json::json!({}), false).unwrap_err();
        assert!(matches!(
            err,
            LiveError::GaveUp {
                attempts: MAX_ATTEMPTS,
                ..
            }
        ));
        assert_eq!(slept.lock().unwrap().len(), MAX_ATTEMPTS - 1);
        let (mut e, _, _) = endpoint(vec![reply(200, None, "")], None, "http://127.0.0.1:1/v1");
        assert!(matches!(
            e.exchange(0, &serde_json::json!({}), false),
            Err(LiveError::NotJson { .. })
        ));
    }
}
