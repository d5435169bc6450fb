//! Asks one MCP server over stdio for its tools: spawn, `initialize`, `tools/list` page by page,
//! shut down. The protocol is the official Rust SDK's (`rmcp` client over the child's pipes).
//!
//! We spawn the child ourselves instead of using rmcp's `TokioChildProcess` for two reasons:
//! its `Drop` kills the child from a spawned task, which never runs when a current-thread
//! runtime is torn down right after an error, so the child could outlive us or stay a zombie;
//! and it silently skips stdout lines that are not JSON-RPC, so a server that prints garbage
//! would only ever show up as a timeout. Here the child runs in its own process group (so
//! `npx`/`uvx` wrappers and their children go too), is always killed and waited for, and a tee
//! between its stdout and rmcp remembers the lines that were not JSON-RPC for the error.
//!
//! The tee also keeps a hostile server bounded, and says why when it stops one: a message over
//! the SDK's 16 MiB line limit (which the SDK would drop silently, leaving a timeout), one
//! nested past the JSON reader's depth limit (dropped silently too), and more requests or
//! notifications of the server's own than [`MAX_SERVER_REQUESTS`] / [`MAX_SERVER_NOTIFICATIONS`]
//! (each request is answered by a write the SDK queues without bound when the server does not
//! read its stdin). It reads each line bounded by bytes and looks only at the envelope
//! (`jsonrpc`, `id`, `method`), never building a JSON tree of the message.

use std::collections::VecDeque;
use std::fmt;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, PaginatedRequestParams};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::process::{Child, Command};
use tokio::sync::watch;

use super::ServerCommand;

mod wire;
use wire::*;

/// How long to wait for the server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeouts {
    /// From spawning the process to the answer to `initialize`.
    pub start: Duration,
    /// For each `tools/list` page.
    pub request: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            start: Duration::from_secs(20),
            request: Duration::from_secs(20),
        }
    }
}

/// Lines of the server's stderr kept for an error message.
pub const STDERR_TAIL_LINES: usize = 20;
/// Longest stderr or stdout line kept for a message, in characters.
const MAX_NOTED_LINE_CHARS: usize = 300;
/// Most `tools/list` pages followed; a server that keeps returning cursors is broken.
pub const MAX_PAGES: usize = 10_000;
/// Longest message (stdout line) accepted: the MCP SDK's own limit (16 MiB), which we check
/// first because the SDK drops a longer line silently. A whole `tools/list` page is one line,
/// so a server with more tools than fit must paginate.
pub const MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;
/// Most JSON values (objects, arrays, strings, numbers, booleans, nulls) one answer of the
/// server may hold, counted on the raw line before the SDK builds anything: the SDK keeps
/// about 0.9 KB a value while it reads a message (a 14 MB answer of 1.8 million one-key
/// objects took 1.6 GB), so this bounds one message to about half a gigabyte. A
/// `tools/list` page of 10,000 generated tools holds about 180,000.
pub const MAX_MESSAGE_VALUES: u64 = 500_000;
/// Most requests of its own (`ping`, `roots/list`, ...) a server may send in one session. Each
/// needs an answer written to its stdin; one that floods them and never reads would otherwise
/// make the SDK queue answers without bound.
pub const MAX_SERVER_REQUESTS: usize = 10_000;
/// Most bytes those requests may add up to in one session (an answer echoes the request's id).
pub const MAX_SERVER_REQUEST_BYTES: usize = 64 * 1024 * 1024;
/// Most notifications a server may send between two answers to our requests.
pub const MAX_SERVER_NOTIFICATIONS: usize = 10_000;
/// How long the tee keeps counting the bytes of an over-long message (to name its size) when
/// the server stops sending in the middle of it.
const OVERLONG_STALL: Duration = Duration::from_secs(1);
/// Counting an over-long message stops here ("at least ... bytes").
const OVERLONG_COUNT_CAP: u64 = 1 << 32;
/// After a successful listing, how long a server gets to exit on its own once its stdin is
/// closed (the MCP stdio shutdown) before it is killed.
const GRACEFUL_EXIT: Duration = Duration::from_millis(500);

