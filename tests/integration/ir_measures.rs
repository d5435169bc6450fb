//! Run-file metrics against an independent implementation: PyPI ir_measures through its
//! pytrec_eval provider (trec_eval's own code), on the same run and labels, to 1e-6 per query
//! and averaged (`scripts/ir-measures-agree.py`). The interpreter comes from
//! `TOOLBUDGET_EVAL_PYTHON`, else `target/eval-venv` (`scripts/install-eval-python.sh`); CI sets
//! `TOOLBUDGET_REQUIRE_IR_MEASURES=1` so that a missing install fails instead of skipping.

use std::path::PathBuf;
use std::process::Command;

use crate::support::{bin, env_flag, repo};

fn python() -> Option<PathBuf> {
    let p = std::env::var_os("TOOLBUDGET_EVAL_PYTHON")
        .map_or_else(|| repo("target/eval-venv/bin/python"), PathBuf::from);
    let ok = Command::new(&p)
        .args(["-c", "import ir_measures"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok || !env_flag("TOOLBUDGET_REQUIRE_IR_MEASURES"),
        "TOOLBUDGET_REQUIRE_IR_MEASURES is set but {} cannot import ir_measures \
         (bash scripts/install-eval-python.sh)",
        p.display()
    );
    ok.then_some(p)
}

#[test]
fn run_file_metrics_agree_with_ir_measures() {
    let Some(python) = python() else {
        return crate::support::skip(
            "run_file_metrics_agree_with_ir_measures",
            "no ir_measures (bash scripts/install-eval-python.sh, or TOOLBUDGET_EVAL_PYTHON)",
        );
    };
    let tmp = tempfile::tempdir().unwrap();
    let queries = "fixtures/queries/fixtures.jsonl";
    let mut cats = vec![
        "-c".to_string(),
        "fixtures/catalogs/builtins.yaml".to_string(),
    ];
    for f in ["browser", "chat", "db", "monitor", "tracker"] {
        cats.push("-c".into());
        cats.push(format!("fixtures/catalogs/mcp/{f}.json"));
    }
    let toolbudget = |args: &[&str]| {
        let o = Command::new(bin())
            .current_dir(repo(""))
            .arg("--quiet")
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    // The keyword scorer ties often (integer points): a run that tests the tie rule. Every
    // query whose id ends in 3 is left out (an empty ranking, 0 in every average).
    let jsonl = tmp.path().join("k.jsonl");
    let mut args: Vec<&str> = vec!["eval"];
    args.extend(cats.iter().map(String::as_str));
    args.extend([
        "--queries",
        queries,
        "-s",
        "keyword",
        "--write-run",
        jsonl.to_str().unwrap(),
    ]);
    toolbudget(&args);
    let mut trec = String::new();
    let mut ties = 0;
    for line in std::fs::read_to_string(&jsonl).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = v["id"].as_str().unwrap();
        if id.ends_with('3') {
            continue;
        }
        let results = v["results"].as_array().unwrap();
        ties += results
            .windows(2)
            .filter(|w| w[0]["score"] == w[1]["score"])
            .count();
        // Listed in reverse, so that the order of the file is not the ranking.
        for (i, r) in results.iter().rev().enumerate() {
            trec.push_str(&format!(
                "{id} Q0 {} {} {} kw\n",
                r["id"].as_str().unwrap(),
                i + 1,
                r["score"]
            ));
        }
    }
    assert!(
        ties > 50,
        "only {ties} ties: the run no longer tests the tie rule"
    );
    let run = tmp.path().join("k.trec");
    std::fs::write(&run, trec).unwrap();
    let out = tmp.path().join("k.eval.json");
    let mut args: Vec<&str> = vec!["eval"];
    args.extend(cats.iter().map(String::as_str));
    args.extend([
        "--queries",
        queries,
        "--run",
        run.to_str().unwrap(),
        "--run-ties",
        "trec",
        "--per-query",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    toolbudget(&args);
    let o = Command::new(&python)
        .current_dir(repo(""))
        .arg("scripts/ir-measures-agree.py")
        .args([queries, run.to_str().unwrap(), out.to_str().unwrap()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        said.starts_with("agree: 950 per-query values and 10 means over 95 queries"),
        "{said}"
    );
}
