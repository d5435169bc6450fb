//! Integers beyond 64 bits in tool schemas: serde_json (without `arbitrary_precision`) keeps
//! them as floats, so a catalog re-written or counted would carry `1.8446744073709552e+19` for
//! `18446744073709551616`. Every path a schema comes in by refuses them with exit 2 at the
//! file and `line:column` (the MCP path is in `mcp_hostile`).

use crate::support::toolbudget;

const WIDE: &str = "18446744073709551616";

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_json_catalog_is_refused_at_the_literal_and_a_yaml_one_too() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("gh.json");
    std::fs::write(
        &json,
        format!(
            "{{\"tools\": [\n  {{\"name\": \"t\", \"description\": \"{WIDE}\",\n   \"inputSchema\": {{\"type\": \"object\", \"maximum\": {WIDE}}}}}]}}\n"
        ),
    )
    .unwrap();
    let o = toolbudget()
        .args(["count", "-c"])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.starts_with(&format!(
            "error: {}:3:49: tools[0].inputSchema.maximum: the integer {WIDE} does not fit in 64 \
             bits: JSON numbers beyond 64 bits would be stored as floats and changed",
            json.display()
        )),
        "{e}"
    );
    assert!(e.contains("write it as a string"), "{e}");

    let yaml = dir.path().join("native.yaml");
    std::fs::write(
        &yaml,
        format!(
            "builtins:\n  - name: T\n    description: d\n    input_schema:\n      type: object\n      minimum: -{WIDE}\n"
        ),
    )
    .unwrap();
    let o = toolbudget()
        .args(["count", "-c"])
        .arg(&yaml)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.starts_with(&format!(
            "error: {}:6:16: builtins[0].input_schema.minimum: the integer -{WIDE} does not fit",
            yaml.display()
        )),
        "{e}"
    );
}

#[test]
fn the_64_bit_extremes_and_wide_floats_load() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("gh.json");
    std::fs::write(
        &json,
        r#"{"tools": [{"name": "t", "inputSchema": {"type": "object", "maximum": 18446744073709551615, "minimum": -9223372036854775808, "f": 1.8446744073709552e19}}]}"#,
    )
    .unwrap();
    let o = toolbudget()
        .args(["count", "-c"])
        .arg(&json)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// A scenario's catalogs come in through the same loader: the scenario run stops there.
#[test]
fn a_scenario_whose_catalog_holds_one_is_refused_before_simulating() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("srv.json"),
        format!(r#"{{"tools": [{{"name": "t", "inputSchema": {{"type": "object", "default": {WIDE}}}}}]}}"#),
    )
    .unwrap();
    let scenario = dir.path().join("s.yaml");
    std::fs::write(
        &scenario,
        "name: s\nsystem_prompt_tokens: 10\ncatalogs:\n  - path: srv.json\n    server: srv\nconversation:\n  - user: hi\n",
    )
    .unwrap();
    let o = toolbudget()
        .arg("simulate")
        .arg(&scenario)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("srv.json:1:71: tools[0].inputSchema.default: the integer 18446744073709551616"),
        "{e}"
    );
}
