//! The import table of `ARCHITECTURE.md` ("What may import what"), enforced: every
//! `crate::<module>` reference in a top-level module's code (its `#[cfg(test)]` part and its
//! `tests/` folders aside) must name a module its row allows, every module of `lib.rs` has a
//! row, and the table itself has no loop, so no import loop between top-level modules can
//! come back unnoticed. The binary (`main.rs`, `cli.rs`, `commands/`) reaches the library as
//! `toolbudget::` and may use all of it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ARCHITECTURE: &str = include_str!("../ARCHITECTURE.md");
const LIB: &str = include_str!("lib.rs");

/// Macros exported at the crate root, by the module that defines them.
const MACROS: [(&str, &str); 2] = [("named_enum", "names"), ("path", "document")];

/// The table's rows: module → the modules it may import.
fn table() -> BTreeMap<String, BTreeSet<String>> {
    let section = ARCHITECTURE
        .split("## What may import what")
        .nth(1)
        .expect("ARCHITECTURE.md has a section \"What may import what\"");
    let names = |cell: &str| -> BTreeSet<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(|n| n.trim_end_matches('/').to_string())
            .collect()
    };
    section
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').collect();
            let module = names(cells[1]).into_iter().next().expect("a module");
            (module, names(cells[2]))
        })
        .collect()
}

/// The top-level modules `lib.rs` declares.
fn modules() -> Vec<String> {
    LIB.lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect()
}

fn files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .expect("a source folder")
            .map(|e| e.expect("a folder entry").path())
            .collect();
        entries.sort();
        for e in entries {
            if e.file_name().is_some_and(|n| n != "tests") {
                files(&e, out);
            }
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// The top-level modules a module's code names, each with a file that names it.
fn imports(src: &Path, module: &str) -> BTreeMap<String, PathBuf> {
    let mut paths = Vec::new();
    let folder = src.join(module);
    if folder.is_dir() {
        files(&folder, &mut paths);
    } else {
        paths.push(src.join(format!("{module}.rs")));
    }
    let mut out = BTreeMap::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("a source file");
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                let name = MACROS
                    .iter()
                    .find(|(m, _)| *m == name)
                    .map_or(name.clone(), |(_, owner)| (*owner).to_string());
                if !name.is_empty() && name != module {
                    out.entry(name).or_insert_with(|| path.clone());
                }
            }
        }
    }
    out
}

#[test]
fn every_module_imports_only_what_the_table_allows() {
    let table = table();
    let modules = modules();
    assert!(modules.len() > 10, "lib.rs read: {modules:?}");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for m in &modules {
        let Some(allowed) = table.get(m) else {
            wrong.push(format!("{m}: no row in ARCHITECTURE.md's import table"));
            continue;
        };
        for (used, file) in imports(&src, m) {
            if !allowed.contains(&used) {
                wrong.push(format!("{m} imports {used} ({})", file.display()));
            }
        }
    }
    for m in table.keys() {
        if !modules.contains(m) {
            wrong.push(format!("{m}: a row for a module lib.rs does not declare"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_import_table_has_no_loop() {
    let table = table();
    // Kahn: repeatedly remove modules whose allowed imports are all removed.
    let mut left: BTreeMap<&str, BTreeSet<&str>> = table
        .iter()
        .map(|(m, a)| (m.as_str(), a.iter().map(String::as_str).collect()))
        .collect();
    while let Some(done) = left
        .iter()
        .find(|(_, a)| a.iter().all(|d| !left.contains_key(d)))
        .map(|(m, _)| *m)
    {
        left.remove(done);
    }
    assert!(left.is_empty(), "modules in a loop: {:?}", left.keys());
}

#[test]
fn the_scan_sees_imports_and_ignores_tests_and_comments() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let view = imports(&src, "view");
    assert!(view.contains_key("eval") && view.contains_key("simulate"));
    // simulate's tests render through view; its code does not.
    assert!(!imports(&src, "simulate").contains_key("view"));
    // tokenize's doc comment names crate::counter; its code does not.
    assert!(!imports(&src, "tokenize").contains_key("counter"));
    assert!(imports(&src, "output").contains_key("names"), "named_enum!");
}

/// What a command may name of the library: it resolves its arguments into an `experiment`
/// plan, runs the one experiment function, renders with `view` and writes with `output`;
/// nothing past `experiment` into the domain modules (ARCHITECTURE.md, "What may import what").
const COMMANDS_MAY_USE: [&str; 7] = [
    "experiment",
    "view",
    "output",
    "error",
    "progress",
    "number",
    "input",
];

#[test]
fn commands_reach_the_domain_only_through_experiment() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands");
    let mut paths = Vec::new();
    files(&dir, &mut paths);
    assert!(paths.len() > 10, "commands read: {paths:?}");
    let mut wrong = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("a source file");
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("toolbudget::") {
                let name: String = line[i + "toolbudget::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if !COMMANDS_MAY_USE.contains(&name.as_str()) {
                    wrong.push(format!("{} uses toolbudget::{name}", path.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
