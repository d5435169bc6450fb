//! Deterministic synthetic catalogs for the scale sweep and the benchmarks.
//!
//! Real catalogs stop at a few thousand tools; the sweep needs 10 to 10,000. The generator
//! samples each tool's *shape* (description length, argument count, argument types, enums,
//! nesting, required arguments) from distributions measured once on the real MCP catalogs in
//! `shared/data/catalogs` (all `tools/list` files: github, kubernetes, the eight reference
//! servers, livemcpbench's 70 and docker's 27 servers; 107 files, 1,236 tools, 3,280 arguments;
//! stabletoolbench and bfcl left out because they are converted REST/function APIs, not MCP
//! servers). Only numbers were taken from them: every word comes from the lists below, across
//! invented server domains, so the generated text is ours.
//!
//! Check (o200k_base, json rendering): the 1,236 real tools average 149.1 tokens (median 98,
//! max 1,761); `generate(1236, 107, 1)` averages 138.5 (median 106.5, max 991).
//!
//! Same `(tools, servers, seed)` → the same catalog, byte for byte, on every platform: the
//! random source is splitmix64 and nothing depends on hash order.
//!
//! [`ten_servers`] is the other generator: the fixed, hand-shaped "10 servers × 50 tools"
//! fixture behind the shipped `ten-servers` scenarios.

pub mod five_servers;
pub mod ten_servers;

use serde_json::{Map, Value, json};

use crate::catalog::{Catalog, Tool, mcp_id};

pub use crate::rng::SplitMix64;

// ---- Measured shapes (see the module comment for the corpus) ----------------------------

/// Tool description length in characters, quantiles p10..p99 measured: 27, 40, 59, 150, 360,
/// 1,336 (mean 163). The ends (0 and 2,000) are the observed minimum and a cap.
const DESCRIPTION_CHARS: [(f64, f64); 8] = [
    (0.0, 12.0),
    (0.10, 27.0),
    (0.25, 40.0),
    (0.50, 59.0),
    (0.75, 150.0),
    (0.90, 360.0),
    (0.99, 1336.0),
    (1.0, 2000.0),
];

/// Number of arguments (top-level properties): counts of tools with 0, 1, …, 11 and ≥ 12
/// arguments out of 1,236 (mean 2.65).
const ARGUMENT_COUNT_WEIGHTS: [u32; 13] = [235, 324, 189, 133, 122, 70, 42, 43, 31, 19, 11, 4, 13];

/// Argument types, counts out of 3,280: string, number, array, integer, untyped, boolean, object.
const TYPE_WEIGHTS: [u32; 7] = [1975, 424, 232, 218, 209, 174, 48];
const TYPES: [&str; 7] = [
    "string", "number", "array", "integer", "", "boolean", "object",
];

/// 6.4% of all arguments carry an `enum` (we put them on strings, where nearly all were).
const ENUM_SHARE_OF_STRINGS: f64 = 0.064 * 3280.0 / 1975.0;
/// Enum sizes: quantiles p10..p99 measured 2, 2, 3, 6, 18, 169.
const ENUM_VALUES: [(f64, f64); 7] = [
    (0.0, 2.0),
    (0.25, 2.0),
    (0.50, 3.0),
    (0.75, 6.0),
    (0.90, 18.0),
    (0.99, 60.0),
    (1.0, 80.0),
];
/// 54% of arguments are listed in `required`.
const REQUIRED_SHARE: f64 = 0.54;
/// Argument descriptions: 26% have none; the rest follow these quantiles of length in
/// characters (p50 30 … p99 282 over all arguments, rescaled to the described ones).
const ARGUMENT_WITHOUT_DESCRIPTION: f64 = 0.26;
const ARGUMENT_DESCRIPTION_CHARS: [(f64, f64); 6] = [
    (0.0, 8.0),
    (0.30, 30.0),
    (0.65, 53.0),
    (0.86, 100.0),
    (0.99, 282.0),
    (1.0, 400.0),
];
/// Name length in words (`get_issue` = 2): counts for 1..=5 words out of 1,236.
const NAME_WORD_WEIGHTS: [u32; 5] = [73, 494, 441, 161, 67];
/// Array arguments whose items are objects (the nested case): 48 of 232 measured nested
/// objects/arrays of objects overall; we give a fifth of arrays object items.
const ARRAY_OF_OBJECTS: f64 = 0.2;

