//! Output formats and the one place that writes result files. Renderers elsewhere are pure
//! functions to `String`; this module decides where the bytes go and writes files atomically
//! (a temporary file in the same folder, then a rename), so a file is whole or absent.

use std::io::Write;
use std::path::Path;
use std::str::FromStr;

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Table,
    Json,
    Csv,
    Md,
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "table" => Ok(Format::Table),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            "md" | "markdown" => Ok(Format::Md),
            _ => Err(format!(
                "unknown format {s:?}, expected one of: table, json, csv, md"
            )),
        }
    }
}

/// Writes `bytes` to `path` whole or not at all.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let err = |source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(err)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
    tmp.write_all(bytes).map_err(err)?;
    // tempfile creates 0600 files; results are meant to be shared like any other output.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(err)?;
    }
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

/// Sends output to the file given by `--out`, or to stdout.
pub fn emit(out: Option<&Path>, text: &str) -> Result<()> {
    match out {
        Some(p) => write_atomic(p, text.as_bytes()),
        None => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth reporting.
            match stdout
                .write_all(text.as_bytes())
                .and_then(|_| stdout.flush())
            {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                r => r.map_err(|source| Error::Write {
                    path: "<stdout>".into(),
                    source,
                }),
            }
        }
    }
}

/// JSON text with a trailing newline; stable because every map we emit is ordered.
pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("result types always serialize");
    s.push('\n');
    s
}

/// A plain-text table with aligned columns; `right` marks numeric columns.
pub fn text_table(headers: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
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
    let h: Vec<String> = headers.iter().map(|s| s.to_string()).collect();
    line(&h, &mut out);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(&rule, &mut out);
    for row in rows {
        line(row, &mut out);
    }
    out
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
        let cells: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
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
    let records = std::iter::once(headers.to_vec())
        .chain(rows.iter().map(|r| r.iter().map(String::as_str).collect()));
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
        w.write_record(record)
            .expect("writing to memory cannot fail");
    }
    into_text(w)
}

/// Serde rows as a header and text cells (what `csv_rows` writes; tables print the same).
pub fn serde_table<T: serde::Serialize + Default>(rows: &[T]) -> (Vec<String>, Vec<Vec<String>>) {
    let header: Vec<String> = cells(&T::default()).into_iter().map(|(k, _)| k).collect();
    debug_assert!(
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

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/out.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(
            std::fs::read_dir(dir.path().join("sub")).unwrap().count(),
            1
        );
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
