//! Every chart the code writes keeps its text readable: no two `<text>` boxes overlap and none
//! leaves the canvas. The boxes are estimated from what plotters' SVG backend writes (x, y,
//! font-size, text-anchor, the `dy` of its vertical anchor, a `rotate` transform) and the
//! character count, with glyph widths at least those of DejaVu Sans, the widest common
//! sans-serif (what `rsvg-convert` uses here): an estimate, so a pass means "no overlap unless a
//! viewer's font is wider than that", not a rendering.

use std::path::{Path, PathBuf};

/// An axis-aligned box in SVG user units.
#[derive(Debug, Clone, Copy)]
struct TextBox {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

/// Advance width of a character in em, at least DejaVu Sans's (narrow punctuation and `i`,
/// `l` stay narrow, so a conservative 0.6 em for every glyph would flag well-spaced labels).
fn glyph_em(c: char) -> f64 {
    match c {
        ' ' => 0.32,
        'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.3,
        'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' | '/' => 0.42,
        'm' | 'w' | 'M' | 'W' | '%' | '@' => 1.0,
        'A'..='Z' => 0.76,
        'a'..='z' => 0.62,
        // digits, symbols and the rest
        _ => 0.64,
    }
}

fn number(s: &str) -> Option<f64> {
    s.trim().parse().ok()
}

/// `0.76em`, `0.5ex`, `-0.5ex` or plain user units, in user units at `size`.
fn length(s: &str, size: f64) -> Option<f64> {
    let s = s.trim();
    if let Some(v) = s.strip_suffix("em") {
        number(v).map(|v| v * size)
    } else if let Some(v) = s.strip_suffix("ex") {
        // An ex is about half an em in sans-serif faces.
        number(v).map(|v| v * size * 0.5)
    } else {
        number(s.strip_suffix("px").unwrap_or(s))
    }
}

/// `rotate(a, cx, cy)` (plotters' only transform), as (angle, cx, cy).
fn rotation(t: &str) -> Result<(f64, f64, f64), String> {
    let inner = t
        .trim()
        .strip_prefix("rotate(")
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("transform {t:?} is not a rotate(...)"))?;
    let v: Vec<f64> = inner
        .split([',', ' '])
        .filter(|p| !p.is_empty())
        .map(|p| number(p).ok_or_else(|| format!("transform {t:?}: bad number {p:?}")))
        .collect::<Result<_, _>>()?;
    match v[..] {
        [a] => Ok((a, 0.0, 0.0)),
        [a, cx, cy] => Ok((a, cx, cy)),
        _ => Err(format!("transform {t:?}: expected 1 or 3 numbers")),
    }
}

/// One text element's box, or why it has none the check can use.
fn text_box(node: roxmltree::Node<'_, '_>, text: &str) -> Result<TextBox, String> {
    let attr = |name: &str| node.attribute(name);
    let x = attr("x").and_then(number).unwrap_or(0.0);
    let y = attr("y").and_then(number).unwrap_or(0.0);
    let size = attr("font-size")
        .and_then(number)
        .ok_or_else(|| format!("text {text:?} has no numeric font-size"))?;
    let width: f64 = text.chars().map(glyph_em).sum::<f64>() * size;
    let x0 = match attr("text-anchor").unwrap_or("start") {
        "start" => x,
        "middle" => x - width / 2.0,
        "end" => x - width,
        other => return Err(format!("text {text:?}: text-anchor {other:?}")),
    };
    let dy = match attr("dy") {
        Some(d) => length(d, size).ok_or_else(|| format!("text {text:?}: dy {d:?}"))?,
        None => 0.0,
    };
    // Ascent and descent of a sans-serif face: capitals reach about 0.73 em above the
    // baseline, descenders about 0.24 em below.
    let baseline = y + dy;
    let mut b = TextBox {
        x0,
        y0: baseline - 0.76 * size,
        x1: x0 + width,
        y1: baseline + 0.24 * size,
    };
    if let Some(t) = attr("transform") {
        let (angle, cx, cy) = rotation(t)?;
        let quarter = (angle / 90.0).round();
        if (angle - quarter * 90.0).abs() > 1e-9 {
            return Err(format!(
                "text {text:?}: rotation by {angle} degrees is not checked (only quarter turns)"
            ));
        }
        for _ in 0..(quarter as i64).rem_euclid(4) {
            // A quarter turn clockwise in SVG's y-down frame: (x, y) -> (cx - (y - cy), cy + (x - cx)).
            let (ax, ay) = (cx - (b.y0 - cy), cy + (b.x0 - cx));
            let (bx, by) = (cx - (b.y1 - cy), cy + (b.x1 - cx));
            b = TextBox {
                x0: ax.min(bx),
                y0: ay.min(by),
                x1: ax.max(bx),
                y1: ay.max(by),
            };
        }
    }
    Ok(b)
}