// ---- Vocabulary (ours) --------------------------------------------------------------------

/// Invented server domains: a name and the things its tools act on.
const DOMAINS: [(&str, [&str; 8]); 24] = [
    (
        "greenhouse",
        [
            "sensor", "plant", "bed", "valve", "reading", "schedule", "zone", "harvest",
        ],
    ),
    (
        "ledger",
        [
            "account",
            "entry",
            "invoice",
            "payment",
            "budget",
            "statement",
            "vendor",
            "refund",
        ],
    ),
    (
        "fleet",
        [
            "vehicle",
            "driver",
            "route",
            "trip",
            "depot",
            "fuel_log",
            "inspection",
            "shift",
        ],
    ),
    (
        "atlas",
        [
            "map", "layer", "marker", "region", "tile", "boundary", "landmark", "survey",
        ],
    ),
    (
        "recipe-box",
        [
            "recipe",
            "ingredient",
            "pantry",
            "meal_plan",
            "shopping_list",
            "cookbook",
            "rating",
            "substitute",
        ],
    ),
    (
        "harbor",
        [
            "container",
            "berth",
            "vessel",
            "manifest",
            "crane",
            "customs_form",
            "slot",
            "cargo",
        ],
    ),
    (
        "clinic-desk",
        [
            "appointment",
            "patient_note",
            "room",
            "referral",
            "waitlist",
            "reminder",
            "practitioner",
            "visit",
        ],
    ),
    (
        "studio",
        [
            "track", "mix", "sample", "session", "stem", "preset", "marker", "bounce",
        ],
    ),
    (
        "library-desk",
        [
            "book",
            "loan",
            "patron",
            "hold",
            "shelf",
            "fine",
            "catalog_record",
            "branch",
        ],
    ),
    (
        "weather-station",
        [
            "forecast",
            "alert",
            "station",
            "observation",
            "radar_frame",
            "warning",
            "gauge",
            "front",
        ],
    ),
    (
        "warehouse",
        [
            "pallet",
            "bin",
            "pick_list",
            "shipment",
            "stock_level",
            "dock",
            "carton",
            "order",
        ],
    ),
    (
        "classroom",
        [
            "course",
            "lesson",
            "assignment",
            "grade",
            "student",
            "rubric",
            "quiz",
            "roster",
        ],
    ),
    (
        "helpdesk",
        [
            "ticket",
            "macro",
            "queue",
            "agent",
            "reply",
            "tag",
            "escalation",
            "survey",
        ],
    ),
    (
        "observatory",
        [
            "target",
            "exposure",
            "telescope",
            "night_log",
            "filter",
            "frame",
            "catalog_entry",
            "run",
        ],
    ),
    (
        "orchard",
        [
            "tree",
            "row",
            "pest_report",
            "crop",
            "picker",
            "crate",
            "spray_plan",
            "yield",
        ],
    ),
    (
        "transit",
        [
            "stop",
            "line",
            "timetable",
            "departure",
            "fare",
            "delay",
            "platform",
            "pass",
        ],
    ),
    (
        "gallery",
        [
            "artwork",
            "artist",
            "exhibit",
            "loan_request",
            "label",
            "wall",
            "acquisition",
            "tour",
        ],
    ),
    (
        "kitchen-ops",
        [
            "station",
            "prep_list",
            "ticket",
            "supplier",
            "temperature_log",
            "menu_item",
            "batch",
            "waste_entry",
        ],
    ),
    (
        "grid",
        [
            "feeder",
            "meter",
            "outage",
            "substation",
            "load_profile",
            "crew",
            "work_order",
            "transformer",
        ],
    ),
    (
        "archive",
        [
            "document",
            "folder",
            "retention_rule",
            "scan",
            "box",
            "citation",
            "collection",
            "request",
        ],
    ),
    (
        "events",
        [
            "venue",
            "booking",
            "attendee",
            "badge",
            "agenda",
            "speaker",
            "ticket_type",
            "check_in",
        ],
    ),
    (
        "lab-bench",
        [
            "specimen",
            "assay",
            "plate",
            "protocol",
            "instrument",
            "result",
            "batch",
            "freezer_slot",
        ],
    ),
    (
        "trailhead",
        [
            "trail",
            "permit",
            "campsite",
            "ranger_note",
            "closure",
            "waypoint",
            "group",
            "hazard",
        ],
    ),
    (
        "print-shop",
        [
            "job",
            "proof",
            "paper_stock",
            "press",
            "quote",
            "finish",
            "plate_set",
            "delivery",
        ],
    ),
];