/// What a successful listing returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// The tools in the server's order, each as the JSON object the server sent (as far as the
    /// MCP `Tool` type knows its fields), with null and empty optional fields dropped.
    pub tools: Vec<Value>,
    /// `tools/list` requests made (1 for an unpaginated server).
    pub pages: usize,
    /// The server's `serverInfo` name and version, when it gave them.
    pub server_name: Option<String>,
    pub server_version: Option<String>,
}

/// Why a listing failed, with everything the server let us see.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.summary())]
pub struct ImportError {
    pub failure: Failure,
    /// How the process ended, when it had ended by the time we looked.
    pub exit: Option<String>,
    /// Stdout lines that were not JSON-RPC messages: how many, and the first few.
    pub stdout_noise: Vec<String>,
    pub stdout_noise_count: usize,
    /// The last lines the server wrote on stderr.
    pub stderr_tail: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The command could not be started at all.
    Spawn {
        program: String,
        reason: String,
    },
    /// No answer to `initialize` in time.
    StartTimeout(Duration),
    /// `initialize` got an error, a wrong answer, or the connection closed.
    Initialize(String),
    /// No answer to a `tools/list` page in time.
    RequestTimeout {
        page: usize,
        after: Duration,
    },
    /// A `tools/list` page got an error, a wrong answer, or the connection closed.
    Request {
        page: usize,
        reason: String,
    },
    /// The server sent a cursor it had already sent: following it would never end.
    CursorLoop {
        page: usize,
        cursor: String,
    },
    TooManyPages,
    /// More tools than a catalog may hold ([`crate::catalog::MAX_TOOLS`]): stopped there,
    /// not after listing the rest.
    TooManyTools {
        page: usize,
        tools: usize,
    },
    /// The tools listed so far hold more JSON values than the catalog written from them could
    /// ([`crate::document::MAX_JSON_NODES`]): stopped there, with what was held bounded.
    TooManyValues {
        page: usize,
        values: u64,
    },
    /// No answer to a `tools/call` in time.
    CallTimeout {
        tool: String,
        after: Duration,
    },
    /// A `tools/call` got an error, a wrong answer, or the connection closed.
    Call {
        tool: String,
        reason: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Spawn { program, reason } => write!(f, "cannot start {program:?}: {reason}"),
            Failure::StartTimeout(d) => write!(
                f,
                "no answer to `initialize` within {} (raise it with --timeout-secs)",
                secs(*d)
            ),
            Failure::Initialize(r) => write!(f, "`initialize` failed: {r}"),
            Failure::RequestTimeout { page, after } => write!(
                f,
                "no answer to `tools/list` (page {page}) within {} (raise it with --timeout-secs)",
                secs(*after)
            ),
            Failure::Request { page, reason } => {
                write!(f, "`tools/list` (page {page}) failed: {reason}")
            }
            Failure::CursorLoop { page, cursor } => write!(
                f,
                "`tools/list` page {page} returned the cursor {cursor:?} again; the server's \
                 pagination never ends"
            ),
            Failure::TooManyPages => {
                write!(f, "`tools/list` still had more pages after {MAX_PAGES}")
            }
            Failure::TooManyTools { page, tools } => write!(
                f,
                "`tools/list` had listed {tools} tools by page {page}, more than the limit of {} \
                 tools in a run",
                crate::catalog::MAX_TOOLS
            ),
            Failure::TooManyValues { page, values } => write!(
                f,
                "`tools/list` had listed tools holding {values} JSON values by page {page}, more \
                 than the {} one catalog file may hold (a catalog written from them could not \
                 be read back)",
                crate::document::MAX_JSON_NODES
            ),
            Failure::CallTimeout { tool, after } => write!(
                f,
                "no answer to `tools/call` of {tool:?} within {} (raise it with --scorer-timeout)",
                secs(*after)
            ),
            Failure::Call { tool, reason } => {
                write!(f, "`tools/call` of {tool:?} failed: {reason}")
            }
        }
    }
}

fn secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

impl ImportError {
    /// One line: the failure, how the process ended, and what it printed that was not protocol.
    pub fn summary(&self) -> String {
        let mut s = self.failure.to_string();
        if let Some(exit) = &self.exit {
            s.push_str("; the server ");
            s.push_str(exit);
        }
        if self.stdout_noise_count > 0 {
            s.push_str(&format!(
                "; it wrote {} line{} on stdout that {} not JSON-RPC, the first: {:?}",
                self.stdout_noise_count,
                if self.stdout_noise_count == 1 {
                    ""
                } else {
                    "s"
                },
                if self.stdout_noise_count == 1 {
                    "is"
                } else {
                    "are"
                },
                self.stdout_noise.first().map_or("", String::as_str)
            ));
        }
        s
    }
}

