//! The TypeScript-like tool rendering OpenAI models receive (openai/harmony `docs/format.md`,
//! "Function calling"): every function is a `type NAME = (_: {...}) => any;` line under
//! `// description` comments, inside `namespace functions { ... }`. Written from the documented
//! format; where the document is silent (nullable, oneOf, examples, titles, defaults) it follows
//! what the `openai-harmony` renderer does with a JSON Schema.
//!
//! A tool's count is taken *in context*: the tokenizer's pre-tokenizer glues the end of one
//! function (`;\n\n`) to the start of the next (`//`), so a function counted alone would be off
//! by a token or so. [`ToolCounting::tool`] counts a function between a fixed predecessor and
//! successor and subtracts them, which makes the sum over tools plus [`ToolCounting::wrapper`]
//! equal to the count of the whole namespace (checked in the tests).

use std::fmt::Write as _;
use std::sync::OnceLock;

use serde_json::Value;

use crate::catalog::Tool;
use crate::tokenize::Tokenizer;

/// Beyond this nesting a schema renders as `any` (real schemas stay far below; this keeps a
/// hostile one from exhausting the stack).
const MAX_DEPTH: usize = 48;

/// `namespace functions {` and its blank line, before the first function.
pub const NAMESPACE_OPEN: &str = "namespace functions {\n\n";
/// After the last function.
pub const NAMESPACE_CLOSE: &str = "} // namespace functions";
/// The developer-message section that holds the namespace (Responses API, harmony).
pub const TOOLS_HEADER: &str = "# Tools\n\n## functions\n\n";

/// One function as it appears in the namespace: comment lines, the `type` line, a blank line.
pub fn function_block(tool: &Tool) -> String {
    let mut out = String::with_capacity(tool.description.len() + 128);
    push_comments(&mut out, &tool.description);
    write_signature(&mut out, &tool.id, &tool.input_schema);
    out.push_str("\n\n");
    out
}

/// `type NAME = (_: {...}) => any;`, or `() => any` for a function without parameters.
fn write_signature(out: &mut String, name: &str, schema: &Value) {
    let has_params = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    if has_params {
        let _ = write!(out, "type {name} = (_: {}) => any;", ts_type(schema, "", 0));
    } else {
        let _ = write!(out, "type {name} = () => any;");
    }
}

/// The section that opens the tools of a developer message; each namespace follows it as a
/// `## NAME` section, the sections joined by blank lines.
pub const TOOLS_SECTION_OPEN: &str = "# Tools\n\n";

/// `// line` for each line of `description`.
fn push_comments(out: &mut String, description: &str) {
    for line in description.lines() {
        out.push_str("// ");
        out.push_str(line);
        out.push('\n');
    }
}

/// The searchable surface of something deferred behind OpenAI's `tool_search`: its name and
/// description, nothing of its parameters or members (OpenAI API docs, Tool search: "the model
/// still sees the name and description of whatever is searchable"). One `## NAME` section
/// with an empty namespace, the form harmony gives a namespace (`docs/format.md`); a flat
/// deferred function is addressed as a namespace of its own name (the docs' loaded
/// `function_call` carries `"namespace": NAME`). The empty `{ }` body is assumed: harmony's
/// reference renderer drops the braces of a namespace without tools, which falls 18% short of
/// the published flat count (docs/methodology/published-figures.md).
pub fn surface_block(name: &str, description: &str) -> String {
    let mut out = String::with_capacity(description.len() + 2 * name.len() + 48);
    let _ = write!(out, "## {name}\n\n");
    push_comments(&mut out, description);
    let _ = write!(out, "namespace {name} {{\n\n}} // namespace {name}");
    out
}

/// What a hosted `tool_search` loads, as its output carries it: the namespace's section (its
/// description, when it has one) holding the loaded functions' full blocks, parameters included.
pub fn loaded_block<'a>(
    namespace: &str,
    description: Option<&str>,
    tools: impl IntoIterator<Item = &'a Tool>,
) -> String {
    let mut out = format!("## {namespace}\n\n");
    if let Some(d) = description {
        push_comments(&mut out, d);
    }
    let _ = write!(out, "namespace {namespace} {{\n\n");
    for t in tools {
        out.push_str(&function_block(t));
    }
    let _ = write!(out, "}} // namespace {namespace}");
    out
}

/// The whole namespace for these tools, in order.
pub fn namespace<'a>(tools: impl IntoIterator<Item = &'a Tool>) -> String {
    let mut out = String::from(NAMESPACE_OPEN);
    for t in tools {
        out.push_str(&function_block(t));
    }
    out.push_str(NAMESPACE_CLOSE);
    out
}

