//! The doc tests: every ```console block of README.md, CONTRIBUTING.md and docs/**/*.md (not
//! docs/example-report/) is run and its shown output compared, so that the docs cannot drift.
//!
//! In a block, `$ CMD` is a command (a trailing ` \` continues it) and the lines up to the next
//! `$ ` or the fence are its expected stdout: a line `...` matches any number of lines, `...`
//! within a line any text, trailing whitespace is ignored, no lines means "not checked, exit 0".
//! A last line `[exit: N]` requires exit code N and compares stdout followed by stderr.
//! Commands run under `bash -c` in a scratch folder per block (`fixtures`, `scenarios`,
//! `examples`, `docs`, `baselines`, `scripts` link to the repository's, `../shared` to the
//! repository's `../shared`), the built `toolbudget` first on PATH, `cargo run --release --`
//! read as `toolbudget`, TOOLBUDGET_CACHE_DIR in the scratch folder, no API keys.
//! `console,model` and `console,shared` blocks run when the model or ../shared/data is there;
//! `console,no-run` blocks are checked, not run: `toolbudget` arguments parse (the binary's
//! TOOLBUDGET_PARSE_ONLY), `just X` names a recipe, `bash scripts/X` an existing file.
//!
//! Also here: the CLI reference (docs/reference/cli.md) generated from the clap definitions.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rayon::prelude::*;

/// The folders a block's scratch folder links to the repository's.
const LINKED: [&str; 6] = [
    "fixtures",
    "scenarios",
    "examples",
    "docs",
    "baselines",
    "scripts",
];

/// Lines of actual output shown in a failure message at most.
const SHOWN_LINES: usize = 200;

// ---------------------------------------------------------------------------------------------
// The matcher.

/// Whether one output line matches one expected line, in which `...` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let (pattern, line) = (pattern.trim_end(), line.trim_end());
    let parts: Vec<&str> = pattern.split("...").collect();
    if parts.len() == 1 {
        return pattern == line;
    }
    let Some(mut rest) = line.strip_prefix(parts[0]) else {
        return false;
    };
    // Leftmost matches of the middle pieces leave the most room for the ones after them.
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    rest.ends_with(parts[parts.len() - 1])
}

/// Whether the output lines match the expected lines, in which a line `...` stands for any
/// number of lines (none included).
fn output_matches<E: AsRef<str>, A: AsRef<str>>(expected: &[E], actual: &[A]) -> bool {
    let (n, m) = (expected.len(), actual.len());
    // ok[i][j]: expected[i..] matches actual[j..].
    let mut ok = vec![vec![false; m + 1]; n + 1];
    ok[n][m] = true;
    for i in (0..n).rev() {
        let e = expected[i].as_ref().trim_end();
        for j in (0..=m).rev() {
            ok[i][j] = if e == "..." {
                ok[i + 1][j] || (j < m && ok[i][j + 1])
            } else {
                j < m && ok[i + 1][j + 1] && line_matches(e, actual[j].as_ref())
            };
        }
    }
    ok[0][0]
}

/// Output as lines without trailing whitespace, trailing empty lines dropped.
fn output_lines(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

// ---------------------------------------------------------------------------------------------
// Reading the Markdown.

#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Needs {
    model: bool,
    shared: bool,
    no_run: bool,
}

#[derive(Debug)]
struct Cmd {
    /// Line of the `$ ` in its file (1-based).
    line: usize,
    /// The command, continuation lines joined.
    text: String,
    expected: Vec<String>,
}

#[derive(Debug)]
struct Block {
    /// The file, relative to the repository.
    file: String,
    /// Line of the opening fence.
    line: usize,
    needs: Needs,
    commands: Vec<Cmd>,
}

