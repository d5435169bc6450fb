//! A child process spoken to in lines: one JSON message per line on its stdin, one per line
//! back on its stdout, with deadlines on every answer.
//!
//! Three threads do the blocking work so that no pipe can stall the caller: a writer (a child
//! that stops reading its stdin blocks only the writer), a reader (lines bounded by
//! [`MAX_LINE_BYTES`], so a child that never writes a newline cannot grow our memory) and a
//! stderr reader that keeps the last lines for error messages. The caller waits on the reader's
//! channel with a deadline. The child runs in its own process group, registered with
//! `output`'s interrupt handler, so it is killed with its own children when toolbudget exits,
//! also on SIGINT; dropping the handle closes its stdin, gives it a moment to exit, then kills
//! the group.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::mcp::ServerCommand;

/// Longest line accepted from the child: an answer carries at most a few thousand results.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Lines of the child's stderr kept for an error message.
pub const STDERR_TAIL_LINES: usize = 20;
/// Longest stderr line kept, in characters.
const MAX_STDERR_LINE_CHARS: usize = 300;
/// How long a child gets to exit on its own once its stdin is closed before it is killed.
const GRACEFUL_EXIT: Duration = Duration::from_secs(1);
/// Lines queued for the writer before `send` waits: the protocol is request/answer, so more
/// than a few pending lines means the child stopped reading.
const WRITE_QUEUE: usize = 4;

/// What the reader thread saw on the child's stdout.
enum Event {
    Line(Vec<u8>),
    /// A line longer than [`MAX_LINE_BYTES`] (the rest of the stream is not read).
    TooLong,
    /// End of stdout: the child exited or closed it.
    Closed,
    Failed(String),
}

/// Why an exchange with the child failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    Spawn(String),
    /// No line within the deadline.
    Timeout(Duration),
    /// The child closed its stdout (usually: it exited); how it ended when known.
    Closed(Option<String>),
    TooLong,
    Io(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Spawn(why) => write!(f, "cannot start it: {why}"),
            Failure::Timeout(d) => write!(f, "no answer within {:.1} s", d.as_secs_f64()),
            Failure::Closed(Some(how)) => write!(f, "it {how} before answering"),
            Failure::Closed(None) => f.write_str("it closed its stdout before answering"),
            Failure::TooLong => write!(
                f,
                "it wrote a line longer than {} MiB",
                MAX_LINE_BYTES / (1024 * 1024)
            ),
            Failure::Io(why) => write!(f, "reading its answer failed: {why}"),
        }
    }
}

/// A running child with line-based JSON over its pipes.
pub struct LineProcess {
    child: Child,
    pgid: Option<i32>,
    to_child: Option<SyncSender<Vec<u8>>>,
    from_child: Receiver<Event>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// Set after a failure that leaves the stream unusable: every later call fails with it.
    broken: Option<Failure>,
}

impl LineProcess {
    /// Starts the command with piped stdin, stdout and stderr, in its own process group.
    pub fn spawn(command: &ServerCommand) -> Result<LineProcess, Failure> {
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args)
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &command.cwd {
            cmd.current_dir(dir);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd.spawn().map_err(|e| Failure::Spawn(e.to_string()))?;
        let pgid = i32::try_from(child.id()).ok();
        if let Some(g) = pgid {
            // An interrupt now kills the group; one that came between the spawn and this line
            // leaves the child without its parent, and its stdin at end of file: it exits.
            crate::process::register_child_group(g);
        }
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (to_child, queue) = mpsc::sync_channel::<Vec<u8>>(WRITE_QUEUE);
        std::thread::spawn(move || write_lines(stdin, &queue));
        let (tx, from_child) = mpsc::channel();
        std::thread::spawn(move || read_lines(stdout, &tx));
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail = stderr_tail.clone();
        std::thread::spawn(move || read_stderr(stderr, &tail));
        Ok(LineProcess {
            child,
            pgid,
            to_child: Some(to_child),
            from_child,
            stderr_tail,
            broken: None,
        })
    }

