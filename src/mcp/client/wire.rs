//! The server's pipes read as toolbudget reads them: stdout as bounded JSON-RPC lines (noise, overlong and too-deep lines told apart), stderr's tail kept, stdin watched.

use super::*;

/// The server's stdin, noting when a write to it has to wait (the pipe is full: the server does
/// not read). What the SDK would write is bounded by [`MAX_SERVER_REQUESTS`] and the rest.
pub(super) struct WatchedStdin {
    pub(super) inner: tokio::process::ChildStdin,
    pub(super) seen: Shared,
}

impl tokio::io::AsyncWrite for WatchedStdin {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let polled = std::pin::Pin::new(&mut self.inner).poll_write(cx, buf);
        lock(&self.seen).stdin_blocked = polled.is_pending();
        polled
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Copies the server's stdout to rmcp line by line, noting lines that are not JSON-RPC, and
/// stops (saying why in `seen.stopped`, and through `stop`) at a line the SDK would drop
/// silently or at a flood of the server's own requests or notifications.
pub(super) async fn tee_stdout(
    stdout: impl AsyncRead + Unpin,
    mut to_rmcp: DuplexStream,
    seen: Shared,
    stop: watch::Sender<bool>,
) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        let why = match read_line_bounded(&mut reader, &mut line, MAX_MESSAGE_BYTES).await {
            LineRead::Eof => break,
            LineRead::TooLong { bytes, complete } => Some(format!(
                "the server sent a message of {}{bytes} bytes, over the {} MiB limit on one \
                 MCP message (the MCP SDK's); a server with that many tools must paginate \
                 `tools/list`",
                if complete { "" } else { "at least " },
                MAX_MESSAGE_BYTES / (1024 * 1024),
            )),
            LineRead::Line => match classify(&line) {
                Line::Blank => None,
                Line::Noise => {
                    note_noise(&seen, String::from_utf8_lossy(&line).trim_end().to_string());
                    None
                }
                Line::TooDeep => Some(format!(
                    "the answer cannot be read: it is nested deeper than {MAX_JSON_DEPTH} \
                     levels, the most a JSON-RPC reader accepts"
                )),
                Line::Messages(kinds) => count_messages(&mut lock(&seen), &kinds, line.len())
                    .or_else(|| {
                        kinds
                            .contains(&Kind::Answer)
                            .then(|| too_many_values(&line).or_else(|| wide_integer_in(&line)))
                            .flatten()
                    }),
            },
        };
        if let Some(why) = why {
            lock(&seen).stopped = Some(why);
            // Ending the stream makes the SDK fail what is pending; `stop` tells the session
            // at once (the SDK would first wait out its drain timeout).
            let _ = stop.send(true);
            // Not `stdout_closed`: the server did not leave, we stopped listening.
            return;
        }
        if to_rmcp.write_all(&line).await.is_err() {
            break;
        }
    }
    lock(&seen).stdout_closed = true;
    // Dropping `to_rmcp` tells rmcp the server's output has ended.
}

/// An answer holding more than [`MAX_MESSAGE_VALUES`] JSON values, counted on the line before
/// the SDK reads it: why it is refused.
pub(super) fn too_many_values(line: &[u8]) -> Option<String> {
    crate::document::json_values_within(line, MAX_MESSAGE_VALUES)
        .err()
        .map(|_| {
            format!(
                "the server sent an answer of more than {MAX_MESSAGE_VALUES} JSON values \
                 ({} bytes), over the most one MCP message may hold (the reader's memory grows \
                 with each; a `tools/list` page of that many must be split into pages)",
                line.len()
            )
        })
}