const VERBS: [&str; 24] = [
    "get",
    "list",
    "create",
    "update",
    "delete",
    "search",
    "find",
    "add",
    "remove",
    "set",
    "archive",
    "export",
    "import",
    "assign",
    "close",
    "open",
    "approve",
    "schedule",
    "cancel",
    "move",
    "copy",
    "summarize",
    "validate",
    "sync",
];

const QUALIFIERS: [&str; 16] = [
    "details",
    "status",
    "history",
    "summary",
    "batch",
    "by_date",
    "by_owner",
    "comments",
    "settings",
    "draft",
    "report",
    "links",
    "metrics",
    "permissions",
    "preview",
    "versions",
];

const ARGUMENT_NAMES: [&str; 32] = [
    "id",
    "name",
    "limit",
    "cursor",
    "query",
    "status",
    "owner",
    "region",
    "since",
    "until",
    "format",
    "tags",
    "priority",
    "page",
    "per_page",
    "sort",
    "order",
    "include_archived",
    "notes",
    "title",
    "body",
    "timezone",
    "units",
    "dry_run",
    "fields",
    "language",
    "reason",
    "color",
    "size",
    "parent_id",
    "due_date",
    "labels",
];

const ENUM_WORDS: [&str; 20] = [
    "open", "closed", "pending", "active", "paused", "draft", "low", "medium", "high", "urgent",
    "asc", "desc", "daily", "weekly", "monthly", "json", "csv", "summary", "full", "none",
];

/// Clauses that descriptions are composed from; `{n}` is a noun, `{d}` the domain, `{a}`
/// an argument or attribute word.
const SENTENCES: [&str; 16] = [
    "Returns the matching {n} records with their {a} and current state.",
    "Use this when the user asks about a specific {n} in the {d} system.",
    "Results are paginated; pass the cursor from the previous call to continue.",
    "Requires write access to the {d} workspace.",
    "The {a} field is optional and defaults to the workspace setting.",
    "Changes are recorded in the {n} history and can be undone within a day.",
    "Filters combine with AND; leave a filter empty to ignore it.",
    "Large results are truncated to the first {k} items.",
    "Times are in UTC unless a timezone is given.",
    "Fails with a clear message when the {n} does not exist or was archived.",
    "Prefer the search tool when the exact {a} is unknown.",
    "The response includes links to related {n} entries.",
    "Only {n} entries the caller can see are included.",
    "Set dry_run to preview the effect without saving anything.",
    "Sorting by {a} is stable; ties keep their creation order.",
    "Rate limited to {k} calls per minute per workspace.",
];

// ---- Generation ---------------------------------------------------------------------------

/// The server names for `servers` servers: the domains in order, then `domain-2`, `domain-3`, …
pub fn server_names(servers: usize) -> Vec<String> {
    (0..servers)
        .map(|i| {
            let base = DOMAINS[i % DOMAINS.len()].0;
            match i / DOMAINS.len() {
                0 => base.to_string(),
                round => format!("{base}-{}", round + 1),
            }
        })
        .collect()
}

/// Generates `tools` MCP tools spread evenly over `servers` servers (`1 <= servers <= tools`;
/// the first `tools % servers` servers get one more). Ids are `mcp__<server>__<verb>_<noun>…`,
/// unique by construction.
pub fn generate_tools(tools: usize, servers: usize, seed: u64) -> Vec<Tool> {
    let servers = servers.clamp(1, tools.max(1));
    let names = server_names(servers);
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::with_capacity(tools);
    for (s, server) in names.iter().enumerate() {
        let count = tools / servers + usize::from(s < tools % servers);
        let nouns = &DOMAINS[s % DOMAINS.len()].1;
        let domain = DOMAINS[s % DOMAINS.len()].0;
        let mut used = std::collections::HashSet::with_capacity(count);
        for _ in 0..count {
            let name = unique_tool_name(&mut rng, nouns, &mut used);
            let description = description(&mut rng, &name, nouns, domain);
            let input_schema = schema(&mut rng, nouns);
            out.push(Tool {
                id: mcp_id(server, &name),
                name,
                server: Some(server.clone()),
                description,
                input_schema,
                should_defer: None,
                always_load: false,
                search_hint: None,
                depends_on: vec![],
                origin: None,
            });
        }
    }
    out
}

