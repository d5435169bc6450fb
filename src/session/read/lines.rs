//! The one read path for session logs: a file opened through `crate::input::open` (regular
//! files only, never blocking on a FIFO) and read line by line through a bounded buffer, so a
//! hostile file (a line with no end, a file that never stops growing) costs bounded memory.

use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::error::{Error, Position, Result};

/// Longest line read (one JSONL record). Claude Code records holding a whole file read stay
/// far below this; a longer line is a damaged or hostile file.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Largest session file read (a multi-day session is tens of megabytes).
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// One line handed to the caller.
pub struct Line<'a> {
    /// 1-based line number.
    pub number: usize,
    /// The line without its newline (and without a `\r` before it).
    pub bytes: &'a [u8],
    /// The last line of the file, with no newline after it: a record still being written.
    pub unterminated: bool,
}

/// What [`for_each_line`] saw besides the lines it handed over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineStats {
    pub lines: usize,
    pub bytes: u64,
    /// Lines over [`MAX_LINE_BYTES`], skipped (only with `skip_long`).
    pub too_long: usize,
}

/// Calls `f` for every non-empty line of `path`, reading at most `MAX_LINE_BYTES` of a line
/// into memory. A longer line is an error at its line number unless `skip_long`.
pub fn for_each_line(
    path: &Path,
    skip_long: bool,
    mut f: impl FnMut(Line<'_>) -> Result<()>,
) -> Result<LineStats> {
    let io = |e: std::io::Error| Error::input(path, None, format!("cannot read: {e}"));
    let file = crate::input::open(path)?;
    let len = file.metadata().map_err(io)?.len();
    if len > MAX_FILE_BYTES {
        return Err(Error::input(
            path,
            None,
            format!("file is {len} bytes, larger than the limit of {MAX_FILE_BYTES} bytes"),
        ));
    }
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut stats = LineStats::default();
    let mut buf: Vec<u8> = Vec::new();
    loop {
        buf.clear();
        let (read, terminated, overflow) = read_bounded(&mut reader, &mut buf).map_err(io)?;
        if read == 0 {
            break;
        }
        stats.lines += 1;
        stats.bytes += read as u64;
        // The size was checked at open; a file still growing stops here.
        if stats.bytes > MAX_FILE_BYTES {
            return Err(Error::input(
                path,
                None,
                format!("file grew past the limit of {MAX_FILE_BYTES} bytes while being read"),
            ));
        }
        if overflow {
            if skip_long {
                stats.too_long += 1;
                continue;
            }
            return Err(Error::input(
                path,
                Some(Position {
                    line: stats.lines,
                    column: 1,
                }),
                format!("line longer than {MAX_LINE_BYTES} bytes"),
            ));
        }
        let mut bytes = &buf[..];
        if let Some(stripped) = bytes.strip_suffix(b"\r") {
            bytes = stripped;
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        f(Line {
            number: stats.lines,
            bytes,
            unterminated: !terminated,
        })?;
    }
    Ok(stats)
}

/// Reads one line into `buf` (newline excluded), keeping at most `MAX_LINE_BYTES`; the rest
/// of an overlong line is consumed and dropped. Returns (bytes consumed, ended by a newline,
/// overflowed).
fn read_bounded(r: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<(usize, bool, bool)> {
    let mut read = 0;
    let mut overflow = false;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok((read, false, overflow));
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !overflow {
            if buf.len() + take > MAX_LINE_BYTES {
                overflow = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        let consumed = take + usize::from(done);
        r.consume(consumed);
        read += consumed;
        if done {
            return Ok((read, true, overflow));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(text: &[u8]) -> Vec<(usize, Vec<u8>, bool)> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, text).unwrap();
        let mut out = Vec::new();
        for_each_line(&p, false, |l| {
            out.push((l.number, l.bytes.to_vec(), l.unterminated));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn numbers_lines_skips_blank_ones_and_flags_an_unterminated_last_line() {
        let got = lines_of(b"{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\"");
        assert_eq!(
            got,
            vec![
                (1, b"{\"a\":1}".to_vec(), false),
                (4, b"{\"b\":2}".to_vec(), false),
                (5, b"{\"c\"".to_vec(), true),
            ]
        );
    }

    #[test]
    fn an_overlong_line_is_dropped_without_being_kept() {
        let mut r = std::io::Cursor::new(vec![b'x'; MAX_LINE_BYTES + 10]);
        let mut buf = Vec::new();
        let (read, terminated, overflow) = read_bounded(&mut r, &mut buf).unwrap();
        assert_eq!(read, MAX_LINE_BYTES + 10);
        assert!(!terminated);
        assert!(overflow);
        assert!(buf.len() <= MAX_LINE_BYTES);
    }
}
