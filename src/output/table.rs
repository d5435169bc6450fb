//! Tables as text, Markdown and CSV, and the escaping of what goes into their cells.

/// The widest a cell between the first and the last column of a plain-text table is printed:
/// a longer cell wraps onto lines of its own below, so one long value does not push every
/// column after it to the right. The first column names the row (a tool id, a quantity) and
/// the last has nothing after it: both stay whole. CSV and JSON keep every value whole.
pub const MAX_CELL_WIDTH: usize = 40;

/// A plain-text table with aligned columns; `right` marks numeric columns. A middle cell wider
/// than [`MAX_CELL_WIDTH`] wraps at spaces (a longer word is cut). Every cell is shown through
/// [`super::terminal_text`]: a control character in a tool name is an escape, never a cursor
/// move, an escape sequence or a new row.
pub fn text_table(headers: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let last = headers.len().saturating_sub(1);
    let wrapped: Vec<Vec<Vec<String>>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .map(|(i, cell)| {
                    let cell = super::terminal_text(cell);
                    if i == 0 || i == last {
                        vec![cell.into_owned()]
                    } else {
                        wrap_cell(&cell, MAX_CELL_WIDTH)
                    }
                })
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = headers
        .iter()
        .map(|h| super::terminal_text(h).chars().count())
        .collect();
    for row in &wrapped {
        for (i, lines) in row.iter().enumerate() {
            for l in lines {
                widths[i] = widths[i].max(l.chars().count());
            }
        }
    }
    let mut out = String::new();
    let line = |cells: &[String], out: &mut String| {
        let mut first = true;
        for (i, c) in cells.iter().enumerate() {
            if !first {
                out.push_str("  ");
            }
            first = false;
            let pad = widths[i] - c.chars().count();
            if right.get(i).copied().unwrap_or(false) {
                out.push_str(&" ".repeat(pad));
                out.push_str(c);
            } else {
                out.push_str(c);
                if i + 1 < cells.len() {
                    out.push_str(&" ".repeat(pad));
                }
            }
        }
        out.push('\n');
    };
    let h: Vec<String> = headers
        .iter()
        .map(|h| super::terminal_text(h).into_owned())
        .collect();
    line(&h, &mut out);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(&rule, &mut out);
    for row in &wrapped {
        let height = row.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let cells: Vec<String> = row
                .iter()
                .map(|lines| lines.get(k).cloned().unwrap_or_default())
                .collect();
            line(&cells, &mut out);
        }
    }
    out
}

/// `cell` in lines of at most `width` characters, broken at spaces; a word longer than
/// `width` is cut into pieces. A cell that fits is one line, unchanged.
fn wrap_cell(cell: &str, width: usize) -> Vec<String> {
    if cell.chars().count() <= width {
        return vec![cell.to_string()];
    }
    // An indented cell (a reason under its parent) keeps its indent on every line.
    let indent = cell.len() - cell.trim_start_matches(' ').len();
    let width = width.saturating_sub(indent).max(1);
    let pad = " ".repeat(indent);
    let mut lines = Vec::new();
    let mut current = String::new();
    let mut len = 0;
    for word in cell.split(' ').filter(|w| !w.is_empty()) {
        let mut chars: Vec<char> = word.chars().collect();
        // A word that fits nowhere is cut to the width, piece by piece.
        while chars.len() > width {
            if len > 0 {
                lines.push(std::mem::take(&mut current));
                len = 0;
            }
            lines.push(chars[..width].iter().collect());
            chars.drain(..width);
        }
        let n = chars.len();
        if n == 0 {
            continue;
        }
        if len > 0 && len + 1 + n > width {
            lines.push(std::mem::take(&mut current));
            len = 0;
        }
        if len > 0 {
            current.push(' ');
            len += 1;
        }
        current.extend(chars);
        len += n;
    }
    if len > 0 || lines.is_empty() {
        lines.push(current);
    }
    lines.into_iter().map(|l| format!("{pad}{l}")).collect()
}

/// `text` as a Markdown code span that nothing in it can end: control characters (a line
/// break would end a table row or a heading) written as escapes, and a fence of one backtick
/// more than the longest run inside. Inside a code span `<script>`, `#` and `*` are text.
pub fn md_code(text: &str) -> String {
    let clean = visible_controls(text);
    let mut longest = 0;
    let mut run = 0;
    for c in clean.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    if longest == 0 && !clean.is_empty() {
        return format!("`{clean}`");
    }
    let fence = "`".repeat(longest + 1);
    format!("{fence} {clean} {fence}")
}