fn is_enum(schema: &Value) -> bool {
    schema
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
}

/// `default: ...` as a trailing comment: plain strings quoted, enum members bare.
fn default_comment(schema: &Value, default: &Value) -> String {
    match default.as_str() {
        Some(s) if !is_enum(schema) => format!("default: \"{s}\""),
        Some(s) => format!("default: {s}"),
        None => format!("default: {default}"),
    }
}

fn nullable(schema: &Value, ty: String) -> String {
    if schema.get("nullable").and_then(Value::as_bool) == Some(true) && !ty.contains("null") {
        format!("{ty} | null")
    } else {
        ty
    }
}

/// The TypeScript type of a JSON Schema; `indent` prefixes the lines of an object's members.
pub fn ts_type(schema: &Value, indent: &str, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return "any".into();
    }
    if let Some(variants) = schema.get("oneOf").and_then(Value::as_array) {
        return one_of(variants, indent, depth);
    }
    if let Some(types) = schema.get("type").and_then(Value::as_array) {
        let names: Vec<&str> = types
            .iter()
            .filter_map(Value::as_str)
            .map(|t| if t == "integer" { "number" } else { t })
            .collect();
        if !names.is_empty() {
            return names.join(" | ");
        }
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => object(schema, indent, depth),
        Some("string") => {
            let members: Vec<String> = schema
                .get("enum")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(|s| format!("\"{s}\""))
                        .collect()
                })
                .unwrap_or_default();
            if members.is_empty() {
                "string".into()
            } else {
                members.join(" | ")
            }
        }
        Some("number" | "integer") => "number".into(),
        Some("boolean") => "boolean".into(),
        Some("array") => match schema.get("items") {
            Some(items) => format!("{}[]", ts_type(items, indent, depth + 1)),
            None => "Array<any>".into(),
        },
        _ => "any".into(),
    }
}

/// A union written one variant a line, each with its own trailing comments.
fn one_of(variants: &[Value], indent: &str, depth: usize) -> String {
    let mut out = String::new();
    for v in variants {
        let _ = write!(out, "\n{indent} | ");
        out.push_str(&nullable(v, ts_type(v, &format!("{indent}   "), depth + 1)));
        let mut comments = Vec::new();
        if let Some(d) = v.get("description").and_then(Value::as_str) {
            comments.push(d.to_string());
        }
        if let Some(d) = v.get("default") {
            comments.push(default_comment(v, d));
        }
        if !comments.is_empty() {
            let _ = write!(out, " // {}", comments.join(" "));
        }
    }
    out
}

fn object(schema: &Value, indent: &str, depth: usize) -> String {
    let mut out = String::new();
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        let _ = writeln!(out, "{indent}// {d}");
    }
    out.push_str("{\n");
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (key, prop) in props {
            let mark = if required.contains(&key.as_str()) {
                ""
            } else {
                "?"
            };
            member(&mut out, key, mark, prop, indent, depth);
        }
    }
    let _ = write!(out, "{indent}}}");
    out
}

/// One property: comment lines above it, then `name?: type,` with a default comment.
fn member(out: &mut String, key: &str, mark: &str, prop: &Value, indent: &str, depth: usize) {
    if let Some(t) = prop.get("title").and_then(Value::as_str) {
        let _ = write!(out, "{indent}// {t}\n{indent}//\n");
    }
    let variants = prop.get("oneOf").and_then(Value::as_array);
    let desc = prop.get("description").and_then(Value::as_str);
    if variants.is_none()
        && let Some(d) = desc
    {
        let _ = writeln!(out, "{indent}// {d}");
    }
    if let Some(examples) = prop.get("examples").and_then(Value::as_array)
        && !examples.is_empty()
    {
        let _ = writeln!(out, "{indent}// Examples:");
        for e in examples.iter().filter_map(Value::as_str) {
            let _ = writeln!(out, "{indent}// - \"{e}\"");
        }
    }
    if let Some(variants) = variants {
        one_of_member(out, key, mark, prop, variants, desc, indent, depth);
        return;
    }
    let ty = nullable(prop, ts_type(prop, &format!("{indent}    "), depth + 1));
    let _ = write!(out, "{indent}{key}{mark}: {ty},");
    if let Some(d) = prop.get("default") {
        let _ = write!(out, " // {}", default_comment(prop, d));
    }
    out.push('\n');
}