/// What the stdout tee and the stderr reader saw.
#[derive(Debug, Default)]
struct Seen {
    stderr_tail: VecDeque<String>,
    stdout_noise: Vec<String>,
    stdout_noise_count: usize,
    /// Why the tee stopped the exchange: a message the SDK would drop silently (too long,
    /// nested too deep) or a server that floods us. Said instead of the SDK's vaguer error.
    stopped: Option<String>,
    /// Requests of the server's own this session, their bytes, and the first one's method.
    server_requests: usize,
    server_request_bytes: usize,
    first_server_method: Option<String>,
    /// Notifications since the last answer to one of our requests.
    notifications_since_answer: usize,
    /// The server closed its stdout (usually: it exited).
    stdout_closed: bool,
    /// Our last write to the server's stdin is still waiting: the pipe is full because the
    /// server does not read it.
    stdin_blocked: bool,
}

type Shared = Arc<Mutex<Seen>>;

fn lock(seen: &Shared) -> std::sync::MutexGuard<'_, Seen> {
    // A reader task that panicked leaves its notes half-written, which is still worth showing.
    seen.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A started server: the child, the readers of its pipes, and the SDK's client. Every way out
/// ends in [`Session::close`], which kills and reaps the child.
pub struct Session {
    child: Child,
    pid: Option<u32>,
    seen: Shared,
    client: Option<rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>>,
    stderr_task: tokio::task::JoinHandle<()>,
    stdout_task: tokio::task::JoinHandle<()>,
    /// Becomes true when the tee stops the exchange (the reason is in `seen.stopped`).
    stopped: watch::Receiver<bool>,
    /// The server's `serverInfo`, when it gave one.
    pub server_name: Option<String>,
    pub server_version: Option<String>,
}