/// `generate_tools` as a validated `Catalog`.
pub fn generate(tools: usize, servers: usize, seed: u64) -> Catalog {
    Catalog::from_tools(generate_tools(tools, servers, seed))
        .expect("generated tool names are unique within each server by construction")
}

fn unique_tool_name(
    rng: &mut SplitMix64,
    nouns: &[&str],
    used: &mut std::collections::HashSet<String>,
) -> String {
    let words = 1 + rng.weighted(&NAME_WORD_WEIGHTS);
    let mut name = match words {
        1 => rng.pick(&VERBS).to_string(),
        2 => format!("{}_{}", rng.pick(&VERBS), rng.pick(nouns)),
        _ => {
            let mut n = format!("{}_{}", rng.pick(&VERBS), rng.pick(nouns));
            // Nouns may already hold two words (`fuel_log`); qualifiers fill the rest.
            while n.split('_').count() < words {
                n.push('_');
                let q = rng.pick(&QUALIFIERS);
                n.push_str(q);
            }
            n
        }
    };
    if used.contains(&name) {
        // Try a qualifier first (names stay natural), then number it.
        let q = rng.pick(&QUALIFIERS);
        let with_q = format!("{name}_{q}");
        name = if used.contains(&with_q) {
            (2..)
                .map(|i| format!("{with_q}_{i}"))
                .find(|n| !used.contains(n))
                .expect("an unused number exists")
        } else {
            with_q
        };
    }
    used.insert(name.clone());
    name
}

fn fill(rng: &mut SplitMix64, template: &str, nouns: &[&str], domain: &str) -> String {
    let noun = rng.pick(nouns).replace('_', " ");
    let attr = rng.pick(&ARGUMENT_NAMES);
    let k = [10, 20, 25, 50, 100, 500][rng.below(6)];
    template
        .replace("{n}", &noun)
        .replace("{d}", domain)
        .replace("{a}", attr)
        .replace("{k}", &k.to_string())
}

/// A description of about the sampled length: a lead sentence from the tool's name, then
/// clauses until the length is reached (whole sentences, so the text stays readable).
fn description(rng: &mut SplitMix64, name: &str, nouns: &[&str], domain: &str) -> String {
    let target = rng.quantile(&DESCRIPTION_CHARS) as usize;
    let mut words = name.split('_');
    let verb = words.next().unwrap_or("get");
    let rest: Vec<&str> = words.collect();
    let object = if rest.is_empty() {
        format!("{domain} items")
    } else {
        rest.join(" ")
    };
    let mut text = format!(
        "{}{} {object} in {domain}.",
        verb[..1].to_uppercase(),
        &verb[1..]
    );
    while text.len() < target {
        let t = rng.pick(&SENTENCES);
        let sentence = fill(rng, t, nouns, domain);
        // Stop at whichever length is closer to the target: with or without this sentence.
        if (text.len() + 1 + sentence.len()).saturating_sub(target) > target - text.len() {
            break;
        }
        text.push(' ');
        text.push_str(&sentence);
    }
    text
}

fn argument_description(rng: &mut SplitMix64, arg: &str, nouns: &[&str]) -> Option<String> {
    if rng.chance(ARGUMENT_WITHOUT_DESCRIPTION) {
        return None;
    }
    let target = rng.quantile(&ARGUMENT_DESCRIPTION_CHARS) as usize;
    let noun = rng.pick(nouns).replace('_', " ");
    let mut text = format!("The {} of the {noun}.", arg.replace('_', " "));
    const MORE: [&str; 6] = [
        " Optional.",
        " Leave empty to use the default.",
        " Case-insensitive.",
        " Must match an existing entry exactly, including its prefix.",
        " Accepts a comma-separated list when several values are wanted.",
        " Values outside the allowed range are clamped rather than rejected.",
    ];
    while text.len() < target {
        let more = rng.pick(&MORE);
        text.push_str(more);
    }
    Some(text)
}