/// A property whose schema is a `oneOf`: the description once above (unless the first variant
/// repeats it), then one variant a line.
#[allow(clippy::too_many_arguments)]
fn one_of_member(
    out: &mut String,
    key: &str,
    mark: &str,
    prop: &Value,
    variants: &[Value],
    desc: Option<&str>,
    indent: &str,
    depth: usize,
) {
    let first_repeats = desc.is_some()
        && variants
            .first()
            .and_then(|v| v.get("description"))
            .and_then(Value::as_str)
            == desc;
    let above = !first_repeats && desc.is_some();
    if above && let Some(d) = desc {
        let _ = writeln!(out, "{indent}// {d}");
    }
    if let Some(d) = prop.get("default") {
        let _ = writeln!(out, "{indent}// {}", default_comment(prop, d));
    }
    let _ = writeln!(out, "{indent}{key}{mark}:");
    for (i, v) in variants.iter().enumerate() {
        let _ = write!(out, "{indent} | ");
        out.push_str(&nullable(v, ts_type(v, &format!("{indent}   "), depth + 1)));
        let mut comments = Vec::new();
        let vdesc = v.get("description").and_then(Value::as_str);
        if !(i == 0 && above)
            && let Some(d) = vdesc
            && Some(d) != desc
        {
            comments.push(d.to_string());
        }
        if let Some(d) = v.get("default") {
            comments.push(default_comment(v, d));
        }
        if !comments.is_empty() {
            let _ = write!(out, " // {}", comments.join(" "));
        }
        out.push('\n');
    }
    let _ = writeln!(out, "{indent},");
}

/// Counts functions in context so that per-tool counts add up to the namespace's count.
#[derive(Debug, Clone, Copy)]
pub struct ToolCounting {
    pub tokenizer: Tokenizer,
}

/// What precedes a function in the namespace (the end of the previous one) and what follows
/// it (the start of the next): the pre-tokenizer joins `;\n\n//` into one piece.
const BEFORE: &str = "any;\n\n";
const AFTER: &str = "//";
/// What precedes a section's join: the end of the previous section.
const SECTION_BEFORE: &str = "} // namespace functions";

impl ToolCounting {
    /// Tokens of the context alone, counted once per tokenizer.
    fn context(self) -> usize {
        static COUNTS: [OnceLock<usize>; 2] = [OnceLock::new(), OnceLock::new()];
        let slot = match self.tokenizer {
            Tokenizer::O200kBase => &COUNTS[0],
            Tokenizer::Cl100kBase => &COUNTS[1],
        };
        *slot.get_or_init(|| self.tokenizer.count(&format!("{BEFORE}{AFTER}")))
    }

    fn in_context(self, block: &str) -> usize {
        let mut s = String::with_capacity(block.len() + 8);
        s.push_str(BEFORE);
        s.push_str(block);
        s.push_str(AFTER);
        self.tokenizer.count(&s) - self.context()
    }

    /// Tokens one function adds to the namespace.
    pub fn tool(self, tool: &Tool) -> usize {
        self.in_context(&function_block(tool))
    }

    /// Tokens one surface ([`surface_block`]) adds to the tools sections, its `\n\n` join
    /// before it included: surfaces after any section add up (checked in the tests).
    pub fn surface(self, name: &str, description: &str) -> usize {
        let block = surface_block(name, description);
        self.tokenizer
            .count(&format!("{SECTION_BEFORE}\n\n{block}"))
            - self.tokenizer.count(SECTION_BEFORE)
    }

    /// `namespace functions { ... }` around the functions: the namespace's count minus its
    /// functions' in-context counts (the same for any function that opens with a comment).
    pub fn wrapper(self) -> usize {
        let reference = reference_tool();
        let whole = self
            .tokenizer
            .count(&namespace(std::iter::once(&reference)));
        whole - self.tool(&reference)
    }
}