impl Session {
    /// Spawns the server and answers its `initialize`. Must be called inside a Tokio runtime
    /// with IO and time enabled (a current-thread runtime is enough). On failure the child is
    /// already killed and reaped.
    pub async fn start(command: &ServerCommand, start: Duration) -> Result<Session, ImportError> {
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args)
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = &command.cwd {
            cmd.current_dir(dir);
        }
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                return Err(ImportError {
                    failure: Failure::Spawn {
                        program: command.program.clone(),
                        reason: e.to_string(),
                    },
                    exit: None,
                    stdout_noise: Vec::new(),
                    stdout_noise_count: 0,
                    stderr_tail: Vec::new(),
                });
            }
        };
        let pid = child.id();
        if let Some(g) = pid.and_then(|p| i32::try_from(p).ok()) {
            crate::process::register_child_group(g);
        }
        let seen: Shared = Arc::default();
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let stderr_task = tokio::spawn(read_stderr(stderr, seen.clone()));
        // The duplex buffer only needs to hold what rmcp has not read yet; the tee waits for room.
        let (tee_in, rmcp_out) = tokio::io::duplex(64 * 1024);
        let (stop_tx, stopped) = watch::channel(false);
        let stdout_task = tokio::spawn(tee_stdout(stdout, tee_in, seen.clone(), stop_tx));
        let mut session = Session {
            child,
            pid,
            seen,
            client: None,
            stderr_task,
            stdout_task,
            stopped,
            server_name: None,
            server_version: None,
        };
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolbudget", env!("CARGO_PKG_VERSION")),
        );
        // The SDK's line limit set to ours explicitly: the tee enforces it first, with a message.
        let stdin = WatchedStdin {
            inner: stdin,
            seen: session.seen.clone(),
        };
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(rmcp_out, stdin)
            .with_max_line_length(MAX_MESSAGE_BYTES);
        let serving = session.unless_stopped(tokio::time::timeout(start, info.serve(transport)));
        let failure = match serving.await {
            // The reason is in `seen.stopped`; `fail` puts it in.
            None => Failure::Initialize(String::new()),
            Some(Err(_)) => Failure::StartTimeout(start),
            Some(Ok(Err(e))) => Failure::Initialize(e.to_string()),
            Some(Ok(Ok(client))) => {
                if let Some(i) = client.peer_info().and_then(|p| p.server_info.clone()) {
                    session.server_name = Some(i.name.clone());
                    session.server_version = Some(i.version.clone());
                }
                session.client = Some(client);
                return Ok(session);
            }
        };
        Err(session.fail(failure).await)
    }

    /// Runs `fut` unless the tee stops the exchange first (then `None`, the reason being in
    /// `seen.stopped`): the SDK would only notice a closed stream after its drain timeout.
    async fn unless_stopped<F: std::future::Future>(&self, fut: F) -> Option<F::Output> {
        let mut stopped = self.stopped.clone();
        let stop = async move {
            // The sender is dropped when the tee ends normally: then nothing stops us.
            if stopped.wait_for(|s| *s).await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            biased;
            () = stop => None,
            out = fut => Some(out),
        }
    }

    fn client(&self) -> &rmcp::service::RunningService<rmcp::RoleClient, ClientConfig> {
        self.client
            .as_ref()
            .expect("a started session has its client")
    }

    /// Every tool, `tools/list` page by page, each page within `request`.
    pub async fn list_tools(&self, request: Duration) -> Result<Listing, Failure> {
        let client = self.client();
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen_cursors = std::collections::HashSet::new();
        let mut pages = 0;
        // The values of the tools kept, as a catalog file would hold them.
        let mut values: u64 = 0;
        loop {
            if pages == MAX_PAGES {
                return Err(Failure::TooManyPages);
            }
            pages += 1;
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let asked = self.unless_stopped(tokio::time::timeout(
                request,
                client.list_tools(Some(params)),
            ));
            let page = match asked.await {
                None => {
                    return Err(Failure::Request {
                        page: pages,
                        reason: String::new(),
                    });
                }
                Some(Err(_)) => {
                    return Err(Failure::RequestTimeout {
                        page: pages,
                        after: request,
                    });
                }
                Some(Ok(Err(e))) => {
                    return Err(Failure::Request {
                        page: pages,
                        reason: service_error(e, "tools/list"),
                    });
                }
                Some(Ok(Ok(p))) => p,
            };
            if tools.len() + page.tools.len() > crate::catalog::MAX_TOOLS {
                return Err(Failure::TooManyTools {
                    page: pages,
                    tools: tools.len() + page.tools.len(),
                });
            }
            for tool in page.tools {
                // Serializing the SDK's `Tool` cannot fail: it is plain data with string keys.
                let v = serde_json::to_value(&tool).expect("an MCP tool serializes to JSON");
                let v = drop_empty_fields(v);
                values += values_in(&v);
                if values > crate::document::MAX_JSON_NODES {
                    return Err(Failure::TooManyValues {
                        page: pages,
                        values,
                    });
                }
                tools.push(v);
            }
            match page.next_cursor {
                None => break,
                // An empty cursor is how some servers say "no more pages".
                Some(c) if c.is_empty() => break,
                Some(c) => {
                    if !seen_cursors.insert(c.clone()) {
                        return Err(Failure::CursorLoop {
                            page: pages,
                            cursor: c,
                        });
                    }
                    cursor = Some(c);
                }
            }
        }
        Ok(Listing {
            tools,
            pages,
            server_name: self.server_name.clone(),
            server_version: self.server_version.clone(),
        })
    }

    /// One `tools/call`: the result as the JSON object the server sent (`content`,
    /// `structuredContent`, `isError`).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
        timeout: Duration,
    ) -> Result<Value, Failure> {
        let mut params = rmcp::model::CallToolRequestParams::new(name.to_string());
        params.arguments = Some(arguments);
        let asked = self.unless_stopped(tokio::time::timeout(
            timeout,
            self.client().call_tool(params),
        ));
        match asked.await {
            None => Err(Failure::Call {
                tool: name.to_string(),
                reason: String::new(),
            }),
            Some(Err(_)) => Err(Failure::CallTimeout {
                tool: name.to_string(),
                after: timeout,
            }),
            Some(Ok(Err(e))) => Err(Failure::Call {
                tool: name.to_string(),
                reason: service_error(e, "tools/call"),
            }),
            // Serializing the SDK's result cannot fail: it is plain data with string keys.
            Some(Ok(Ok(result))) => {
                Ok(serde_json::to_value(&result).expect("a tool result serializes"))
            }
        }
    }

    /// Ends the exchange politely (stdin closed), then kills and reaps the child. Returns the
    /// exit status when the server ended by itself.
    pub async fn close(mut self) -> Option<ExitStatus> {
        if let Some(client) = self.client.take() {
            // Closing our end is the MCP stdio shutdown; `stop` then gives the server a moment.
            let _ = tokio::time::timeout(Duration::from_secs(1), client.cancel()).await;
        }
        self.stop(true).await
    }

    /// What went wrong, with what the server let us see; the child is killed and reaped.
    pub async fn fail(mut self, failure: Failure) -> ImportError {
        // Checked before anything else can run: once our side of the connection is dropped the
        // server may exit because of us, and its exit status would then say nothing.
        let server_left_first = lock(&self.seen).stdout_closed;
        self.client = None;
        let exit = self.stop(false).await;
        let seen = lock(&self.seen);
        // What the tee saw explains the SDK's closed stream (or a timeout it caused).
        let failure = match (&seen.stopped, failure) {
            (Some(why), Failure::Request { page, .. } | Failure::RequestTimeout { page, .. }) => {
                Failure::Request {
                    page,
                    reason: why.clone(),
                }
            }
            (Some(why), Failure::Initialize(_) | Failure::StartTimeout(_)) => {
                Failure::Initialize(why.clone())
            }
            (Some(why), Failure::Call { tool, .. } | Failure::CallTimeout { tool, .. }) => {
                Failure::Call {
                    tool,
                    reason: why.clone(),
                }
            }
            (_, failure) => failure,
        };
        // A server that stopped reading its stdin can only time out; say why.
        let failure = match failure {
            Failure::StartTimeout(_)
            | Failure::RequestTimeout { .. }
            | Failure::CallTimeout { .. }
                if seen.stdin_blocked =>
            {
                let why = format!(
                    "{failure}; the server does not read its stdin (toolbudget's write to it \
                     is still waiting)"
                );
                match failure {
                    Failure::RequestTimeout { page, .. } => Failure::Request { page, reason: why },
                    Failure::CallTimeout { tool, .. } => Failure::Call { tool, reason: why },
                    _ => Failure::Initialize(why),
                }
            }
            failure => failure,
        };
        ImportError {
            failure,
            exit: exit.filter(|_| server_left_first).map(describe_exit),
            stdout_noise: seen.stdout_noise.clone(),
            stdout_noise_count: seen.stdout_noise_count,
            stderr_tail: seen.stderr_tail.iter().cloned().collect(),
        }
    }

    async fn stop(&mut self, graceful: bool) -> Option<ExitStatus> {
        let exit = stop(&mut self.child, self.pid, graceful).await;
        if let Some(g) = self.pid.take().and_then(|p| i32::try_from(p).ok()) {
            crate::process::release_child_group(g);
        }
        // With the process group gone the pipes reach end of file; give the readers a moment to
        // record the last lines (a grandchild outside the group could keep a pipe open forever).
        let _ = tokio::time::timeout(Duration::from_millis(500), &mut self.stderr_task).await;
        let _ = tokio::time::timeout(Duration::from_millis(100), &mut self.stdout_task).await;
        exit
    }
}