fn property(rng: &mut SplitMix64, arg: &str, nouns: &[&str], depth: usize) -> Value {
    let mut p = Map::new();
    let mut ty = TYPES[rng.weighted(&TYPE_WEIGHTS)];
    if depth > 0 && ty == "object" {
        ty = "string"; // one level of nesting, as in nearly every real schema
    }
    if !ty.is_empty() {
        p.insert("type".into(), json!(ty));
    }
    if let Some(d) = argument_description(rng, arg, nouns) {
        p.insert("description".into(), json!(d));
    }
    match ty {
        "string" if rng.chance(ENUM_SHARE_OF_STRINGS) => {
            let n = (rng.quantile(&ENUM_VALUES) as usize).max(2);
            let values: Vec<String> = (0..n)
                .map(|i| {
                    let w = ENUM_WORDS[i % ENUM_WORDS.len()];
                    match i / ENUM_WORDS.len() {
                        0 => w.to_string(),
                        r => format!("{w}_{r}"),
                    }
                })
                .collect();
            p.insert("enum".into(), json!(values));
        }
        "array" => {
            let items = if depth == 0 && rng.chance(ARRAY_OF_OBJECTS) {
                let fields = 2 + rng.below(3);
                object_schema(rng, nouns, fields, depth + 1)
            } else {
                json!({"type": "string"})
            };
            p.insert("items".into(), items);
        }
        "object" => {
            let fields = 1 + rng.below(4);
            let inner = object_schema(rng, nouns, fields, depth + 1);
            if let Value::Object(m) = inner {
                for (k, v) in m {
                    if k != "type" {
                        p.insert(k, v);
                    }
                }
            }
        }
        _ => {}
    }
    Value::Object(p)
}

fn object_schema(rng: &mut SplitMix64, nouns: &[&str], args: usize, depth: usize) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for i in 0..args {
        let base = if i == 0 && rng.chance(0.5) {
            format!("{}_id", rng.pick(nouns))
        } else {
            rng.pick(&ARGUMENT_NAMES).to_string()
        };
        let name = if props.contains_key(&base) {
            format!("{base}_{i}")
        } else {
            base
        };
        let p = property(rng, &name, nouns, depth);
        if rng.chance(REQUIRED_SHARE) {
            required.push(json!(name));
        }
        props.insert(name, p);
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    Value::Object(schema)
}

fn schema(rng: &mut SplitMix64, nouns: &[&str]) -> Value {
    let mut args = rng.weighted(&ARGUMENT_COUNT_WEIGHTS);
    if args == ARGUMENT_COUNT_WEIGHTS.len() - 1 {
        args += rng.below(8); // the "12 or more" bucket: 12..=19
    }
    object_schema(rng, nouns, args, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::to_native_json;

    #[test]
    fn splitmix_matches_the_reference_stream() {
        // First outputs of splitmix64 seeded with 0 (reference C implementation).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        let a = to_native_json(&generate(300, 12, 7));
        let b = to_native_json(&generate(300, 12, 7));
        let c = to_native_json(&generate(300, 12, 8));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn sizes_and_unique_ids() {
        for (tools, servers) in [(1, 1), (10, 3), (100, 10), (10_000, 100), (50, 200)] {
            let c = generate(tools, servers, 42);
            assert_eq!(c.len(), tools);
            assert_eq!(c.servers().len(), servers.min(tools));
            assert!(c.tools().iter().all(|t| t.id.starts_with("mcp__")));
        }
        assert_eq!(server_names(26)[24], "greenhouse-2");
    }

    #[test]
    fn shapes_follow_the_measured_distributions() {
        let c = generate(5_000, 50, 1);
        let n = c.len() as f64;
        let mut lens: Vec<usize> = c.tools().iter().map(|t| t.description.len()).collect();
        lens.sort_unstable();
        let median = lens[lens.len() / 2];
        assert!((50..=80).contains(&median), "median description {median}");
        let args: usize = c
            .tools()
            .iter()
            .map(|t| t.input_schema["properties"].as_object().unwrap().len())
            .sum();
        let mean_args = args as f64 / n;
        assert!(
            (2.2..=3.2).contains(&mean_args),
            "mean arguments {mean_args}"
        );
    }

    #[test]
    fn the_catalog_loads_back_through_the_native_loader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gen.json");
        let c = generate(200, 5, 3);
        std::fs::write(&path, to_native_json(&c)).unwrap();
        let loaded = crate::catalog::load_catalogs(&[crate::catalog::parse_catalog_arg(
            path.to_str().unwrap(),
        )])
        .unwrap();
        assert_eq!(loaded.len(), 200);
        assert_eq!(loaded.get(17).id, c.get(17).id);
    }
}
