//! Text for a terminal: the one escaping of what reaches a terminal from outside (tool names in
//! a text table, an external scorer's or MCP server's name and error text on stderr). Control
//! characters are shown as escapes, so nothing can move the cursor, clear the screen, set the
//! title, start a line (a newline in a tool name forged a table row) or hide text; a message
//! line is also bounded in length (a scorer's 10 MB error message reached stderr whole).

use std::borrow::Cow;

/// Most characters of external text one message line shows ([`terminal_line`]); the rest is
/// counted, not shown.
pub const MAX_TERMINAL_CHARS: usize = 500;

/// Whether `c` must not reach a terminal as itself: C0 and C1 control characters and DEL
/// (escape sequences, CR, LF, BEL, backspace), the line and paragraph separators, and the
/// bidirectional overrides and isolates that reorder what is shown.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// `c` as an escape: `\n`, `\r`, `\t`, `\x1b` (ASCII), `\u{9b}` (others).
fn escaped(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_ascii() => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// `text` with every control character written as an escape (`ESC` as `\x1b`, a newline as
/// `\n`): one line, shown as it is written, whatever it holds. Text without one is returned
/// as it is.
pub fn terminal_text(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            escaped(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`terminal_text`] of at most [`MAX_TERMINAL_CHARS`] characters: a longer text is cut and
/// ends with `… (N more bytes)`, N the bytes of `text` not shown. For external text put into
/// a message (an error a process sent, a name it reported).
pub fn terminal_line(text: &str) -> String {
    let mut out = String::new();
    for (shown, (i, c)) in text.char_indices().enumerate() {
        if shown >= MAX_TERMINAL_CHARS {
            out.push_str(&format!("… ({} more bytes)", text.len() - i));
            return out;
        }
        if hidden(c) {
            escaped(c, &mut out);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_as_escapes() {
        assert_eq!(terminal_text("plain é 名"), "plain é 名");
        assert_eq!(
            terminal_text("a\x1b[31mRED\x1b]0;t\x07\r\nrow\t\u{7f}\u{9b}2J\u{202e}x"),
            "a\\x1b[31mRED\\x1b]0;t\\x07\\r\\nrow\\t\\x7f\\u{9b}2J\\u{202e}x"
        );
        // Escaping twice changes nothing: an escape holds no control character.
        let once = terminal_text("x\ny").into_owned();
        assert_eq!(terminal_text(&once), once);
    }

    #[test]
    fn a_message_line_is_bounded() {
        assert_eq!(terminal_line("short\n"), "short\\n");
        let long = "E".repeat(10 * 1024 * 1024);
        let line = terminal_line(&long);
        assert_eq!(
            line,
            format!(
                "{}… ({} more bytes)",
                "E".repeat(MAX_TERMINAL_CHARS),
                long.len() - MAX_TERMINAL_CHARS
            )
        );
        let line = terminal_line(&"é\n".repeat(1000));
        assert!(!line.contains('\n'));
        assert!(line.ends_with("… (2250 more bytes)"), "{line}");
    }
}