fn service_error(e: rmcp::ServiceError, method: &str) -> String {
    match e {
        // The SDK could not read the answer as a result of the method.
        rmcp::ServiceError::UnexpectedResponse => {
            format!("the answer is not a valid {method} result")
        }
        rmcp::ServiceError::TransportClosed => "the connection closed".to_string(),
        e => e.to_string(),
    }
}

/// Runs the whole exchange with one server: start, every `tools/list` page, close. Must be
/// called inside a Tokio runtime with IO and time enabled (a current-thread runtime is
/// enough). The child is killed and reaped before this returns, whatever happened.
pub async fn list_tools(
    command: &ServerCommand,
    timeouts: Timeouts,
) -> Result<Listing, ImportError> {
    let session = Box::pin(Session::start(command, timeouts.start)).await?;
    match session.list_tools(timeouts.request).await {
        Ok(listing) => {
            session.close().await;
            Ok(listing)
        }
        Err(failure) => Err(session.fail(failure).await),
    }
}

/// Drops a tool's optional top-level fields that carry nothing (null, `{}`, `[]`); the name
/// and the input schema are kept whatever they hold.
/// The values `v` holds, itself included (keys not counted), as
/// [`crate::document::MAX_JSON_NODES`] counts them; without recursion.
fn values_in(v: &Value) -> u64 {
    let mut n = 0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        n += 1;
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    n
}