    /// Queues one line (a newline is added) for the child's stdin.
    pub fn send(&mut self, mut line: Vec<u8>) -> Result<(), Failure> {
        if let Some(f) = &self.broken {
            return Err(f.clone());
        }
        line.push(b'\n');
        let sent = self.to_child.as_ref().map(|tx| tx.send(line));
        match sent {
            Some(Ok(())) => Ok(()),
            // The writer ended: the child closed its stdin, which it does by exiting.
            _ => Err(self.fail(Failure::Closed(None))),
        }
    }

    /// The next line from the child's stdout, waiting until `deadline`.
    pub fn receive(&mut self, deadline: Instant) -> Result<Vec<u8>, Failure> {
        if let Some(f) = &self.broken {
            return Err(f.clone());
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.from_child.recv_timeout(wait) {
            Ok(Event::Line(line)) => Ok(line),
            Ok(Event::TooLong) => Err(self.fail(Failure::TooLong)),
            Ok(Event::Failed(why)) => Err(self.fail(Failure::Io(why))),
            Ok(Event::Closed) | Err(RecvTimeoutError::Disconnected) => {
                let how = self.exit_status(Duration::from_millis(200));
                Err(self.fail(Failure::Closed(how)))
            }
            Err(RecvTimeoutError::Timeout) => {
                // Whatever it answers later would be read as the answer to the next request.
                Err(self.fail(Failure::Timeout(wait)))
            }
        }
    }

    fn fail(&mut self, failure: Failure) -> Failure {
        self.broken = Some(failure.clone());
        self.kill();
        failure
    }

    /// The last lines the child wrote on stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        // Give the stderr reader a moment to record what a crashing child wrote last.
        std::thread::sleep(Duration::from_millis(20));
        lock(&self.stderr_tail).iter().cloned().collect()
    }

    /// How the child ended, if it has within `wait`.
    fn exit_status(&mut self, wait: Duration) -> Option<String> {
        let start = Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(describe_exit(status)),
                Ok(None) if start.elapsed() < wait => std::thread::sleep(Duration::from_millis(5)),
                _ => return None,
            }
        }
    }

    /// Kills the child's process group and reaps the child.
    fn kill(&mut self) {
        self.to_child = None;
        kill_group(self.pgid);
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(g) = self.pgid.take() {
            crate::process::release_child_group(g);
        }
    }
}

impl Drop for LineProcess {
    fn drop(&mut self) {
        if self.pgid.is_none() {
            return;
        }
        // Closing stdin is the protocol's "done": a well-behaved child exits on its own.
        self.to_child = None;
        let _ = self.exit_status(GRACEFUL_EXIT);
        self.kill();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write_lines(mut stdin: ChildStdin, queue: &Receiver<Vec<u8>>) {
    while let Ok(line) = queue.recv() {
        if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
            return;
        }
    }
    // Dropping stdin here closes the child's input.
}

fn read_lines(stdout: impl Read, tx: &mpsc::Sender<Event>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        match (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(0) => {
                let _ = tx.send(Event::Closed);
                return;
            }
            Ok(_) if line.len() > MAX_LINE_BYTES => {
                let _ = tx.send(Event::TooLong);
                return;
            }
            Ok(_) => {
                let blank = line.iter().all(u8::is_ascii_whitespace);
                if !blank && tx.send(Event::Line(line)).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let _ = tx.send(Event::Failed(e.to_string()));
                return;
            }
        }
    }
}

fn read_stderr(stderr: impl Read, tail: &Mutex<VecDeque<String>>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader).take(1024 * 1024).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        let clipped = match text.char_indices().nth(MAX_STDERR_LINE_CHARS) {
            Some((i, _)) => format!("{}…", &text[..i]),
            None => text.to_string(),
        };
        let mut t = lock(tail);
        if t.len() == STDERR_TAIL_LINES {
            t.pop_front();
        }
        t.push_back(clipped);
    }
}

/// Kills what is left of the child's process group (a wrapper's children too).
fn kill_group(pgid: Option<i32>) {
    #[cfg(unix)]
    if let Some(g) = pgid {
        // SAFETY: killpg only sends a signal; the group id is our child's pid, which Linux does
        // not reuse while the group has members.
        unsafe {
            libc::killpg(g, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

fn describe_exit(status: std::process::ExitStatus) -> String {
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