/// Counts the server's own requests and notifications in one line; past a bound, the reason
/// to stop.
pub(super) fn count_messages(seen: &mut Seen, kinds: &[Kind], line_bytes: usize) -> Option<String> {
    for kind in kinds {
        match kind {
            Kind::Answer => seen.notifications_since_answer = 0,
            Kind::Request(method) => {
                seen.server_requests += 1;
                seen.server_request_bytes = seen.server_request_bytes.saturating_add(line_bytes);
                if seen.first_server_method.is_none() {
                    seen.first_server_method = Some(clip(method));
                }
                if seen.server_requests > MAX_SERVER_REQUESTS
                    || seen.server_request_bytes > MAX_SERVER_REQUEST_BYTES
                {
                    return Some(format!(
                        "the server sent {} requests of its own ({} bytes; the first: {:?}), \
                         over the most one session answers ({MAX_SERVER_REQUESTS} requests, {} \
                         MiB)",
                        seen.server_requests,
                        seen.server_request_bytes,
                        seen.first_server_method.as_deref().unwrap_or(""),
                        MAX_SERVER_REQUEST_BYTES / (1024 * 1024),
                    ));
                }
            }
            Kind::Notification(method) => {
                seen.notifications_since_answer += 1;
                if seen.notifications_since_answer > MAX_SERVER_NOTIFICATIONS {
                    return Some(format!(
                        "the server sent more than {MAX_SERVER_NOTIFICATIONS} notifications \
                         without answering (the last: {:?})",
                        clip(method)
                    ));
                }
            }
        }
    }
    None
}

/// An answer holding an integer literal that does not fit 64 bits (which the SDK's JSON reader
/// would turn into a float, changing the schema we write): where it is, as precisely as the
/// raw line says (the tool's name, the path in the message, the column), and why it is
/// refused. One pass over the line; the rest runs on the error path only.
pub(super) fn wide_integer_in(line: &[u8]) -> Option<String> {
    let at = crate::document::wide_integer(line)?;
    let text = String::from_utf8_lossy(line);
    let path = crate::document::path_at(&text, at.start);
    let column = text.get(..at.start).map_or(at.start, |t| t.chars().count()) + 1;
    let literal = text.get(at).unwrap_or("");
    let value: Option<Value> = serde_json::from_str(&text).ok();
    let tool = path
        .windows(2)
        .position(|w| {
            matches!(&w[0], crate::document::Seg::Key(k) if k == "tools")
                && matches!(w[1], crate::document::Seg::Index(_))
        })
        .and_then(|i| {
            let mut node = value.as_ref()?;
            for seg in &path[..i + 2] {
                node = match seg {
                    crate::document::Seg::Key(k) => node.get(k)?,
                    crate::document::Seg::Index(n) => node.get(n)?,
                };
            }
            node.get("name")?.as_str().map(clip)
        });
    let id = value
        .as_ref()
        .and_then(|v| v.get("id"))
        .map(|id| format!(" (JSON-RPC id {id})"));
    Some(format!(
        "the server's answer{}{} holds, at {} (column {column} of its line), {}",
        id.unwrap_or_default(),
        tool.map(|t| format!(" for tool {t:?}")).unwrap_or_default(),
        if path.is_empty() {
            "the top".to_string()
        } else {
            crate::document::dotted(&path)
        },
        crate::document::wide_integer_message(literal)
            .replace("; write it", "; the server must write it"),
    ))
}

/// How one bounded line read ended.
#[derive(Debug, PartialEq)]
pub(super) enum LineRead {
    /// A whole line (with its newline, unless the stream ended) is in the buffer.
    Line,
    /// The line is longer than the limit: how many bytes it had (counted, not kept), and
    /// whether its end was seen.
    TooLong { bytes: u64, complete: bool },
    /// The stream ended (or failed) with nothing read.
    Eof,
}