/// Everything wrong with the text of one SVG document: overlapping text boxes and boxes that
/// leave the canvas, one line each. Empty when it reads.
pub(crate) fn text_problems(svg: &str) -> Vec<String> {
    let doc = match roxmltree::Document::parse(svg) {
        Ok(d) => d,
        Err(e) => return vec![format!("not XML: {e}")],
    };
    let root = doc.root_element();
    let canvas = |name: &str| root.attribute(name).and_then(number);
    let (Some(w), Some(h)) = (canvas("width"), canvas("height")) else {
        return vec!["the <svg> has no numeric width and height".into()];
    };
    // Half a pixel of slack: plotters rounds positions to whole pixels.
    const SLACK: f64 = 0.5;
    let mut problems = Vec::new();
    let mut boxes: Vec<(String, TextBox)> = Vec::new();
    for node in doc.descendants().filter(|n| n.has_tag_name("text")) {
        let text: String = node
            .descendants()
            .filter(roxmltree::Node::is_text)
            .filter_map(|n| n.text())
            .collect::<String>()
            .trim()
            .to_string();
        if text.is_empty() {
            continue;
        }
        match text_box(node, &text) {
            Ok(b) => {
                if b.x0 < -SLACK || b.y0 < -SLACK || b.x1 > w + SLACK || b.y1 > h + SLACK {
                    problems.push(format!(
                        "{text:?} leaves the {w}x{h} canvas: x {:.0}..{:.0}, y {:.0}..{:.0}",
                        b.x0, b.x1, b.y0, b.y1
                    ));
                }
                boxes.push((text, b));
            }
            Err(e) => problems.push(e),
        }
    }
    for (i, (ta, a)) in boxes.iter().enumerate() {
        for (tb, b) in &boxes[i + 1..] {
            let dx = a.x1.min(b.x1) - a.x0.max(b.x0);
            let dy = a.y1.min(b.y1) - a.y0.max(b.y0);
            if dx > SLACK && dy > SLACK {
                problems.push(format!(
                    "{ta:?} and {tb:?} overlap by {dx:.0}x{dy:.0} px (at x {:.0}, y {:.0})",
                    a.x0.max(b.x0),
                    a.y0.max(b.y0)
                ));
            }
        }
    }
    problems
}

/// Every `.svg` under `dir`, sorted.
fn svgs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .collect();
    out.sort();
    out
}

/// Checks every chart under `dir` (and that there are at least `min` of them); one message
/// per problem, all charts at once.
fn assert_charts_read(dir: &Path, min: usize) {
    let files = svgs(dir);
    assert!(
        files.len() >= min,
        "{} has {} charts, expected at least {min}",
        dir.display(),
        files.len()
    );
    let mut report = Vec::new();
    for f in &files {
        let svg = std::fs::read_to_string(f).unwrap();
        for p in text_problems(&svg) {
            report.push(format!("{}: {p}", f.file_name().unwrap().to_string_lossy()));
        }
    }
    assert!(
        report.is_empty(),
        "{} text problems in {} charts of {}:\n{}",
        report.len(),
        files.len(),
        dir.display(),
        report.join("\n")
    );
}