/// The ```console blocks of one Markdown file; a malformed block is an error naming its line.
fn parse_doc(file: &str, text: &str) -> (Vec<Block>, Vec<String>) {
    let (mut blocks, mut errors) = (Vec::new(), Vec::new());
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let Some((indent, fence, info)) = open_fence(lines[i]) else {
            i += 1;
            continue;
        };
        let start = i;
        let mut content = Vec::new();
        i += 1;
        while i < lines.len() && !closes(lines[i], fence) {
            let l = lines[i];
            let strip = l.len() - l.trim_start_matches(' ').len();
            content.push((i + 1, &l[strip.min(indent)..]));
            i += 1;
        }
        i += 1;
        let mut words = info.split(',').map(str::trim);
        if words.next() != Some("console") {
            continue;
        }
        let mut needs = Needs::default();
        let mut known = true;
        for w in words {
            match w {
                "model" => needs.model = true,
                "shared" => needs.shared = true,
                "no-run" => needs.no_run = true,
                _ => {
                    errors.push(format!(
                        "{file}:{}: unknown console variant {w:?} (model, shared, no-run)",
                        start + 1
                    ));
                    known = false;
                }
            }
        }
        if !known {
            continue;
        }
        match commands(file, &content) {
            Ok(commands) if commands.is_empty() => {
                errors.push(format!(
                    "{file}:{}: console block without a `$ ` command",
                    start + 1
                ));
            }
            Ok(commands) => blocks.push(Block {
                file: file.to_string(),
                line: start + 1,
                needs,
                commands,
            }),
            Err(e) => errors.push(e),
        }
    }
    (blocks, errors)
}

/// An opening fence: its indentation, its fence (``` or ~~~, at least three) and info string.
fn open_fence(line: &str) -> Option<(usize, &str, &str)> {
    let t = line.trim_start_matches(' ');
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.len() - t.trim_start_matches(c).len();
    (n >= 3).then(|| (line.len() - t.len(), &t[..n], t[n..].trim()))
}

fn closes(line: &str, fence: &str) -> bool {
    let t = line.trim();
    let c = fence.chars().next().unwrap_or('`');
    t.starts_with(fence) && t.chars().all(|x| x == c)
}

/// The commands of a block's lines (line number, text).
fn commands(file: &str, content: &[(usize, &str)]) -> Result<Vec<Cmd>, String> {
    let mut out: Vec<Cmd> = Vec::new();
    let mut it = content.iter();
    while let Some(&(line, l)) = it.next() {
        if let Some(first) = l.strip_prefix("$ ") {
            let mut text = first.trim_end().to_string();
            while let Some(head) = text.strip_suffix('\\') {
                let head = head.to_string();
                let Some((_, next)) = it.next() else {
                    return Err(format!(
                        "{file}:{line}: command continued past the block's end"
                    ));
                };
                text = head + next.trim_end();
            }
            out.push(Cmd {
                line,
                text,
                expected: Vec::new(),
            });
        } else if let Some(c) = out.last_mut() {
            c.expected.push(l.trim_end().to_string());
        } else if !l.trim().is_empty() {
            return Err(format!(
                "{file}:{line}: output before the block's first `$ ` command"
            ));
        }
    }
    Ok(out)
}

/// What a command's output must be: exit code, whether stderr follows stdout, the lines (none:
/// not checked).
fn expectation(expected: &[String]) -> (i32, bool, Vec<String>) {
    let mut lines = expected.to_vec();
    let trim = |v: &mut Vec<String>| {
        while v.last().is_some_and(String::is_empty) {
            v.pop();
        }
    };
    trim(&mut lines);
    let code = lines.last().and_then(|l| {
        l.strip_prefix("[exit: ")?
            .strip_suffix(']')?
            .trim()
            .parse::<i32>()
            .ok()
    });
    match code {
        Some(code) => {
            lines.pop();
            trim(&mut lines);
            (code, true, lines)
        }
        None => (0, false, lines),
    }
}

/// The Markdown files the doc tests read, sorted: README.md, CONTRIBUTING.md, docs/**/*.md
/// except docs/example-report/ (a generated report).
fn doc_files(repo: &Path) -> Vec<String> {
    let mut out: Vec<String> = ["README.md", "CONTRIBUTING.md"]
        .into_iter()
        .filter(|f| repo.join(f).is_file())
        .map(String::from)
        .collect();
    let mut found = Vec::new();
    let mut stack = vec![repo.join("docs")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            let rel = p
                .strip_prefix(repo)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel == "docs/example-report" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else if rel.ends_with(".md") {
                found.push(rel);
            }
        }
    }
    found.sort();
    out.extend(found);
    out
}