/// Reads one line into `line`, never letting it grow past `max` bytes. A longer line is
/// counted to its end (or to a stall of [`OVERLONG_STALL`], or [`OVERLONG_COUNT_CAP`]) and
/// dropped.
pub(super) async fn read_line_bounded(
    reader: &mut (impl AsyncBufReadExt + Unpin),
    line: &mut Vec<u8>,
    max: usize,
) -> LineRead {
    while let Ok(available) = reader.fill_buf().await {
        if available.is_empty() {
            break;
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        if line.len() + take > max {
            let bytes = (line.len() + take) as u64;
            reader.consume(take);
            line.clear();
            if newline.is_some() {
                return LineRead::TooLong {
                    bytes,
                    complete: true,
                };
            }
            return count_rest_of_line(reader, bytes).await;
        }
        line.extend_from_slice(&available[..take]);
        reader.consume(take);
        if newline.is_some() {
            return LineRead::Line;
        }
    }
    if line.is_empty() {
        LineRead::Eof
    } else {
        LineRead::Line
    }
}

/// Counts (and drops) the rest of an over-long line.
pub(super) async fn count_rest_of_line(
    reader: &mut (impl AsyncBufReadExt + Unpin),
    mut bytes: u64,
) -> LineRead {
    while bytes < OVERLONG_COUNT_CAP {
        let available = match tokio::time::timeout(OVERLONG_STALL, reader.fill_buf()).await {
            Ok(Ok(a)) if !a.is_empty() => a,
            // The stream ended, failed or stalled: the line's end was not seen.
            _ => break,
        };
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        bytes += take as u64;
        reader.consume(take);
        if newline.is_some() {
            return LineRead::TooLong {
                bytes,
                complete: true,
            };
        }
    }
    LineRead::TooLong {
        bytes,
        complete: false,
    }
}

/// serde_json's (and so the SDK's) nesting limit: a 128th level is refused.
pub(super) const MAX_JSON_DEPTH: usize = 128;

/// What one stdout line of the server is.
#[derive(Debug, PartialEq)]
pub(super) enum Line {
    /// Only whitespace (the SDK skips it).
    Blank,
    /// One JSON-RPC message, or a batch.
    Messages(Vec<Kind>),
    /// Log text or JSON that is not a JSON-RPC message.
    Noise,
    /// JSON nested [`MAX_JSON_DEPTH`] levels or more: the SDK cannot read it either.
    TooDeep,
}

/// What one JSON-RPC message is, as far as bounding the server goes.
#[derive(Debug, PartialEq)]
pub(super) enum Kind {
    /// An answer (result or error) to one of our requests.
    Answer,
    /// A request of the server's own, with its method.
    Request(String),
    Notification(String),
}

/// The envelope of a JSON-RPC message; everything else is skipped unread (no JSON tree).
#[derive(Deserialize)]
pub(super) struct Envelope {
    jsonrpc: Option<String>,
    method: Option<String>,
    id: Option<IgnoredAny>,
}

impl Envelope {
    fn kind(self) -> Option<Kind> {
        if self.jsonrpc.as_deref() != Some("2.0") {
            return None;
        }
        Some(match (self.method, self.id) {
            (Some(m), Some(_)) => Kind::Request(m),
            (Some(m), None) => Kind::Notification(m),
            (None, _) => Kind::Answer,
        })
    }
}

pub(super) fn classify(line: &[u8]) -> Line {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Line::Blank;
    }
    // Skipping a value (serde's IgnoredAny) has no depth limit, so the depth is checked here.
    if nested_at_least(trimmed, MAX_JSON_DEPTH) {
        return if serde_json::from_slice::<IgnoredAny>(trimmed).is_ok() {
            Line::TooDeep
        } else {
            Line::Noise
        };
    }
    let kinds = if trimmed.starts_with(b"[") {
        match serde_json::from_slice::<Vec<Envelope>>(trimmed) {
            Ok(batch) if !batch.is_empty() => batch.into_iter().map(Envelope::kind).collect(),
            _ => None,
        }
    } else {
        serde_json::from_slice::<Envelope>(trimmed)
            .ok()
            .and_then(Envelope::kind)
            .map(|k| vec![k])
    };
    kinds.map_or(Line::Noise, Line::Messages)
}

/// Whether brackets outside strings nest `depth` levels deep somewhere in `text`.
pub(super) fn nested_at_least(text: &[u8], depth: usize) -> bool {
    let (mut level, mut in_string, mut escaped) = (0usize, false, false);
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                level += 1;
                if level >= depth {
                    return true;
                }
            }
            b']' | b'}' => level = level.saturating_sub(1),
            _ => {}
        }
    }
    false
}

pub(super) fn note_noise(seen: &Shared, line: String) {
    let mut s = lock(seen);
    s.stdout_noise_count += 1;
    if s.stdout_noise.len() < 3 {
        s.stdout_noise.push(clip(&line));
    }
}

pub(super) async fn read_stderr(stderr: impl AsyncRead + Unpin, seen: Shared) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(1024 * 1024)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = clip(String::from_utf8_lossy(&line).trim_end());
        let mut s = lock(&seen);
        if s.stderr_tail.len() == STDERR_TAIL_LINES {
            s.stderr_tail.pop_front();
        }
        s.stderr_tail.push_back(text);
    }
}

pub(super) fn clip(s: &str) -> String {
    match s.char_indices().nth(MAX_NOTED_LINE_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
