//! `index.html`: `index.md` converted (pulldown-cmark, tables on), so the page holds the same
//! sections and numbers as the Markdown and nothing is computed twice. One self-contained
//! file: inline CSS, every chart's SVG inlined in place of its image link, no script, a
//! content security policy that loads nothing. Headings get the ids GitHub gives the Markdown
//! headings (so `#section` links work in both), and a table of contents links them. Raw HTML
//! in the Markdown is written as text (names and descriptions are the user's), except the
//! report's own folds (`<details>`).

use std::collections::HashMap;
use std::fmt::Write as _;

use pulldown_cmark::{CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::ReportFile;
use super::scenarios::FOLD_CLOSE;

const STYLE: &str = "\
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--link:#0969da}
*{box-sizing:border-box}
body{margin:0;color:var(--fg);background:#fff;font:15px/1.5 -apple-system,BlinkMacSystemFont,\"Segoe UI\",Helvetica,Arial,sans-serif;display:flex}
nav.toc{order:0;flex:0 0 15rem;position:sticky;top:0;align-self:flex-start;max-height:100vh;overflow:auto;padding:1rem;border-right:1px solid var(--line);background:var(--soft);font-size:13px}
nav.toc ul{list-style:none;margin:0;padding-left:0}
nav.toc ul ul{padding-left:1rem}
nav.toc li{margin:.15rem 0}
nav.toc p{margin:0 0 .5rem;font-weight:600}
main{order:1;flex:1 1 auto;min-width:0;max-width:72rem;padding:0 2rem 3rem}
@media (max-width:60rem){body{flex-direction:column}nav.toc{order:2;position:static;max-height:none;border-right:0;border-top:1px solid var(--line)}main{padding:0 1rem 2rem}}
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
h1{font-size:1.8rem;margin:1rem 0 .5rem}
h2{font-size:1.35rem;margin:2rem 0 .6rem;padding-bottom:.3rem;border-bottom:1px solid var(--line)}
h3{font-size:1.1rem;margin:1.5rem 0 .5rem}
h1 a.anchor,h2 a.anchor,h3 a.anchor{visibility:hidden;margin-left:.3rem;color:var(--muted)}
h1:hover a.anchor,h2:hover a.anchor,h3:hover a.anchor{visibility:visible}
code{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--soft);padding:.1em .3em;border-radius:4px}
table{border-collapse:collapse;margin:.6rem 0 1rem;display:block;overflow-x:auto;max-width:100%;font-size:13.5px}
th,td{border:1px solid var(--line);padding:.25rem .55rem;vertical-align:top}
th{background:var(--soft);text-align:left}
tr:nth-child(2n) td{background:#fbfcfd}
td[style*=right],th[style*=right]{font-variant-numeric:tabular-nums;white-space:nowrap}
figure.chart{margin:.6rem 0;max-width:60rem}
figure.chart svg{max-width:100%;height:auto;display:block}
details{margin:.4rem 0 1rem}summary{cursor:pointer;color:var(--muted)}
em{color:var(--muted)}
";

/// GitHub's heading id: lower case, every character that is not a letter, a digit, `-`, `_`
/// or a space dropped, spaces as `-`; a repeated id gets `-1`, `-2`, ...
fn slug(text: &str, used: &mut HashMap<String, usize>) -> String {
    let base: String = text
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect();
    let n = used.entry(base.clone()).or_insert(0);
    let id = if *n == 0 {
        base.clone()
    } else {
        format!("{base}-{n}")
    };
    *n += 1;
    // A suffixed id can itself be a later heading's base (`a-1`): counted too.
    if id != base {
        *used.entry(id.clone()).or_insert(0) += 1;
    }
    id
}

/// The report's own fold markers pass as HTML; everything else raw is text.
fn own_html(html: &str) -> bool {
    let t = html.trim();
    if t == FOLD_CLOSE {
        return true;
    }
    t.strip_prefix("<details><summary>")
        .and_then(|r| r.strip_suffix("</summary>"))
        .is_some_and(|label| !label.contains(['<', '>', '&', '"']))
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The `<svg …>…</svg>` of a chart file, without an XML prologue before it.
fn svg_body(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    let start = text.find("<svg")?;
    Some(text[start..].trim_end())
}

/// Link targets the page keeps: in-page anchors, relative files, http(s). Anything with
/// another scheme (`javascript:`) becomes an anchor to nothing.
fn safe_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    match lower.find(':') {
        None => true,
        Some(i) => {
            lower.starts_with("http://")
                || lower.starts_with("https://")
                || lower[..i].contains(['/', '#', '?'])
        }
    }
}

struct Heading {
    level: HeadingLevel,
    id: String,
    text: String,
}

/// The whole page from the finished Markdown and the report's files (its charts).
pub fn page(markdown: &str, files: &[ReportFile]) -> String {
    let charts: HashMap<&str, &[u8]> = files
        .iter()
        .filter(|f| f.path.ends_with(".svg"))
        .map(|f| (f.path.as_str(), f.bytes.as_slice()))
        .collect();
    let events: Vec<Event> = Parser::new_ext(markdown, Options::ENABLE_TABLES).collect();
    let mut out: Vec<Event> = Vec::with_capacity(events.len());
    let mut headings: Vec<Heading> = Vec::new();
    let mut used = HashMap::new();
    let mut i = 0;
    while i < events.len() {
        match &events[i] {
            Event::Start(Tag::Heading { level, .. }) => {
                let level = *level;
                let mut text = String::new();
                let mut j = i + 1;
                while j < events.len() && !matches!(events[j], Event::End(TagEnd::Heading(_))) {
                    if let Event::Text(t) | Event::Code(t) = &events[j] {
                        text.push_str(t);
                    }
                    j += 1;
                }
                let id = slug(&text, &mut used);
                out.push(Event::Start(Tag::Heading {
                    level,
                    id: Some(CowStr::from(id.clone())),
                    classes: Vec::new(),
                    attrs: Vec::new(),
                }));
                out.extend(events[i + 1..j].iter().cloned().map(inert));
                out.push(Event::InlineHtml(CowStr::from(format!(
                    "<a class=\"anchor\" href=\"#{id}\" aria-label=\"link to this section\">#</a>"
                ))));
                out.push(Event::End(TagEnd::Heading(level)));
                headings.push(Heading { level, id, text });
                i = j + 1;
                continue;
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                let mut alt = String::new();
                let mut j = i + 1;
                while j < events.len() && !matches!(events[j], Event::End(TagEnd::Image)) {
                    if let Event::Text(t) | Event::Code(t) = &events[j] {
                        alt.push_str(t);
                    }
                    j += 1;
                }
                // Only the report's own charts are drawn, inline; any other image is its alt text.
                let html = match charts.get(dest_url.as_ref()).and_then(|b| svg_body(b)) {
                    Some(svg) => format!(
                        "<figure class=\"chart\" role=\"img\" aria-label=\"{}\" data-chart=\"{}\">{svg}</figure>",
                        escape(&alt),
                        escape(dest_url)
                    ),
                    None => format!("[{}]", escape(&alt)),
                };
                out.push(Event::InlineHtml(CowStr::from(html)));
                i = j + 1;
                continue;
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) if !safe_url(dest_url) => out.push(Event::Start(Tag::Link {
                link_type: *link_type,
                dest_url: CowStr::from("#"),
                title: title.clone(),
                id: id.clone(),
            })),
            e => out.push(inert(e.clone())),
        }
        i += 1;
    }
    let mut body = String::new();
    pulldown_cmark::html::push_html(&mut body, out.into_iter());
    let title = headings
        .iter()
        .find(|h| h.level == HeadingLevel::H1)
        .map_or("toolbudget report".to_string(), |h| h.text.clone());
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n\
         </head>\n<body>\n<main>\n{body}</main>\n{}</body>\n</html>\n",
        escape(&title),
        toc(&headings)
    );
    page
}

/// Raw HTML from the Markdown as text, unless it is the report's own fold.
fn inert(e: Event<'_>) -> Event<'_> {
    match e {
        Event::Html(h) | Event::InlineHtml(h) if !own_html(&h) => Event::Text(h),
        e => e,
    }
}

/// The table of contents: every `##` heading, its `###` headings nested.
fn toc(headings: &[Heading]) -> String {
    let mut out =
        String::from("<nav class=\"toc\" aria-label=\"contents\">\n<p>Contents</p>\n<ul>\n");
    let mut open_sub = false;
    let mut open_item = false;
    for h in headings {
        let link = format!("<a href=\"#{}\">{}</a>", h.id, escape(&h.text));
        match h.level {
            HeadingLevel::H2 => {
                if open_sub {
                    out.push_str("</ul>");
                    open_sub = false;
                }
                if open_item {
                    out.push_str("</li>\n");
                }
                let _ = write!(out, "<li>{link}");
                open_item = true;
            }
            HeadingLevel::H3 if open_item => {
                if !open_sub {
                    out.push_str("<ul>\n");
                    open_sub = true;
                }
                let _ = writeln!(out, "<li>{link}</li>");
            }
            _ => {}
        }
    }
    if open_sub {
        out.push_str("</ul>");
    }
    if open_item {
        out.push_str("</li>\n");
    }
    out.push_str("</ul>\n</nav>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_githubs() {
        let mut used = HashMap::new();
        assert_eq!(
            slug("Where deferral pays: break-even", &mut used),
            "where-deferral-pays-break-even"
        );
        assert_eq!(
            slug("Search latency (measured)", &mut used),
            "search-latency-measured"
        );
        assert_eq!(
            slug("Claude Code's auto:10 threshold", &mut used),
            "claude-codes-auto10-threshold"
        );
        assert_eq!(slug("parse_config", &mut used), "parse_config");
        assert_eq!(slug("Notes", &mut used), "notes");
        assert_eq!(slug("Notes", &mut used), "notes-1");
        assert_eq!(slug("Notes", &mut used), "notes-2");
    }

    #[test]
    fn raw_html_is_text_and_charts_are_inlined() {
        let md = "# T\n\n## A `x`\n\n<script>alert(1)</script>\n\nhi <img src=x onerror=y> \
                  [j](javascript:alert(1))\n\n![chart](charts/a.svg)\n\n![other](https://x/p.png)\n\n\
                  <details><summary>Charts (1)</summary>\n\n| a | n |\n|---|---:|\n| x | 1 |\n\n</details>\n";
        let files = [ReportFile {
            path: "charts/a.svg".into(),
            bytes: b"<?xml version=\"1.0\"?>\n<svg viewBox=\"0 0 1 1\"><text>t</text></svg>\n"
                .to_vec(),
        }];
        let html = page(md, &files);
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(
            !html.contains("<script") && !html.contains("<img"),
            "{html}"
        );
        assert!(html.contains("<a href=\"#\">j</a>"), "{html}");
        assert!(html.contains("<svg viewBox=\"0 0 1 1\"><text>t</text></svg>"));
        assert!(!html.contains("<?xml") && !html.contains("https://x/p.png"));
        assert!(html.contains("<h2 id=\"a-x\">"), "{html}");
        assert!(html.contains("<details><summary>Charts (1)</summary>"));
        assert!(
            html.contains("<td style=\"text-align: right\">1</td>"),
            "{html}"
        );
        assert!(html.contains("<li><a href=\"#a-x\">A x</a>"), "{html}");
    }
}