fn drop_empty_fields(v: Value) -> Value {
    match v {
        Value::Object(mut map) => {
            map.retain(|k, v| {
                k == "name"
                    || k == "inputSchema"
                    || !(v.is_null()
                        || v.as_object().is_some_and(serde_json::Map::is_empty)
                        || v.as_array().is_some_and(std::vec::Vec::is_empty))
            });
            Value::Object(map)
        }
        other => other,
    }
}

/// Ends the child and its process group and reaps it. Returns the exit status when the server
/// ended by itself (after a successful exchange it gets a short grace period to do so, its
/// stdin being closed; after a failure a crashed server has usually exited already), and
/// `None` when we had to kill it.
async fn stop(child: &mut Child, pid: Option<u32>, graceful: bool) -> Option<ExitStatus> {
    let grace = if graceful {
        GRACEFUL_EXIT
    } else {
        Duration::from_millis(100)
    };
    let own_exit = tokio::time::timeout(grace, child.wait())
        .await
        .ok()
        .and_then(Result::ok);
    kill_group(pid);
    if own_exit.is_none() {
        let _ = child.start_kill();
        // SIGKILL cannot be ignored, so this wait ends; the bound is only a safety net.
        let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    }
    own_exit
}

/// Kills whatever is left of the child's process group (wrappers like `npx` start the real
/// server as a grandchild). Harmless when the group is already gone.
fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| libc::pid_t::try_from(p).ok()) {
        // SAFETY: killpg only sends a signal. The group id is our child's pid; Linux does not
        // hand out a pid again while a process group with that id still has members.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("was killed by signal {sig}");
        }
    }
    format!("ended: {status}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_rpc_lines_are_told_from_noise() {
        assert_eq!(
            classify(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"),
            Line::Messages(vec![Kind::Answer])
        );
        assert_eq!(
            classify(b"{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}"),
            Line::Messages(vec![Kind::Request("ping".into())])
        );
        assert_eq!(
            classify(
                b"[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}},\
                  {\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":1,\"message\":\"x\"}}]"
            ),
            Line::Messages(vec![
                Kind::Notification("notifications/message".into()),
                Kind::Answer
            ])
        );
        assert_eq!(classify(b"\n"), Line::Blank);
        assert_eq!(classify(b"Server started on stdio\n"), Line::Noise);
        assert_eq!(classify(b"{\"hello\": 1}\n"), Line::Noise);
        assert_eq!(classify(b"{\"jsonrpc\": \"1.0\", \"id\": 1}"), Line::Noise);
        assert_eq!(classify(b"[]"), Line::Noise);
        assert_eq!(classify(b"{\"jsonrpc\":\"2.0\",\"id\":1,"), Line::Noise);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(classify(deep.as_bytes()), Line::TooDeep);
        // Unbalanced brackets are not JSON at all.
        assert_eq!(classify("[".repeat(200).as_bytes()), Line::Noise);
    }

    #[test]
    fn depth_counts_brackets_outside_strings_as_serde_json_does() {
        for depth in [1usize, 2, 127, 128, 129, 300] {
            let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let refused = serde_json::from_str::<Value>(&text).is_err();
            assert_eq!(
                nested_at_least(text.as_bytes(), MAX_JSON_DEPTH),
                refused,
                "{depth}"
            );
        }
        let quoted = format!(r#"{{"a": "{}\"{}"}}"#, "[".repeat(300), "{".repeat(300));
        assert!(!nested_at_least(quoted.as_bytes(), MAX_JSON_DEPTH));
    }

    fn read_all(input: &[u8], max: usize) -> Vec<(LineRead, Vec<u8>)> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            // A tiny buffer, so lines arrive in many pieces.
            let mut reader = BufReader::with_capacity(3, input);
            let mut out = Vec::new();
            loop {
                let mut line = Vec::new();
                let r = read_line_bounded(&mut reader, &mut line, max).await;
                if r == LineRead::Eof {
                    return out;
                }
                out.push((r, line));
            }
        })
    }

    #[test]
    fn lines_are_bounded_by_bytes_and_a_long_one_is_counted_not_kept() {
        let got = read_all(b"ab\n0123456789\ncd\n0123456789", 6);
        assert_eq!(
            got,
            vec![
                (LineRead::Line, b"ab\n".to_vec()),
                (
                    LineRead::TooLong {
                        bytes: 11,
                        complete: true
                    },
                    vec![]
                ),
                (LineRead::Line, b"cd\n".to_vec()),
                (
                    LineRead::TooLong {
                        bytes: 10,
                        complete: false
                    },
                    vec![]
                ),
            ]
        );
        // Exactly at the limit is accepted, the newline included; a last line without one too.
        let got = read_all(b"abcde\nxy", 6);
        assert_eq!(
            got,
            vec![
                (LineRead::Line, b"abcde\n".to_vec()),
                (LineRead::Line, b"xy".to_vec())
            ]
        );
    }

    /// An answer of more values than [`MAX_MESSAGE_VALUES`] is refused on the raw line, before
    /// the SDK builds it; one at the bound passes. `values_in` counts a tree as the line
    /// counter counts its text.
    #[test]
    fn an_answer_past_the_value_bound_is_refused_before_it_is_read() {
        let line = |n: u64| {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"x\":[{}]}}}}",
                vec!["1"; n as usize].join(",")
            )
        };
        // Outside the array: the message, "2.0", 1, the result, the array.
        let at = line(MAX_MESSAGE_VALUES - 5);
        assert_eq!(too_many_values(at.as_bytes()), None);
        let over = line(MAX_MESSAGE_VALUES - 4);
        let why = too_many_values(over.as_bytes()).expect("one value past the bound");
        assert!(
            why.starts_with(&format!(
                "the server sent an answer of more than 500000 JSON values ({} bytes)",
                over.len()
            )),
            "{why}"
        );
        let v: Value = serde_json::from_str(&at).unwrap();
        assert_eq!(values_in(&v), MAX_MESSAGE_VALUES);
    }

    #[test]
    fn the_servers_own_requests_and_notifications_are_bounded() {
        let mut seen = Seen::default();
        let ping = [Kind::Request("ping".into())];
        for _ in 0..MAX_SERVER_REQUESTS {
            assert_eq!(count_messages(&mut seen, &ping, 40), None);
        }
        let why = count_messages(&mut seen, &ping, 40).expect("one past the bound stops");
        assert!(
            why.starts_with(
                "the server sent 10001 requests of its own (400040 bytes; the first: \"ping\")"
            ),
            "{why}"
        );
        // Bytes bound them too: a few huge requests (an answer echoes their id).
        let mut seen = Seen::default();
        assert_eq!(
            count_messages(&mut seen, &ping, MAX_SERVER_REQUEST_BYTES),
            None
        );
        assert!(count_messages(&mut seen, &ping, 1).is_some());
        // Notifications count since the last answer.
        let mut seen = Seen::default();
        let note = [Kind::Notification("notifications/progress".into())];
        for round in 0..3 {
            for _ in 0..MAX_SERVER_NOTIFICATIONS {
                assert_eq!(count_messages(&mut seen, &note, 10), None, "{round}");
            }
            assert_eq!(count_messages(&mut seen, &[Kind::Answer], 10), None);
        }
        for _ in 0..MAX_SERVER_NOTIFICATIONS {
            assert_eq!(count_messages(&mut seen, &note, 10), None);
        }
        let why = count_messages(&mut seen, &note, 10).expect("one past the bound stops");
        assert!(
            why.contains("more than 10000 notifications without answering"),
            "{why}"
        );
    }

    #[test]
    fn empty_optional_fields_are_dropped_but_name_and_schema_kept() {
        let v = serde_json::json!({"name": "a", "description": null, "inputSchema": {},
            "annotations": {}, "icons": [], "title": "A"});
        let out = drop_empty_fields(v);
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            r#"{"name":"a","inputSchema":{},"title":"A"}"#
        );
    }

    #[test]
    fn long_lines_are_clipped_on_a_char_boundary() {
        let s = "é".repeat(400);
        let c = clip(&s);
        assert_eq!(c.chars().count(), MAX_NOTED_LINE_CHARS + 1);
        assert!(c.ends_with('…'));
    }
}