/// `text` as plain Markdown text inside a line: control characters written as escapes (so no
/// line break can start a heading or end a row), and the characters that open HTML, links,
/// emphasis or code escaped with a backslash; `_` only where it could open emphasis (not
/// inside a word, `parse_config` stays as written). `|` is [`md_table`]'s.
pub fn md_text(text: &str) -> String {
    let clean = visible_controls(text);
    let chars: Vec<char> = clean.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let intraword = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        let escape = match c {
            '\\' | '`' | '<' | '>' | '[' | ']' | '*' => true,
            '_' => !(intraword(i.checked_sub(1)) && intraword(Some(i + 1))),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `text` as one Markdown paragraph of plain text: every run of whitespace (line breaks
/// included) one space, [`md_text`]'s escapes, and the characters that would start or make a
/// block escaped too (`#` a heading, `|` a table, `-`, `+`, `=` and `1.` a list or a rule,
/// `~` a fence). For a user's multi-line text (a scenario's description): a blank line, a
/// table or a heading in it stays text.
pub fn md_paragraph(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let joined = md_text(&words.join(" "));
    let mut out = String::with_capacity(joined.len() + 8);
    for (i, c) in joined.char_indices() {
        let block = match c {
            '#' | '|' | '~' => true,
            '-' | '+' | '=' => i == 0,
            '.' | ')' => joined[..i].chars().all(|d| d.is_ascii_digit()) && i > 0,
            _ => false,
        };
        if block {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A name or id of the user's (a tool id, a query id, a scorer name, a file) where a view puts
/// it: a code span in Markdown ([`md_code`]: nothing in it opens HTML or a link, or ends the
/// row or the line), control characters shown as escapes for a terminal
/// ([`super::terminal_text`]), the value as it is in CSV and JSON.
pub fn code_for(format: super::Format, text: &str) -> String {
    match format {
        super::Format::Md if !text.is_empty() => md_code(text),
        super::Format::Table | super::Format::Md => super::terminal_text(text).into_owned(),
        super::Format::Csv | super::Format::Json => text.to_string(),
    }
}

/// Text of the user's inside a sentence: [`md_text`] in Markdown; elsewhere with control
/// characters shown as escapes ([`super::terminal_text`]), since a sentence is not a table cell.
pub fn words_for(format: super::Format, text: &str) -> String {
    if format == super::Format::Md {
        md_text(text)
    } else {
        super::terminal_text(text).into_owned()
    }
}

/// Control characters as `\n`, `\t`, `\u{..}`: visible, and never a line break.
fn visible_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// A CSV cell a spreadsheet will not run: text starting with `=`, `+`, `-`, `@`, a tab or a
/// carriage return is prefixed with `'` (OWASP's CSV injection guidance), unless the whole
/// cell is a number (`-0.5`, `-inf`) or made only of digits, signs, points, `e` and `;`
/// (rank lists such as `-;4`, "not found" written `-`): with no letter, `(`, `|` or `!` a
/// formula can call nothing.
pub fn csv_cell(cell: &str) -> String {
    let risky = cell
        .chars()
        .next()
        .is_some_and(|c| matches!(c, '=' | '+' | '-' | '@' | '\t' | '\r'));
    let inert = |c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | ';' | 'e' | 'E');
    if risky && cell.parse::<f64>().is_err() && !cell.chars().all(inert) {
        format!("'{cell}")
    } else {
        cell.to_string()
    }
}

/// A Markdown table; `right` marks numeric columns.
pub fn md_table(headers: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let mut out = String::new();
    out.push_str("| ");
    out.push_str(&headers.join(" | "));
    out.push_str(" |\n|");
    for i in 0..headers.len() {
        out.push_str(if right.get(i).copied().unwrap_or(false) {
            "---:|"
        } else {
            "---|"
        });
    }
    out.push('\n');
    for row in rows {
        out.push_str("| ");
        // A line break would end the row: every cell is one line.
        let cells: Vec<String> = row
            .iter()
            .map(|c| visible_controls(c).replace('|', "\\|"))
            .collect();
        out.push_str(&cells.join(" | "));
        out.push_str(" |\n");
    }
    out
}

/// CSV with RFC 4180 quoting, from header names and text cells.
pub fn csv(headers: &[&str], rows: &[Vec<String>]) -> String {
    // Flexible: a caller's ragged row is its own business, not a panic.
    let mut w = ::csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    let records = std::iter::once(headers.iter().map(|h| csv_cell(h)).collect::<Vec<_>>())
        .chain(rows.iter().map(|r| r.iter().map(|c| csv_cell(c)).collect()));
    for record in records {
        w.write_record(record)
            .expect("writing to memory cannot fail");
    }
    into_text(w)
}

/// CSV of serde rows: the columns are the row type's fields in order, nested structs (and
/// `#[serde(flatten)]`) spread into their own fields, so a row can be a result type as it is.
/// Every command that writes a table of one kind writes the same columns; an empty table keeps
/// its header. Empty cell: `None`. Lists: items joined by `;`.
pub fn csv_rows<T: serde::Serialize + Default>(rows: &[T]) -> String {
    let (header, records) = serde_table(rows);
    let mut w = ::csv::Writer::from_writer(Vec::new());
    for record in std::iter::once(&header).chain(&records) {
        w.write_record(record.iter().map(|c| csv_cell(c)))
            .expect("writing to memory cannot fail");
    }
    into_text(w)
}

/// Serde rows as a header and text cells (what `csv_rows` writes; tables print the same).
pub fn serde_table<T: serde::Serialize + Default>(rows: &[T]) -> (Vec<String>, Vec<Vec<String>>) {
    let header: Vec<String> = cells(&T::default()).into_iter().map(|(k, _)| k).collect();
    assert!(
        header
            .iter()
            .enumerate()
            .all(|(i, h)| !header[..i].contains(h)),
        "column names of a CSV row are unique: {header:?}"
    );
    let records = rows
        .iter()
        .map(|row| {
            let mut cells = cells(row);
            // Keyed, so a field a row skips (`skip_serializing_if`) is an empty cell, not a
            // shift; the header comes from the default row, so row types must not skip fields.
            header
                .iter()
                .map(|h| {
                    cells
                        .iter_mut()
                        .find(|(k, _)| k == h)
                        .map(|(_, v)| std::mem::take(v))
                        .unwrap_or_default()
                })
                .collect()
        })
        .collect();
    (header, records)
}

/// A row's leaf fields, in order, as (column, text).
fn cells<T: serde::Serialize>(row: &T) -> Vec<(String, String)> {
    fn walk(value: serde_json::Value, out: &mut Vec<(String, String)>) {
        if let serde_json::Value::Object(map) = value {
            for (k, v) in map {
                match v {
                    serde_json::Value::Object(_) => walk(v, out),
                    other => out.push((k, cell(&other))),
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(
        serde_json::to_value(row).expect("result rows always serialize"),
        &mut out,
    );
    out
}

fn cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => items.iter().map(cell).collect::<Vec<_>>().join(";"),
        other => other.to_string(),
    }
}

fn into_text(w: ::csv::Writer<Vec<u8>>) -> String {
    let bytes = w.into_inner().expect("writing to memory cannot fail");
    String::from_utf8(bytes).expect("cells are UTF-8 strings")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A description with blank lines, a table and a heading is one paragraph of text: no
    /// line of it starts a block, and pulldown-cmark (the report's HTML) sees one `<p>`.
    #[test]
    fn a_paragraph_of_the_users_text_makes_no_block() {
        let text = "ok\n\n| forged | table |\n|---|---|\n| eager | $0.00 |\n\n# injected heading\n- item\n1. one <b>x</b>";
        let md = md_paragraph(text);
        assert_eq!(
            md,
            "ok \\| forged \\| table \\| \\|---\\|---\\| \\| eager \\| $0.00 \\| \\# injected heading - item 1. one \\<b\\>x\\</b\\>"
        );
        assert_eq!(md_paragraph("- a"), "\\- a");
        assert_eq!(md_paragraph("12. a"), "12\\. a");
        assert_eq!(md_paragraph("=== é"), "\\=== é");
        let mut html = String::new();
        pulldown_cmark::html::push_html(
            &mut html,
            pulldown_cmark::Parser::new_ext(&md, pulldown_cmark::Options::all()),
        );
        assert!(html.starts_with("<p>ok | forged | table |"), "{html}");
        assert_eq!(html.matches("<p>").count(), 1, "{html}");
        assert!(!html.contains("<table") && !html.contains("<h1") && !html.contains("<b>"));
    }
    #[test]
    fn a_long_cell_wraps_below_its_row_and_keeps_the_columns_aligned() {
        let long = format!(
            "{} {}",
            "a".repeat(30),
            "deferred_list 1, history 1, tools 1, server 1"
        );
        let rows = vec![
            vec!["invalidations".to_string(), long.clone(), "9".to_string()],
            vec!["requests".to_string(), "13".to_string(), "1".to_string()],
        ];
        let t = text_table(&["row", "deferred", "n"], &rows, &[false, false, true]);
        let lines: Vec<&str> = t.lines().collect();
        // Header, rule, the long row on three lines, the short row on one.
        assert_eq!(lines.len(), 6, "{t}");
        let width = lines[1].chars().count();
        assert!(lines.iter().all(|l| l.chars().count() <= width), "{t}");
        assert!(
            width <= "invalidations".len() + 2 + MAX_CELL_WIDTH + 2 + 1,
            "{t}"
        );
        // Every word is still there, in order; the number stays on the row's first line.
        let col = lines[1].split("  ").nth(1).unwrap().len();
        assert!(col <= MAX_CELL_WIDTH, "{t}");
        let cell: Vec<&str> = lines[2..5]
            .iter()
            .map(|l| l[15..(15 + col).min(l.len())].trim())
            .collect();
        assert_eq!(cell.join(" "), long);
        assert!(lines[2].ends_with('9') && lines[5].ends_with('1'), "{t}");
        assert!(
            lines[3].starts_with(' ') && lines[3].trim_end().len() < width,
            "{t}"
        );
    }

    #[test]
    fn wrapping_cuts_a_word_longer_than_the_width_and_leaves_short_cells_alone() {
        assert_eq!(wrap_cell("short cell", 40), ["short cell"]);
        assert_eq!(wrap_cell("abcdefgh ij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap_cell("ab cd ef", 5), ["ab cd", "ef"]);
        assert_eq!(wrap_cell("  ab cd ef", 7), ["  ab cd", "  ef"]);
        // The first column (the row's name) and the last (nothing after it) stay whole.
        let long = "x ".repeat(30).trim_end().to_string();
        let t = text_table(
            &["tool", "why"],
            &[vec![long.clone(), long.clone()]],
            &[false, false],
        );
        assert_eq!(t.lines().count(), 3, "{t}");
        assert_eq!(t.lines().nth(2), Some(format!("{long}  {long}").as_str()));
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(
            csv(&["a", "b"], &[vec!["x,y".into(), "say \"hi\"".into()]]),
            "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n"
        );
    }

    #[test]
    fn serde_rows_give_named_columns_even_when_empty() {
        #[derive(serde::Serialize, Default)]
        struct Row {
            name: String,
            saved_pct: Option<f64>,
        }
        let rows = [Row {
            name: "a,b".into(),
            saved_pct: None,
        }];
        assert_eq!(csv_rows(&rows), "name,saved_pct\n\"a,b\",\n");
        assert_eq!(csv_rows::<Row>(&[]), "name,saved_pct\n");
        #[derive(serde::Serialize, Default)]
        struct Outer {
            id: u32,
            inner: Inner,
            tool: Option<String>,
            ok: bool,
        }
        #[derive(serde::Serialize, Default)]
        struct Inner {
            a: f64,
            list: Vec<u32>,
        }
        let rows = [Outer {
            id: 7,
            inner: Inner {
                a: 1.0,
                list: vec![1, 2],
            },
            tool: None,
            ok: true,
        }];
        assert_eq!(csv_rows(&rows), "id,a,list,tool,ok\n7,1.0,1;2,,true\n");
    }

    /// Names and query texts cannot break out of their code span, row or heading (#26).
    #[test]
    fn markdown_escapes_what_could_break_out() {
        assert_eq!(md_code("plain-name"), "`plain-name`");
        assert_eq!(md_code("a`b"), "`` a`b ``");
        assert_eq!(md_code("x``y"), "``` x``y ```");
        assert_eq!(md_code(""), "`  `");
        let hostile = "x`\n# heading\n<script>alert(1)</script>|";
        let code = md_code(hostile);
        assert!(!code.contains('\n'), "{code}");
        assert!(code.starts_with("`` ") && code.ends_with(" ``"), "{code}");
        assert!(code.contains("\\n# heading"), "{code}");
        let text = md_text("**bold** [link](x) <b>_i_</b> parse_config #1\r\n");
        assert_eq!(
            text,
            // Escapes of control characters are text too: a backslash before them.
            "\\*\\*bold\\*\\* \\[link\\](x) \\<b\\>\\_i\\_\\</b\\> parse_config #1\\\\r\\\\n"
        );
        let table = md_table(&["a"], &[vec!["one\ntwo|three".into()]], &[false]);
        assert_eq!(table.lines().count(), 3, "{table}");
        assert!(table.contains("one\\ntwo\\|three"), "{table}");
    }

    /// OWASP's CSV injection guidance: formula-leading text is prefixed, numbers are not.
    #[test]
    fn csv_cells_never_start_a_formula() {
        for (cell, want) in [
            ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
            ("+1+1", "+1+1"),
            ("+1+A1", "'+1+A1"),
            ("-x", "'-x"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("-0.5", "-0.5"),
            ("+3", "+3"),
            ("-", "-"),
            ("-;4", "-;4"),
            ("-inf", "-inf"),
            ("-1+cmd|x", "'-1+cmd|x"),
            ("1e-3", "1e-3"),
            ("a=b", "a=b"),
            ("", ""),
        ] {
            assert_eq!(csv_cell(cell), want, "{cell:?}");
        }
        let text = csv(
            &["id"],
            &[vec!["=HYPERLINK(\"x\")".into()], vec!["-2".into()]],
        );
        assert_eq!(text, "id\n\"'=HYPERLINK(\"\"x\"\")\"\n-2\n");
        #[derive(serde::Serialize, Default)]
        struct Row {
            name: String,
            n: i64,
        }
        let rows = csv_rows(&[Row {
            name: "@x".into(),
            n: -3,
        }]);
        assert_eq!(rows, "name,n\n'@x,-3\n");
    }

    /// A name holding ESC, CR, LF, `|` or backticks is one escaped cell of one row.
    #[test]
    fn control_characters_in_cells_are_escapes_in_text_tables() {
        let rows = vec![
            vec!["a\x1b[31mRED\rCR".to_string(), "1".into()],
            vec!["nl\nforged | row".to_string(), "2".into()],
        ];
        let t = text_table(&["tool", "n"], &rows, &[false, true]);
        assert_eq!(
            t,
            "tool              n\n\
             ----------------  -\n\
             a\\x1b[31mRED\\rCR  1\n\
             nl\\nforged | row  2\n"
        );
    }

    fn hostile_name() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::collection::vec(
            proptest::prop_oneof![
                proptest::char::range('a', 'z'),
                proptest::sample::select(vec![
                    '\n', '\r', '\t', '\x1b', '\x07', '\x7f', '\u{9b}', '\u{85}', '\u{2028}',
                    '\u{202e}', '|', '`', '<', '>', '[', ']', '#', '*', '_', '\\', ' ', 'é', '名',
                ]),
            ],
            0..24,
        )
        .prop_map(|c| c.into_iter().collect())
    }

    use proptest::prelude::*;

    fn rows_of(rows: &[Vec<String>], columns: usize) -> Vec<Vec<String>> {
        rows.iter().map(|r| r[..columns].to_vec()).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Hostile names through both human tables: no raw control character, and exactly one
        /// line per row (no forged row), whose first cell is the name as shown.
        #[test]
        fn hostile_names_never_forge_rows(names in proptest::collection::vec(hostile_name(), 1..6)) {
            let rows: Vec<Vec<String>> = names
                .iter()
                .map(|n| vec![n.clone(), md_code(n), "7".to_string()])
                .collect();
            // The first and last columns never wrap: one line per row, the name first.
            let text = text_table(&["tool", "code"], &rows_of(&rows, 2), &[false, false]);
            prop_assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
            prop_assert!(!text.contains('\u{2028}') && !text.contains('\u{202e}'), "{text:?}");
            let lines: Vec<&str> = text.lines().collect();
            prop_assert_eq!(lines.len(), 2 + names.len(), "{:?}", text);
            for (line, name) in lines[2..].iter().zip(&names) {
                prop_assert!(line.starts_with(&*crate::output::terminal_text(name)), "{text:?}");
            }
            let md = md_table(&["tool", "code", "n"], &rows, &[false, false, true]);
            let lines: Vec<&str> = md.lines().collect();
            prop_assert_eq!(lines.len(), 2 + names.len(), "{:?}", md);
            prop_assert!(!md.chars().any(|c| c.is_control() && c != '\n'), "{md:?}");
            for line in &lines[2..] {
                // Three cells: four unescaped pipes, the row's first and last characters.
                let unescaped = line
                    .char_indices()
                    .filter(|&(i, c)| c == '|' && !line[..i].ends_with('\\'))
                    .count();
                prop_assert!(line.starts_with("| ") && line.ends_with(" |"), "{line:?}");
                prop_assert_eq!(unescaped, 4, "{:?}", line);
            }
        }
    }

    #[test]
    fn text_table_aligns_columns() {
        let t = text_table(
            &["id", "n"],
            &[vec!["Read".into(), "12".into()]],
            &[false, true],
        );
        assert_eq!(t, "id     n\n----  --\nRead  12\n");
    }
}
