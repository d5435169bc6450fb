//! Checks the arguments a model wrote against the tool's input schema: they must be a JSON
//! object; required properties present; a declared `type` (or list of types) and `enum`
//! respected at the top level; no unknown key where `additionalProperties` is false. Nested
//! values are checked for their JSON type only. A failure is a malformed call, never a crash.

use serde_json::Value;

fn type_matches(ty: &str, v: &Value) -> bool {
    match ty {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        // A type this check does not know: accepted.
        _ => true,
    }
}

/// The parsed arguments, or why they are malformed.
pub fn check(text: &str, schema: &Value) -> Result<Value, String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let args: Value = if text.trim().is_empty() {
        // Some servers send "" for a call without arguments.
        Value::Object(serde_json::Map::new())
    } else {
        serde_json::from_str(text).map_err(|e| format!("arguments are not JSON ({e})"))?
    };
    let Some(obj) = args.as_object() else {
        return Err("arguments are not a JSON object".into());
    };
    if let Some(missing) = required.iter().find(|k| !obj.contains_key(**k)) {
        return Err(format!("required argument {missing:?} is missing"));
    }
    let props = schema.get("properties").and_then(Value::as_object);
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (k, v) in obj {
        let Some(p) = props.and_then(|p| p.get(k)) else {
            if closed {
                return Err(format!("argument {k:?} is not in the schema"));
            }
            continue;
        };
        let ok = match p.get("type") {
            Some(Value::String(t)) => type_matches(t, v),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| type_matches(t, v)),
            _ => true,
        };
        if !ok {
            return Err(format!(
                "argument {k:?} should be {}, got {}",
                p["type"],
                kind(v)
            ));
        }
        if let Some(allowed) = p.get("enum").and_then(Value::as_array)
            && !allowed.contains(v)
        {
            return Err(format!("argument {k:?} is not one of {}", p["enum"]));
        }
    }
    Ok(args)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn malformed_arguments_are_named_and_valid_ones_pass() {
        let schema = json!({"type": "object", "required": ["city"], "additionalProperties": false,
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                           "unit": {"type": "string", "enum": ["c", "f"]}}});
        assert!(check(r#"{"city":"Oslo","days":3}"#, &schema).is_ok());
        assert!(check(r#"{"city":"Oslo","days":3.0}"#, &schema).is_ok());
        let err = |t: &str| check(t, &schema).unwrap_err();
        assert!(err("{\"city\":").contains("not JSON"));
        assert_eq!(err("[1]"), "arguments are not a JSON object");
        assert_eq!(err("{}"), "required argument \"city\" is missing");
        assert_eq!(
            err(r#"{"city":1}"#),
            "argument \"city\" should be \"string\", got a number"
        );
        assert!(err(r#"{"city":"a","x":1}"#).contains("not in the schema"));
        assert!(err(r#"{"city":"a","unit":"k"}"#).contains("not one of"));
        assert!(check("", &json!({"type": "object"})).is_ok());
        assert!(check("", &schema).is_err());
    }
}
