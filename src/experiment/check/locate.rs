//! Where a finding is: each tool's file read once and its `line:column` found, the deepest part named first.

use super::*;

/// Each tool's `line:column`, the file read once.
#[derive(Default)]
pub(super) struct Locator {
    pub(super) docs: HashMap<PathBuf, Option<Document>>,
}

impl Locator {
    /// The tool's file and the position of `sub` inside it (the first of `subs` found), else
    /// of the tool itself.
    pub(super) fn place(
        &mut self,
        tool: &Tool,
        subs: &[Vec<Seg>],
    ) -> (Option<String>, Option<(usize, usize)>) {
        let Some(origin) = &tool.origin else {
            return (None, None);
        };
        let doc = self
            .docs
            .entry(origin.path.clone())
            .or_insert_with(|| Document::read(&origin.path).ok());
        let file = Some(origin.path.display().to_string());
        let Some(doc) = doc else { return (file, None) };
        // `locate` answers with the deepest ancestor of a missing path: try only paths that exist.
        for sub in subs {
            let mut at = origin.at.clone();
            at.extend(sub.iter().cloned());
            if exists(&doc.value, &at)
                && let Some(p) = doc.locate(&at)
            {
                return (file, Some((p.line, p.column)));
            }
        }
        (file, doc.locate(&origin.at).map(|p| (p.line, p.column)))
    }
}

pub(super) fn exists(value: &serde_json::Value, path: &[Seg]) -> bool {
    let mut v = value;
    for seg in path {
        let next = match seg {
            Seg::Key(k) => v.get(k.as_str()),
            Seg::Index(i) => v.get(*i),
        };
        match next {
            Some(n) => v = n,
            None => return false,
        }
    }
    true
}

pub(super) struct FindingBuilder<'a> {
    pub(super) id: &'a str,
    pub(super) level: Level,
    pub(super) tool: Option<&'a Tool>,
    pub(super) subject: Option<String>,
    pub(super) client: Option<String>,
    pub(super) message: String,
    pub(super) subs: Vec<Vec<Seg>>,
}

impl FindingBuilder<'_> {
    pub(super) fn build(self, locator: &mut Locator) -> Finding {
        let (file, at) = match self.tool {
            Some(t) => locator.place(t, &self.subs),
            None => (None, None),
        };
        Finding {
            level: self.level,
            id: self.id.to_string(),
            tool: self.tool.map(|t| t.id.clone()),
            subject: self.subject,
            client: self.client,
            file,
            line: at.map(|a| a.0),
            column: at.map(|a| a.1),
            message: self.message,
        }
    }
}

pub(super) fn finding<'a>(
    id: &'a str,
    level: Level,
    tool: Option<&'a Tool>,
    message: String,
) -> FindingBuilder<'a> {
    FindingBuilder {
        id,
        level,
        tool,
        subject: None,
        client: None,
        message,
        subs: Vec::new(),
    }
}

pub(super) fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// Where a parameter's schema may sit under a tool, in each catalog form.
pub(super) fn parameter_paths(param: &str) -> Vec<Vec<Seg>> {
    let p = |pre: &[&str]| {
        let mut v: Vec<Seg> = pre.iter().map(|k| key(k)).collect();
        v.push(key("properties"));
        v.push(key(param));
        v
    };
    vec![
        p(&["inputSchema"]),
        p(&["input_schema"]),
        p(&["parameters"]),
        p(&["function", "parameters"]),
    ]
}

pub(super) fn description_paths() -> Vec<Vec<Seg>> {
    vec![
        vec![key("description")],
        vec![key("function"), key("description")],
    ]
}

/// The findings that carry a file, for annotations.
pub fn located(findings: &[Finding]) -> impl Iterator<Item = &Finding> {
    findings.iter().filter(|f| f.file.is_some())
}