/// The recipe names (and aliases) of a justfile.
fn just_recipes(justfile: &str) -> BTreeSet<String> {
    let recipe = regex::Regex::new(r"^@?([A-Za-z_][A-Za-z0-9_-]*)(\s[^:]*)?:([^=]|$)").unwrap();
    let alias = regex::Regex::new(r"^alias\s+([A-Za-z_][A-Za-z0-9_-]*)\s*:=").unwrap();
    justfile
        .lines()
        .filter_map(|l| {
            alias
                .captures(l)
                .or_else(|| recipe.captures(l))
                .map(|c| c[1].to_string())
        })
        .filter(|n| !["set", "export", "import", "mod"].contains(&n.as_str()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Running.

/// One run of the doc tests over a repository.
struct Runner {
    repo: PathBuf,
    /// Holds `bin/toolbudget`, `shared` and the scratch folders.
    root: tempfile::TempDir,
    path: OsString,
    recipes: BTreeSet<String>,
    model: Presence,
    shared: Presence,
}

/// Whether what a block needs (the model, ../shared/data) is there, and whether its absence
/// fails the block instead of skipping it.
#[derive(Clone, Copy)]
struct Presence {
    present: bool,
    required: bool,
}

/// What the doc tests found: failures (each with its file:line) and skipped blocks.
#[derive(Debug, Default)]
struct Findings {
    failures: Vec<String>,
    skipped: Vec<String>,
    blocks: usize,
    commands: usize,
}

impl Runner {
    fn new(repo: &Path, model: bool, require_model: bool, require_shared: bool) -> Runner {
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink(crate::support::bin(), bin.join("toolbudget")).unwrap();
        let shared = repo.join("../shared");
        if shared.exists() {
            std::os::unix::fs::symlink(&shared, root.path().join("shared")).unwrap();
        }
        let mut path = OsString::from(&bin);
        if let Some(p) = std::env::var_os("PATH") {
            path.push(":");
            path.push(p);
        }
        Runner {
            repo: repo.to_path_buf(),
            path,
            recipes: just_recipes(
                &std::fs::read_to_string(repo.join("justfile")).unwrap_or_default(),
            ),
            model: Presence {
                present: model,
                required: require_model,
            },
            shared: Presence {
                present: shared.join("data").is_dir(),
                required: require_shared,
            },
            root,
        }
    }

    fn run(&self) -> Findings {
        let mut f = Findings::default();
        let mut blocks = Vec::new();
        for file in doc_files(&self.repo) {
            let text = std::fs::read_to_string(self.repo.join(&file)).unwrap();
            let (b, errors) = parse_doc(&file, &text);
            blocks.extend(b);
            f.failures.extend(errors);
        }
        let outcomes: Vec<(Vec<String>, Option<String>)> = blocks
            .par_iter()
            .enumerate()
            .map(|(i, b)| self.block(i, b))
            .collect();
        f.blocks = blocks.len();
        f.commands = blocks.iter().map(|b| b.commands.len()).sum();
        for (failures, skipped) in outcomes {
            f.failures.extend(failures);
            f.skipped.extend(skipped);
        }
        f
    }

    /// One block: its failures, or why it was skipped.
    fn block(&self, index: usize, b: &Block) -> (Vec<String>, Option<String>) {
        let at = format!("{}:{}", b.file, b.line);
        if b.needs.model && !b.needs.no_run && !self.model.present {
            if self.model.required {
                return (
                    vec![format!(
                        "{at}: TOOLBUDGET_REQUIRE_MODEL is set but models/all-MiniLM-L6-v2 is missing"
                    )],
                    None,
                );
            }
            return (
                Vec::new(),
                Some(format!("{at}: no embedding model (scripts/fetch-model.sh)")),
            );
        }
        if b.needs.shared && !b.needs.no_run && !self.shared.present {
            if self.shared.required {
                return (
                    vec![format!(
                        "{at}: TOOLBUDGET_REQUIRE_SHARED is set but ../shared/data is missing"
                    )],
                    None,
                );
            }
            return (Vec::new(), Some(format!("{at}: no ../shared/data")));
        }
        let scratch = self.root.path().join(format!("block-{index}"));
        std::fs::create_dir(&scratch).unwrap();
        for name in LINKED {
            let target = self.repo.join(name);
            if target.exists() {
                std::os::unix::fs::symlink(&target, scratch.join(name)).unwrap();
            }
        }
        let mut failures = Vec::new();
        for c in &b.commands {
            let text = rewrite(&c.text);
            let result = if b.needs.no_run {
                self.check_no_run(&scratch, &text)
            } else {
                self.execute(&scratch, &text, &c.expected)
            };
            if let Err(why) = result {
                failures.push(format!("{}:{}: $ {}\n{why}", b.file, c.line, c.text));
            }
        }
        (failures, None)
    }

    fn command(&self, scratch: &Path, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(scratch)
            .env("PATH", &self.path)
            .env("TOOLBUDGET_CACHE_DIR", scratch.join(".cache"))
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("TOOLBUDGET_PARSE_ONLY")
            .env_remove("TOOLBUDGET_CLI_MARKDOWN")
            .stdin(Stdio::null());
        cmd
    }

    fn execute(&self, scratch: &Path, text: &str, expected: &[String]) -> Result<(), String> {
        let out = self
            .command(scratch, Path::new("bash"))
            .arg("-c")
            .arg(text)
            .output()
            .unwrap();
        let (code, with_stderr, lines) = expectation(expected);
        let mut actual = output_lines(&out.stdout);
        if with_stderr {
            actual.extend(output_lines(&out.stderr));
        }
        let code_ok = out.status.code() == Some(code);
        if code_ok && (lines.is_empty() || output_matches(&lines, &actual)) {
            return Ok(());
        }
        let mut why = String::new();
        if !code_ok {
            let got = out
                .status
                .code()
                .map_or_else(|| "killed by a signal".to_string(), |c| c.to_string());
            let _ = writeln!(why, "exit code {got}, expected {code}");
        }
        let what = if with_stderr {
            "stdout+stderr"
        } else {
            "stdout"
        };
        if !lines.is_empty() {
            let _ = writeln!(why, "--- expected ({what}):");
            for l in &lines {
                let _ = writeln!(why, "{l}");
            }
            let _ = writeln!(why, "--- actual ({what}):");
            for l in actual.iter().take(SHOWN_LINES) {
                let _ = writeln!(why, "{l}");
            }
            if actual.len() > SHOWN_LINES {
                let _ = writeln!(why, "[{} more lines]", actual.len() - SHOWN_LINES);
            }
        }
        if !with_stderr && !code_ok {
            let _ = writeln!(why, "--- stderr:");
            for l in output_lines(&out.stderr).iter().take(SHOWN_LINES) {
                let _ = writeln!(why, "{l}");
            }
        }
        Err(why)
    }

    /// A `console,no-run` command: each `toolbudget` of it parses, each `just X` names a
    /// recipe, each `bash scripts/X` or `scripts/X` an existing file; others are taken as is.
    fn check_no_run(&self, scratch: &Path, text: &str) -> Result<(), String> {
        let words = shlex::split(text).ok_or("cannot split the command into words")?;
        for segment in words.split(|w| ["|", "||", "&&", ";", "&"].contains(&w.as_str())) {
            let segment: Vec<&str> = segment
                .iter()
                .map(String::as_str)
                .skip_while(|w| is_assignment(w))
                .collect();
            let Some((&program, args)) = segment.split_first() else {
                continue;
            };
            let args = without_redirections(args);
            match program {
                "toolbudget" => {
                    let out = self
                        .command(scratch, &crate::support::bin())
                        .env("TOOLBUDGET_PARSE_ONLY", "1")
                        .args(&args)
                        .output()
                        .unwrap();
                    if !out.status.success() {
                        return Err(format!(
                            "the CLI refuses these arguments:\n{}",
                            String::from_utf8_lossy(&out.stderr).trim_end()
                        ));
                    }
                }
                "just" => {
                    let recipe = args
                        .iter()
                        .find(|a| !a.starts_with('-') && !a.contains('='));
                    if let Some(r) = recipe
                        && !self.recipes.contains(*r)
                    {
                        return Err(format!("the justfile has no recipe {r:?}"));
                    }
                }
                "bash" | "sh" if args.first().is_some_and(|a| *a != "-c") => {
                    let script = args.iter().find(|a| !a.starts_with('-')).unwrap_or(&"");
                    self.check_file(script)?;
                }
                p if p.starts_with("scripts/") || p.starts_with("./scripts/") => {
                    self.check_file(p)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn check_file(&self, rel: &str) -> Result<(), String> {
        if self.repo.join(rel).is_file() {
            Ok(())
        } else {
            Err(format!("no file {rel} in the repository"))
        }
    }
}

/// `cargo run --release -- ARGS` at the start of a command is run as `toolbudget ARGS`.
fn rewrite(text: &str) -> String {
    for prefix in ["cargo run --release -- ", "cargo run --release --quiet -- "] {
        if let Some(rest) = text.strip_prefix(prefix) {
            return format!("toolbudget {rest}");
        }
    }
    text.to_string()
}

/// `NAME=value` before a command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// The arguments without shell redirections (`> FILE`, `2>&1`, `>out.txt`).
fn without_redirections<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(&a) = it.next() {
        let op = a.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
        if op.starts_with('>') || op.starts_with('<') {
            if op.trim_start_matches(['>', '<', '&']).is_empty() && !a.ends_with('&') {
                it.next();
            }
            continue;
        }
        out.push(a);
    }
    out
}

fn report(f: &Findings) -> String {
    let mut s = String::new();
    for skip in &f.skipped {
        let _ = writeln!(s, "skipped {skip}");
    }
    let _ = writeln!(
        s,
        "{} console blocks, {} commands, {} skipped, {} failures",
        f.blocks,
        f.commands,
        f.skipped.len(),
        f.failures.len()
    );
    for fail in &f.failures {
        let _ = writeln!(s, "\n{fail}");
    }
    s
}

// ---------------------------------------------------------------------------------------------
// The tests.

/// Every console block of the repository's docs runs as shown.
#[test]
fn docs_commands_run_as_shown() {
    let repo = crate::support::repo("");
    let model = repo
        .join("models/all-MiniLM-L6-v2/model.safetensors")
        .is_file();
    let runner = Runner::new(
        &repo,
        model,
        crate::support::env_flag("TOOLBUDGET_REQUIRE_MODEL"),
        crate::support::env_flag("TOOLBUDGET_REQUIRE_SHARED"),
    );
    let f = runner.run();
    let summary = report(&f);
    eprint!("{summary}");
    assert!(
        f.failures.is_empty(),
        "doc commands that do not run as shown:\n{summary}"
    );
}

/// A repository of its own whose docs hold a passing and a failing block of each kind: the
/// runner reports exactly the failing ones, at their lines, and skips what it must.
/// Writes `rel` under `repo`, its folders made.
fn write_file(repo: &std::path::Path, rel: &str, text: &str) {
    let p = repo.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The fixture repository's README: a passing and a failing block of each kind.
fn write_readme(repo: &std::path::Path) {
    let write = |rel: &str, text: &str| write_file(repo, rel, text);
    let fence = "```";
    write(
        "README.md",
        &format!(
            "# Fixture\n\
             \n\
             {fence}console\n\
             $ toolbudget --version\n\
             toolbudget ...\n\
             $ echo one; echo two; echo three  \n\
             one\n\
             ...\n\
             $ cargo run --release -- --version\n\
             toolbudget 0.1...\n\
             {fence}\n\
             \n\
             {fence}console\n\
             $ toolbudget count --catalog no/such.json\n\
             error: ...no/such.json...\n\
             [exit: 2]\n\
             {fence}\n\
             \n\
             {fence}console\n\
             $ mkdir -p reports && echo x > reports/a.txt \\\n\
             \x20   && echo continued\n\
             continued\n\
             $ ls reports fixtures/catalogs\n\
             fixtures/catalogs:\n\
             ...\n\
             builtins.yaml\n\
             ...\n\
             reports:\n\
             a.txt\n\
             $ command -v toolbudget; echo \"$TOOLBUDGET_CACHE_DIR\"\n\
             .../bin/toolbudget\n\
             .../block-2/.cache\n\
             {fence}\n\
             \n\
             {fence}console\n\
             $ echo shown\n\
             not what it prints\n\
             {fence}\n\
             \n\
             {fence}console\n\
             $ false\n\
             {fence}\n\
             \n\
             {fence}console\n\
             $ echo out; echo err >&2; exit 3\n\
             out\n\
             err\n\
             [exit: 2]\n\
             {fence}\n"
        ),
    );
}

/// The fixture repository's guide: the variants (`shared`, `model`, `no-run`), an unknown one,
/// output before a command, a block that is not console, an indented block.
fn write_guide(repo: &std::path::Path) {
    let write = |rel: &str, text: &str| write_file(repo, rel, text);
    let fence = "```";
    write(
        "docs/guide/run.md",
        &format!(
            "{fence}console,shared\n\
             $ cat ../shared/data/present.txt\n\
             here\n\
             {fence}\n\
             \n\
             {fence}console,model\n\
             $ false\n\
             {fence}\n\
             \n\
             {fence}console,no-run\n\
             $ ANTHROPIC_API_KEY=sk toolbudget count -c fixtures/catalogs/builtins.yaml \\\n\
             \x20   --counter anthropic-api > counts.txt 2>&1\n\
             output not checked\n\
             $ just model && bash scripts/fetch-model.sh && cargo build --release\n\
             $ just bench-check main | tee log.txt\n\
             $ cargo run --release -- session import x --project -work-other\n\
             {fence}\n\
             \n\
             {fence}console,no-run\n\
             $ toolbudget count --no-such-flag\n\
             $ just no-such-recipe\n\
             $ bash scripts/missing.sh\n\
             {fence}\n\
             \n\
             {fence}console,nope\n\
             $ true\n\
             {fence}\n\
             \n\
             {fence}console\n\
             output first\n\
             $ true\n\
             {fence}\n\
             \n\
             {fence}yaml\n\
             $ false\n\
             {fence}\n\
             \n\
             - a list item:\n\
             \n\
             \x20 {fence}console\n\
             \x20 $ echo indented\n\
             \x20 indented\n\
             \x20 {fence}\n"
        ),
    );
}

#[test]
fn the_runner_reports_exactly_the_blocks_that_do_not_run_as_shown() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let write = |rel: &str, text: &str| write_file(&repo, rel, text);
    std::fs::create_dir_all(&repo).unwrap();
    std::os::unix::fs::symlink(crate::support::repo("fixtures"), repo.join("fixtures")).unwrap();
    write(
        "justfile",
        "# a recipe\nmodel:\n    true\nbench-check BASE=\"\":\n    true\n",
    );
    write("scripts/fetch-model.sh", "true\n");
    write("../shared/data/present.txt", "here\n");
    let fence = "```";
    write_readme(&repo);
    write_guide(&repo);
    write(
        "docs/example-report/index.md",
        &format!("{fence}console\n$ false\n{fence}\n"),
    );
    write(
        "docs/notes.txt",
        &format!("{fence}console\n$ false\n{fence}\n"),
    );

    let f = Runner::new(&repo, false, false, false).run();
    let summary = report(&f);
    let at: Vec<&str> = f
        .failures
        .iter()
        .map(|s| s.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        at,
        [
            "docs/guide/run.md:25",
            "docs/guide/run.md:30",
            "README.md:36",
            "README.md:41",
            "README.md:45",
            "docs/guide/run.md:20",
            "docs/guide/run.md:21",
            "docs/guide/run.md:22",
        ],
        "{summary}"
    );
    assert_eq!(
        f.skipped,
        ["docs/guide/run.md:6: no embedding model (scripts/fetch-model.sh)"],
        "{summary}"
    );
    assert_eq!((f.blocks, f.commands), (11, 20), "{summary}");
    let fail = |prefix: &str| {
        f.failures
            .iter()
            .find(|s| s.starts_with(prefix))
            .unwrap()
            .as_str()
    };
    assert_eq!(
        fail("README.md:36"),
        "README.md:36: $ echo shown\n\
         --- expected (stdout):\nnot what it prints\n--- actual (stdout):\nshown\n"
    );
    assert_eq!(
        fail("README.md:41"),
        "README.md:41: $ false\nexit code 1, expected 0\n--- stderr:\n"
    );
    assert!(
        fail("README.md:45").starts_with(
            "README.md:45: $ echo out; echo err >&2; exit 3\nexit code 3, expected 2\n\
             --- expected (stdout+stderr):\nout\nerr\n--- actual (stdout+stderr):\nout\nerr\n"
        ),
        "{summary}"
    );
    assert!(fail("docs/guide/run.md:20").contains("unexpected argument '--no-such-flag'"));
    assert!(fail("docs/guide/run.md:21").ends_with("no recipe \"no-such-recipe\""));
    assert!(fail("docs/guide/run.md:22").ends_with("no file scripts/missing.sh in the repository"));
    assert!(fail("docs/guide/run.md:25").contains("unknown console variant \"nope\""));
    assert!(fail("docs/guide/run.md:30").contains("output before the block's first `$ `"));

    // Required, the model's absence is a failure instead of a skip.
    let f = Runner::new(&repo, false, true, false).run();
    assert!(
        f.failures
            .iter()
            .any(|s| s.starts_with("docs/guide/run.md:6: TOOLBUDGET_REQUIRE_MODEL is set")),
        "{}",
        report(&f)
    );
    assert!(f.skipped.is_empty());
}

#[test]
fn a_line_of_dots_matches_any_number_of_lines() {
    let m = |e: &[&str], a: &[&str]| output_matches(e, a);
    assert!(m(&["a", "...", "d"], &["a", "b", "c", "d"]));
    assert!(m(&["a", "...", "b"], &["a", "b"]));
    assert!(m(&["..."], &[]));
    assert!(m(&[], &[]));
    assert!(m(&["...", "x", "..."], &["w", "x", "y"]));
    // The first `d` is not the end: the match goes on to the last one.
    assert!(m(&["a", "...", "d"], &["a", "d", "c", "d"]));
    assert!(!m(&["a", "...", "d"], &["a", "b", "c"]));
    assert!(!m(&["a", "d"], &["a", "b", "d"]));
    assert!(!m(&["a"], &["a", "b"]));
    assert!(!m(&["a", "b"], &["a"]));
    assert!(!m(&["...", "x"], &["x", "y"]));
    assert!(!m(&[], &["a"]));
    // Trailing whitespace on either side is ignored, leading whitespace is not.
    assert!(m(&["a  ", "...   "], &["a", "b "]));
    assert!(!m(&["  a"], &["a"]));
}

#[test]
fn dots_within_a_line_match_any_text_of_that_line() {
    assert!(line_matches("took ... s", "took 1.25 s"));
    assert!(line_matches("took ... s", "took  s"));
    assert!(line_matches("...", "anything"));
    assert!(line_matches("...", ""));
    assert!(line_matches("a...b...c", "a-b-b-c"));
    assert!(line_matches("x...x", "xx"));
    assert!(line_matches(
        "error: ...: no such file",
        "error: a.json: no such file"
    ));
    assert!(!line_matches("took ... s", "took 1.25 ms!"));
    assert!(!line_matches("x...x", "x"));
    assert!(!line_matches("a...b...c", "a-c-b"));
    assert!(!line_matches("total", "total 5"));
    assert!(!line_matches("...total", "total 5"));
}

#[test]
fn exit_lines_and_empty_expectations_are_read_as_the_convention_says() {
    let s = |v: &[&str]| v.iter().map(|x| (*x).to_string()).collect::<Vec<_>>();
    assert_eq!(expectation(&s(&[])), (0, false, s(&[])));
    assert_eq!(expectation(&s(&["", ""])), (0, false, s(&[])));
    assert_eq!(expectation(&s(&["a", ""])), (0, false, s(&["a"])));
    assert_eq!(
        expectation(&s(&["error: x", "", "[exit: 2]", ""])),
        (2, true, s(&["error: x"]))
    );
    assert_eq!(expectation(&s(&["[exit: 1]"])), (1, true, s(&[])));
    assert_eq!(
        expectation(&s(&["[exit: x]"])),
        (0, false, s(&["[exit: x]"]))
    );
    assert_eq!(
        rewrite("cargo run --release -- report --out r"),
        "toolbudget report --out r"
    );
    assert_eq!(rewrite("cargo build --release"), "cargo build --release");
    assert_eq!(
        without_redirections(&["a", ">", "f", "2>&1", "b", ">>g", "<", "in", "c"]),
        ["a", "b", "c"]
    );
    assert!(is_assignment("OPENAI_API_KEY=sk"));
    assert!(!is_assignment("--project=x"));
    assert_eq!(
        just_recipes(
            "default: test\n\n# c\nbench-check BASE=\"\":\n    x: y\nset shell := [\"bash\"]\nalias t := test\nfoo:=1\n"
        ),
        ["bench-check", "default", "t"]
            .map(String::from)
            .into_iter()
            .collect()
    );
}

/// docs/reference/cli.md is what the binary prints from its clap definitions; with
/// TOOLBUDGET_BLESS=1 this test rewrites it.
#[test]
fn cli_reference_is_current() {
    let print = || {
        let out = crate::support::toolbudget()
            .env("TOOLBUDGET_CLI_MARKDOWN", "1")
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let generated = print();
    assert_eq!(
        generated,
        print(),
        "the CLI reference differs between two runs"
    );
    for part in [
        "# Command-line reference",
        "## `toolbudget session import`",
        "## `toolbudget catalog generate`",
        "* `--project <NAME>`",
    ] {
        assert!(generated.contains(part), "no {part:?} in the CLI reference");
    }
    assert!(!generated.contains("TOOLBUDGET_PARSE_ONLY"));
    let path = crate::support::repo("docs/reference/cli.md");
    if crate::support::env_flag("TOOLBUDGET_BLESS") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        panic!(
            "docs/reference/cli.md is stale (first difference at line {}: {:?} where the CLI \
             gives {:?}); regenerate it with `just cli-reference` (or TOOLBUDGET_BLESS=1 \
             cargo test --test integration docs::cli_reference) and commit it",
            line + 1,
            committed.lines().nth(line).unwrap_or(""),
            generated.lines().nth(line).unwrap_or("")
        );
    }
}

/// Claude Code's project folders start with '-' (`-home-dev-shop`): `--project` takes such a
/// value as a value, and the filter matches that folder's sessions.
#[test]
fn project_takes_a_claude_code_folder_name_that_starts_with_a_hyphen() {
    let home = tempfile::tempdir().unwrap();
    let projects = home.path().join("projects");
    let folder = projects.join("-home-dev-shop");
    std::fs::create_dir_all(&folder).unwrap();
    let session = "7f3c1e2a-5b6d-4c8e-9f01-a1b2c3d4e5f6.jsonl";
    std::fs::copy(
        crate::support::repo("fixtures/sessions/claude/plain").join(session),
        folder.join(session),
    )
    .unwrap();
    let go = |project: &str| {
        crate::support::toolbudget()
            .args([
                "session",
                "import",
                "--format",
                "json",
                "--allow-unknown-tools",
            ])
            .arg(&projects)
            .args(["--project", project])
            .output()
            .unwrap()
    };
    let out = go("-home-dev-shop");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files: Vec<&str> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["file"].as_str().unwrap().rsplit('/').next().unwrap())
        .collect();
    assert_eq!(files, [session]);
    let out = go("-home-dev-elsewhere");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no session matches the filters (1 left out"),
        "{err}"
    );
}
