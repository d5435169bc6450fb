//! `report`'s pages on a small report (two scenarios, one of them named and described with
//! Markdown and HTML, the fixture catalogs and their labeled queries): `index.html` is the
//! Markdown's own conversion with every chart inlined, user text becomes no link, image or
//! script in either page, `data/summary.json` holds the decision page's numbers, and
//! `--format` picks the pages. Then the page in a real browser (Debian's `chromium`,
//! headless): no console message, every chart drawn, a screenshot of the first screen saved
//! under `target/ci-logs/`. Without chromium it skips saying so, unless
//! `TOOLBUDGET_REQUIRE_BROWSER=1` (CI), where a missing browser fails.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pulldown_cmark::{Event, Options, Parser, Tag};

const HOSTILE_NAME: &str = "a](https://x/p.png) <script>alert(1)</script>";
const HOSTILE_DESCRIPTION: &str =
    "See ![x](https://x/p.png) and [here](https://x/) <img src=x onerror=alert(2)> *not bold*";

/// The inputs of the small report under `root`: `scenarios/hi.yaml`, a copy of it under the
/// hostile name, the fixture catalogs and `fixtures/queries`.
fn small_inputs(root: &Path) {
    let repo = crate::support::repo("");
    let copy_dir = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() {
                std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
            }
        }
    };
    copy_dir(
        &repo.join("fixtures/catalogs/mcp"),
        &root.join("fixtures/catalogs/mcp"),
    );
    copy_dir(
        &repo.join("fixtures/queries"),
        &root.join("fixtures/queries"),
    );
    std::fs::copy(
        repo.join("fixtures/catalogs/builtins.yaml"),
        root.join("fixtures/catalogs/builtins.yaml"),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    let hi = std::fs::read_to_string(repo.join("scenarios/hi.yaml")).unwrap();
    std::fs::write(root.join("scenarios/hi.yaml"), &hi).unwrap();
    let hostile: String = hi
        .lines()
        .map(|l| {
            if l.starts_with("name:") {
                format!("name: {}", serde_json::to_string(HOSTILE_NAME).unwrap())
            } else if l.starts_with("description:") {
                format!(
                    "description: {}",
                    serde_json::to_string(HOSTILE_DESCRIPTION).unwrap()
                )
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(root.join("scenarios/hostile.yaml"), hostile + "\n").unwrap();
}

fn report(inputs: &Path, out: &Path, format: &str) {
    let o = Command::new(env!("CARGO_BIN_EXE_toolbudget"))
        .args(["--quiet", "report", "--format", format, "--out"])
        .arg(out)
        .arg("--scenarios")
        .arg(inputs.join("scenarios"))
        .arg("--fixtures")
        .arg(inputs.join("fixtures"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "report failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// One small report (both pages), made by the first test that asks.
fn small_report() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-html");
        let _ = std::fs::remove_dir_all(&root);
        small_inputs(&root.join("in"));
        report(&root.join("in"), &root.join("out"), "both");
        root
    })
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every chart image of the Markdown (the path after `](`).
fn chart_links(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in Parser::new_ext(md, Options::ENABLE_TABLES) {
        if let Event::Start(Tag::Image { dest_url, .. }) = e {
            out.push(dest_url.to_string());
        }
    }
    out
}

#[test]
fn html_is_the_markdown_with_its_charts_inlined() {
    let out = small_report().join("out");
    let md = read(&out.join("index.md"));
    let html = read(&out.join("index.html"));
    // The decision page opens both pages.
    let first_h2 = md.lines().find(|l| l.starts_with("## ")).unwrap();
    assert_eq!(first_h2, "## Decision");
    let main = &html[html.find("<main>").unwrap()..];
    assert!(
        main.find("<h2").unwrap() == main.find("<h2 id=\"decision\">").unwrap(),
        "the first section of index.html is the decision page"
    );
    // Every heading has GitHub's id, and the table of contents links it.
    for (text, id) in [
        ("Decision", "decision"),
        ("Summary", "summary"),
        ("Scenarios", "scenarios"),
        ("Search quality", "search-quality"),
        ("Search latency (measured)", "search-latency-measured"),
        ("Settings", "settings"),
    ] {
        assert!(
            md.contains(&format!("\n## {text}\n")),
            "index.md lacks {text}"
        );
        assert!(html.contains(&format!("<h2 id=\"{id}\">")), "no id {id}");
        assert!(
            html.contains(&format!("<a href=\"#{id}\">")),
            "no link to {id}"
        );
    }
    // Every in-page link of the Markdown has its target in the page.
    for cap in regex::Regex::new(r"\]\(#([^)]+)\)")
        .unwrap()
        .captures_iter(&md)
    {
        assert!(
            html.contains(&format!(" id=\"{}\"", &cap[1])),
            "link #{} has no heading",
            &cap[1]
        );
    }
    // Each chart of index.md is inlined once, as the SVG file's own markup; nothing is loaded.
    let charts = chart_links(&md);
    assert!(charts.len() >= 6, "charts: {charts:?}");
    for path in &charts {
        let svg = read(&out.join(path));
        let body = &svg[svg.find("<svg").unwrap()..];
        assert!(
            html.contains(&format!("data-chart=\"{path}\">{}", body.trim_end())),
            "{path} is not inlined"
        );
    }
    assert_eq!(html.matches("<svg").count(), charts.len());
    for external in ["<img", "<script", "<link", "src=\"", "@import", "url("] {
        assert!(!html.contains(external), "index.html has {external}");
    }
    // Numeric columns are right-aligned.
    assert!(html.contains("<td style=\"text-align: right\">"));
}

#[test]
fn user_text_is_no_link_image_or_html_in_either_page() {
    let out = small_report().join("out");
    let md = read(&out.join("index.md"));
    let html = read(&out.join("index.html"));
    assert!(
        md.contains("<script>alert(1)</script>"),
        "the name is shown"
    );
    for e in Parser::new_ext(&md, Options::ENABLE_TABLES) {
        match e {
            Event::Html(h) | Event::InlineHtml(h) => {
                assert!(
                    h.starts_with("<details>") || h.trim() == "</details>",
                    "raw HTML in index.md: {h:?}"
                );
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                assert!(dest_url.starts_with("charts/"), "image {dest_url}");
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                assert!(!dest_url.contains("x/"), "link {dest_url}");
            }
            _ => {}
        }
    }
    assert!(!html.contains("<script") && !html.contains("<img"));
    assert!(!html.contains("href=\"https://x/"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&lt;img src=x onerror=alert(2)&gt;"));
    assert!(html.contains("*not bold*"), "emphasis marks stay text");
}

#[test]
fn summary_json_holds_the_decision_numbers() {
    let out = small_report().join("out");
    let bytes = std::fs::read(out.join("data/summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["run", "overall", "scenarios", "query_sets"]);
    assert_eq!(v["run"]["counter"], "anthropic-estimate");
    assert!(v["run"]["counter_error_pct"].as_f64().unwrap() > 0.0);
    // The per-scenario numbers are the scenarios.csv ones.
    let csv = read(&out.join("data/scenarios.csv"));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let hi: Vec<&str> = lines
        .find(|l| l.starts_with("hi,"))
        .unwrap()
        .split(',')
        .collect();
    let s = v["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "hi")
        .unwrap();
    for (json, csv) in [
        ("eager", "eager_first_request_tokens"),
        ("deferred", "deferred_first_request_tokens"),
    ] {
        assert_eq!(
            s["first_request_tokens"][json].to_string(),
            hi[col(csv)],
            "{csv}"
        );
    }
    assert_eq!(
        s["conversation_saved_pct"].to_string(),
        hi[col("total_input_savings_pct")]
    );
    assert_eq!(s["pays"], true);
    // Two identical scenarios: the medians are theirs.
    assert_eq!(v["overall"]["compared"], 2);
    assert_eq!(
        v["overall"]["median_first_request_saved_pct"],
        s["first_request_saved_pct"]
    );
    let set = &v["query_sets"][0];
    assert_eq!(set["queries"], 95);
    assert_eq!(set["metric"], "recall@5");
    let value = set["value"].as_f64().unwrap();
    let ci = set["ci95"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() <= value && value <= ci[1].as_f64().unwrap());
    // The best scorer's recall is the decision page's.
    let md = read(&out.join("index.md"));
    let best = set["best_scorer"].as_str().unwrap();
    assert!(
        md.contains(&format!(
            "**{best}** on `fixtures`: recall@5 **{value:.3}**"
        )),
        "{md}"
    );
    assert!(set.get("latency_us").is_none(), "measured: kept out");
}

#[test]
fn format_picks_the_pages_and_the_json_is_stable() {
    let root = small_report();
    let md_only = root.join("md");
    let html_only = root.join("html");
    report(&root.join("in"), &md_only, "md");
    report(&root.join("in"), &html_only, "html");
    assert!(md_only.join("index.md").is_file() && !md_only.join("index.html").exists());
    assert!(html_only.join("index.html").is_file() && !html_only.join("index.md").exists());
    for dir in [&md_only, &html_only] {
        assert_eq!(
            std::fs::read(dir.join("data/summary.json")).unwrap(),
            std::fs::read(root.join("out/data/summary.json")).unwrap(),
            "summary.json differs between runs"
        );
    }
}

// ---- The page in a browser ---------------------------------------------------------------

const CHROMIUM: &str = "/usr/bin/chromium";

fn chromium(profile: &Path) -> Command {
    let mut cmd = Command::new(CHROMIUM);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--hide-scrollbars",
        "--window-size=1280,900",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .env("HOME", profile);
    cmd
}

/// `(width, height)` from a PNG's header.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

#[test]
fn the_page_loads_in_chromium_without_errors() {
    if !Path::new(CHROMIUM).is_file() {
        assert!(
            !crate::support::env_flag("TOOLBUDGET_REQUIRE_BROWSER"),
            "TOOLBUDGET_REQUIRE_BROWSER is set but {CHROMIUM} is missing (apt-get install chromium)"
        );
        crate::support::skip(
            "the_page_loads_in_chromium_without_errors",
            "no /usr/bin/chromium (Debian's chromium package)",
        );
        return;
    }
    let out = small_report().join("out");
    let page = out.join("index.html");
    let url = format!("file://{}", page.display());
    let profile = tempfile::tempdir().unwrap();

    // The DOM after load: every chart drawn as inline SVG with a size, no image at all.
    let o = chromium(profile.path())
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dom = String::from_utf8(o.stdout).unwrap();
    let log = String::from_utf8_lossy(&o.stderr).into_owned();
    let md = read(&out.join("index.md"));
    let charts = chart_links(&md);
    assert!(dom.contains("<h2 id=\"decision\">"), "DOM: {dom:.2000}");
    assert_eq!(dom.matches("<figure class=\"chart\"").count(), charts.len());
    let figure = regex::Regex::new(r#"(?s)<figure class="chart"[^>]*>\s*<svg([^>]*)>"#).unwrap();
    let drawn: Vec<_> = figure.captures_iter(&dom).collect();
    assert_eq!(drawn.len(), charts.len(), "a chart without its svg");
    for c in &drawn {
        assert!(
            c[1].contains("viewBox=\"0 0 ") && !c[1].contains("viewBox=\"0 0 0 "),
            "a chart without a size: {}",
            &c[1]
        );
    }
    assert!(!dom.contains("<img"), "an image to load");

    // The first screen, saved for CI's logs.
    let logs = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("ci-logs");
    std::fs::create_dir_all(&logs).unwrap();
    let shot = logs.join("report-first-screen.png");
    let _ = std::fs::remove_file(&shot);
    let o = chromium(profile.path())
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let log = log + &String::from_utf8_lossy(&o.stderr);
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(png_size(&png), (1280, 900));
    assert!(
        png.len() > 20_000,
        "a blank screenshot ({} bytes)",
        png.len()
    );
    eprintln!("report first screen: {}", shot.display());

    // A console message (a script error, a refused load, a missing resource) fails.
    let console: Vec<&str> = log
        .lines()
        .filter(|l| {
            l.contains(":CONSOLE")
                || l.contains("Content Security Policy")
                || l.contains("net::ERR_")
        })
        .collect();
    assert!(
        console.is_empty(),
        "browser console:\n{}",
        console.join("\n")
    );
}
