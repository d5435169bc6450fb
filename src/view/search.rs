//! The views of a search (`search`): the ranked table, the explanation table, the json of the
//! [`SearchReport`] (the contract's keys first) and the CSV.

use crate::experiment::search::SearchReport;
use crate::output::{Format, code_for, csv, to_json, words_for};

/// Scores in tables: at most four decimals, trailing zeros dropped (`12`, `0.3881`).
fn short(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub fn render(report: &SearchReport, format: Format) -> String {
    let rows: Vec<Vec<String>> = report
        .matches
        .iter()
        .enumerate()
        .map(|(i, m)| vec![(i + 1).to_string(), m.id.clone(), m.score.to_string()])
        .collect();
    match format {
        Format::Json => to_json(report),
        Format::Csv => csv(&["rank", "id", "score"], &rows),
        Format::Table | Format::Md => {
            let table = crate::output::table_for(format);
            let rows: Vec<Vec<String>> = rows
                .into_iter()
                .zip(&report.matches)
                .map(|(mut r, m)| {
                    r[1] = code_for(format, &m.id);
                    r[2] = short(m.score);
                    r
                })
                .collect();
            let mut out = table(&["rank", "id", "score"], &rows, &[true, false, true]);
            if let Some(explanations) = &report.explanations {
                // The tree depth first, each level indented under its parent.
                let mut why = Vec::new();
                for (i, e) in explanations.iter().enumerate() {
                    for (depth, node) in e.explanation.flatten() {
                        why.push(vec![
                            (i + 1).to_string(),
                            code_for(format, &e.id),
                            short(node.value),
                            format!("{}{}", "  ".repeat(depth), words_for(format, &node.label)),
                        ]);
                    }
                }
                out.push('\n');
                out.push_str(&table(
                    &["rank", "id", "points", "why"],
                    &why,
                    &[true, false, true, false],
                ));
            }
            out.push('\n');
            let codes = |ids: &[String]| {
                ids.iter()
                    .map(|id| code_for(format, id))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            if !report.not_found.is_empty() {
                out.push_str(&format!("not found: {}\n", codes(&report.not_found)));
            }
            for a in &report.ambiguous {
                out.push_str(&format!(
                    "ambiguous: {} fits {}; select one by its id\n",
                    code_for(format, &a.name),
                    codes(&a.candidates)
                ));
            }
            let settings: Vec<String> = report
                .settings
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            let limit = match report.max_limit {
                Some(max) => format!("limit {} (max {max})", report.limit),
                None => format!("limit {}", report.limit),
            };
            out.push_str(&format!(
                "{} shown of {} matched among {} tools by {}; {limit}; {}\n",
                report.shown,
                report.matched,
                report.total_tools,
                words_for(format, &report.scorer.to_string()),
                words_for(format, &settings.join("; "))
            ));
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::search::search;
    use crate::experiment::search::tests::catalog;
    use crate::search::{ScorerConfig, ScorerKind};

    #[test]
    fn json_has_the_contract_keys_in_order() {
        let r = search(
            catalog(),
            &crate::search::ScorerSpec::Builtin(ScorerKind::Keyword),
            &ScorerConfig::default(),
            "notebook jupyter",
            5,
            true,
        )
        .unwrap();
        let json = render(&r, Format::Json);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys[..4], ["query", "scorer", "matches", "total_tools"]);
        assert_eq!(v["matches"][0]["id"], "NotebookEdit");
        assert_eq!(v["matches"][0]["score"], 14.0);
        assert_eq!(v["total_tools"], 2);
        assert_eq!(
            v["explanations"][0]["explanation"]["children"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        assert_eq!(v["explanations"][0]["explanation"]["value"], 14.0);
        let table = render(&r, Format::Table);
        assert!(table.contains("NotebookEdit"), "{table}");
        assert!(table.contains("a name part equals the term"), "{table}");
        assert_eq!(
            render(&r, Format::Csv),
            "rank,id,score\n1,NotebookEdit,14\n"
        );
    }

    #[test]
    fn counts_say_matched_shown_and_the_limit_in_force() {
        // Both tools mention "a" in their description; one is shown.
        let r = search(
            catalog(),
            &crate::search::ScorerSpec::Builtin(ScorerKind::Keyword),
            &ScorerConfig::default(),
            "a",
            1,
            false,
        )
        .unwrap();
        assert_eq!((r.matched, r.shown, r.limit), (2, 1, 1));
        assert_eq!(r.max_limit, Some(20));
        assert_eq!(r.settings.get("max_limit").map(String::as_str), Some("20"));
        let table = render(&r, Format::Table);
        assert!(
            table.contains("1 shown of 2 matched among 2 tools by keyword; limit 1 (max 20);"),
            "{table}"
        );
        let v: serde_json::Value = serde_json::from_str(&render(&r, Format::Json)).unwrap();
        assert_eq!(
            (v["matched"].as_u64(), v["limit"].as_u64()),
            (Some(2), Some(1))
        );
    }
}