/// A function with a comment line, as almost every real one has.
fn reference_tool() -> Tool {
    Tool {
        id: "f".into(),
        name: "f".into(),
        server: None,
        description: "Does a thing.".into(),
        input_schema: serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        should_defer: None,
        always_load: false,
        search_hint: None,
        depends_on: Vec::new(),
        origin: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(id: &str, desc: &str, schema: Value) -> Tool {
        Tool {
            id: id.into(),
            name: id.into(),
            description: desc.into(),
            input_schema: schema,
            ..reference_tool()
        }
    }

    #[test]
    fn renders_the_documented_example() {
        // docs/format.md, "Defining available tools".
        let tools = [
            tool(
                "get_location",
                "Gets the location of the user.",
                json!({"type": "object", "properties": {}}),
            ),
            tool(
                "get_current_weather",
                "Gets the current weather in the provided location.",
                json!({"type": "object", "properties": {
                    "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                    "format": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}
                }, "required": ["location"]}),
            ),
            tool(
                "get_multiple_weathers",
                "Gets the current weather in the provided list of locations.",
                json!({"type": "object", "properties": {
                    "locations": {"type": "array", "items": {"type": "string"}, "description": "List of city and state, e.g. [\"San Francisco, CA\", \"New York, NY\"]"},
                    "format": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}
                }, "required": ["locations"]}),
            ),
        ];
        let want = "namespace functions {

// Gets the location of the user.
type get_location = () => any;

// Gets the current weather in the provided location.
type get_current_weather = (_: {
// The city and state, e.g. San Francisco, CA
location: string,
format?: \"celsius\" | \"fahrenheit\", // default: celsius
}) => any;

// Gets the current weather in the provided list of locations.
type get_multiple_weathers = (_: {
// List of city and state, e.g. [\"San Francisco, CA\", \"New York, NY\"]
locations: string[],
format?: \"celsius\" | \"fahrenheit\", // default: celsius
}) => any;

} // namespace functions";
        assert_eq!(namespace(&tools), want);
    }

    #[test]
    fn nested_objects_unions_and_defaults() {
        // A nested object's description appears twice, as the harmony renderer writes it.
        let schema = json!({"type": "object", "properties": {
            "opts": {"type": "object", "description": "Options.", "properties": {"n": {"type": "integer", "default": 3}}, "required": ["n"]},
            "mode": {"type": ["string", "integer"]},
            "who": {"type": "string", "nullable": true, "default": "me"},
            "pick": {"description": "Pick one.", "oneOf": [{"type": "string"}, {"type": "number", "description": "An id."}]},
            "any": {}
        }});
        let got = ts_type(&schema, "", 0);
        let want = "{
// Options.
opts?:     // Options.
{
    n: number, // default: 3
    },
mode?: string | number,
who?: string | null, // default: \"me\"
// Pick one.
pick?:
 | string
 | number // An id.
,
any?: any,
}";
        assert_eq!(got, want);
    }

    #[test]
    fn hostile_depth_renders_as_any() {
        let mut v = json!({"type": "string"});
        for _ in 0..500 {
            v = json!({"type": "array", "items": v});
        }
        let t = ts_type(&v, "", 0);
        assert!(t.starts_with("any[]") && !t.contains("string"), "{t}");
        assert_eq!(t.matches("[]").count(), MAX_DEPTH + 1);
    }

    #[test]
    fn a_surface_is_the_name_and_description_only() {
        let t = tool(
            "get_weather",
            "Gets the weather.\nIn Celsius.",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        );
        assert_eq!(
            surface_block(&t.id, &t.description),
            "## get_weather\n\n// Gets the weather.\n// In Celsius.\nnamespace get_weather {\n\n} // namespace get_weather"
        );
        assert_eq!(
            loaded_block("crm", Some("CRM tools."), [&t]),
            "## crm\n\n// CRM tools.\nnamespace crm {\n\n// Gets the weather.\n// In Celsius.\ntype get_weather = (_: {\ncity?: string,\n}) => any;\n\n} // namespace crm"
        );
    }

    #[test]
    fn surfaces_add_up_after_any_section() {
        let c = ToolCounting {
            tokenizer: Tokenizer::O200kBase,
        };
        let named: Vec<(String, String)> = (0..9)
            .map(|i| {
                (
                    format!("ns_{i}"),
                    format!("Group {i} of tools (HR, finance; docs).\nSecond line."),
                )
            })
            .chain([("bare".to_string(), String::new())])
            .collect();
        for head in [
            "Be brief.\n\n# Tools",
            "# Tools\n\n## functions\n\nnamespace functions {\n\n} // namespace functions",
        ] {
            let mut text = head.to_string();
            let mut sum = c.tokenizer.count(head);
            for (name, desc) in &named {
                text.push_str("\n\n");
                text.push_str(&surface_block(name, desc));
                sum += c.surface(name, desc);
                assert_eq!(c.tokenizer.count(&text), sum, "{head:?} … {name}");
            }
        }
    }

    #[test]
    fn in_context_counts_add_up_to_the_namespace() {
        let c = ToolCounting {
            tokenizer: Tokenizer::O200kBase,
        };
        let tools: Vec<Tool> = (0..12)
            .map(|i| {
                tool(
                    &format!("tool_{i}"),
                    &format!("Does thing number {i}; returns (maybe) JSON.\nSecond line."),
                    json!({"type": "object", "properties": {"q": {"type": "string", "description": "Query."}, "n": {"type": "integer"}}, "required": ["q"]}),
                )
            })
            .collect();
        for n in 1..=tools.len() {
            let whole = c.tokenizer.count(&namespace(&tools[..n]));
            let parts: usize = c.wrapper() + tools[..n].iter().map(|t| c.tool(t)).sum::<usize>();
            assert_eq!(whole, parts, "{n} tools");
        }
    }
}