#[test]
fn the_checker_finds_overlaps_and_text_off_the_canvas() {
    let svg = |texts: &str| {
        format!(r#"<svg width="200" height="100" xmlns="http://www.w3.org/2000/svg">{texts}</svg>"#)
    };
    let t = |x: u32, y: u32, anchor: &str, s: &str| {
        format!(
            r#"<text x="{x}" y="{y}" dy="0.76em" text-anchor="{anchor}" font-size="10">{s}</text>"#
        )
    };
    // 10 px type: "abcde" is 31 px wide and 10 px tall.
    assert_eq!(
        text_problems(&svg(
            &(t(0, 0, "start", "abcde") + &t(40, 0, "start", "abcde"))
        )),
        Vec::<String>::new()
    );
    let p = text_problems(&svg(
        &(t(0, 0, "start", "abcde") + &t(25, 5, "start", "abcde"))
    ));
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("overlap by 6x5 px"), "{p:?}");
    // Centred on x = 195: the right half leaves the 200 px canvas.
    let p = text_problems(&svg(&t(195, 10, "middle", "abcde")));
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("leaves the 200x100 canvas"), "{p:?}");
    // Stacked lines 12 px apart do not touch; end-anchored text ends at x.
    assert!(
        text_problems(&svg(
            &(t(100, 20, "end", "abcde") + &t(100, 32, "end", "abcde"))
        ))
        .is_empty()
    );
    // A y-axis title rotated a quarter turn about its anchor stands upright along the edge:
    // 10 px wide (x 8..18), 31 px tall, so it clears a tick label at x = 20, not one at x = 10.
    let rotated = r#"<text x="8" y="50" dy="0.76em" text-anchor="middle" font-size="10" transform="rotate(270, 8, 50)">abcde</text>"#;
    assert!(text_problems(&svg(&(rotated.to_string() + &t(20, 45, "start", "1")))).is_empty());
    let p = text_problems(&svg(&(rotated.to_string() + &t(10, 45, "start", "1"))));
    assert_eq!(p.len(), 1, "{p:?}");
    let odd = r#"<text x="50" y="50" font-size="10" transform="rotate(45, 50, 50)">a</text>"#;
    assert!(text_problems(&svg(odd))[0].contains("45 degrees is not checked"));
}

/// The small report (one scenario, the fixture catalogs) with the sessions section: the
/// scenario's charts, the fixtures' recall, the clients chart of one scenario and the three
/// sessions charts.
#[test]
fn the_charts_of_a_small_report_with_sessions_read() {
    let (_, sessions, _) = crate::session_import::import(
        &[crate::session_import::fixture("claude"), {
            crate::support::repo("fixtures/sessions/known")
                .display()
                .to_string()
        }],
        &[],
    );
    let tmp = tempfile::tempdir().unwrap();
    let inputs = tmp.path().join("in");
    // hi.yaml names its catalogs as ../fixtures/catalogs/...; the queries stay in the repo's
    // fixtures, so the fixture query sets get their recall chart.
    let mcp = inputs.join("fixtures/catalogs/mcp");
    std::fs::create_dir_all(&mcp).unwrap();
    std::fs::create_dir_all(inputs.join("scenarios")).unwrap();
    let repo = crate::support::repo("");
    std::fs::copy(
        repo.join("scenarios/hi.yaml"),
        inputs.join("scenarios/hi.yaml"),
    )
    .unwrap();
    std::fs::copy(
        repo.join("fixtures/catalogs/builtins.yaml"),
        inputs.join("fixtures/catalogs/builtins.yaml"),
    )
    .unwrap();
    for e in std::fs::read_dir(repo.join("fixtures/catalogs/mcp")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, mcp.join(p.file_name().unwrap())).unwrap();
    }
    let out = tmp.path().join("report");
    let (code, _, stderr) = crate::session_import::run(&[
        "--quiet",
        "report",
        "--sessions",
        sessions.path().to_str().unwrap(),
        "--session-scorer",
        "keyword",
        "--session-scorer",
        "bm25",
        "--out",
        out.to_str().unwrap(),
        "--scenarios",
        inputs.join("scenarios").to_str().unwrap(),
        "--fixtures",
        crate::support::repo("fixtures").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let charts = out.join("charts");
    for name in [
        "clients.svg",
        "sessions-cost.svg",
        "sessions-input.svg",
        "sessions-billed-vs-modeled.svg",
        "requests-hi.svg",
        "recall-fixtures.svg",
    ] {
        assert!(charts.join(name).exists(), "{name}");
    }
    assert_charts_read(&charts, 8);
}

/// Every chart of the shipped report, the clients chart over every shipped scenario included.
#[test]
fn the_charts_of_the_shipped_report_read() {
    let charts = crate::support::report_once().join("charts");
    assert!(charts.join("clients.svg").exists());
    assert_charts_read(&charts, 40);
}

/// The committed example report, when the checkout has one.
#[test]
fn the_charts_of_the_example_report_read() {
    let charts = crate::support::repo("docs/example-report/charts");
    if !charts.is_dir() {
        crate::support::skip(
            "the_charts_of_the_example_report_read",
            "docs/example-report/charts is not in this checkout",
        );
        return;
    }
    assert_charts_read(&charts, 1);
}
