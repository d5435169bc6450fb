//! `session import` holds one session at a time (per reading thread) plus the fit's pairs, so
//! its peak memory follows the largest session, not the folder: measured as the peak RSS of
//! the binary on generated sessions (none committed), two sessions against many of the same
//! size, on two threads.

#![cfg(target_os = "linux")]

use std::io::Write;
use std::path::Path;

use crate::hostile_bounds::measure_with;

/// Writes one Claude Code session of about `bytes` bytes: one turn of `Read` calls, each result
/// 3.6 KB of text (the densest shape in billed requests per byte of log).
fn write_session(path: &Path, id: usize, bytes: usize) {
    let sid = format!("00000000-0000-4000-8000-{id:012}");
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let head = format!(
        r#""isSidechain":false,"userType":"external","cwd":"/x","sessionId":"{sid}","version":"2.0.42","gitBranch":"main""#
    );
    let usage = |n: usize| {
        format!(
            r#"{{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":{n},"output_tokens":61}}"#
        )
    };
    let mut size = 0usize;
    let line = |f: &mut std::io::BufWriter<std::fs::File>, text: String| {
        writeln!(f, "{text}").unwrap();
        text.len() + 1
    };
    size += line(
        &mut f,
        format!(
            r#"{{{head},"parentUuid":null,"type":"user","message":{{"role":"user","content":"go"}},"uuid":"u{id}","timestamp":"2025-11-02T10:00:00.000Z"}}"#
        ),
    );
    let result = "lorem ipsum ".repeat(300);
    let mut parent = format!("u{id}");
    let mut i = 0;
    while size < bytes {
        i += 1;
        let u = usage(1000 + i);
        size += line(
            &mut f,
            format!(
                r#"{{{head},"parentUuid":"{parent}","type":"assistant","message":{{"id":"m{id}-{i}","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"tool_use","id":"t{id}-{i}","name":"Read","input":{{"file_path":"/a/{i}"}}}}],"stop_reason":"tool_use","usage":{u}}},"requestId":"q{id}-{i}","uuid":"a{id}-{i}","timestamp":"2025-11-02T10:00:01.000Z"}}"#
            ),
        );
        size += line(
            &mut f,
            format!(
                r#"{{{head},"parentUuid":"a{id}-{i}","type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{id}-{i}","content":"{result}"}}]}},"uuid":"r{id}-{i}","timestamp":"2025-11-02T10:00:02.000Z"}}"#
            ),
        );
        parent = format!("r{id}-{i}");
    }
    let u = usage(5);
    line(
        &mut f,
        format!(
            r#"{{{head},"parentUuid":"{parent}","type":"assistant","message":{{"id":"mend{id}","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"text","text":"done"}}],"stop_reason":"end_turn","usage":{u}}},"requestId":"qend{id}","uuid":"end{id}","timestamp":"2025-11-02T10:00:03.000Z"}}"#
        ),
    );
}

/// Peak RSS (KiB) of `session import` on `n` sessions of `bytes` each, scenarios written.
fn import_peak(root: &Path, n: usize, bytes: usize) -> u64 {
    let logs = root.join(format!("logs{n}"));
    std::fs::create_dir_all(&logs).unwrap();
    for i in 0..n {
        write_session(&logs.join(format!("s{i}.jsonl")), i, bytes);
    }
    let out = format!("out{n}");
    let logs = format!("logs{n}");
    let m = measure_with(
        root,
        &[("RAYON_NUM_THREADS", "2")],
        &[
            "-q", "session", "import", &logs, "--out", &out, "--format", "json",
        ],
    );
    assert_eq!(m.code, 0, "{}", m.stderr);
    let v: serde_json::Value = serde_json::from_str(&m.stdout).unwrap();
    assert_eq!(v["totals"]["sessions"], n);
    // Everything written, and nothing left of the spill.
    let written = std::fs::read_dir(root.join(&out)).unwrap().count();
    assert_eq!(
        written,
        2 * n + 2,
        "scenario and bill per session, calibration.json, .toolbudget-files"
    );
    assert!(root.join(&out).join(".toolbudget-files").is_file());
    std::fs::remove_dir_all(root.join(&logs)).unwrap();
    m.peak_kib
}

/// 32 sessions of 4 MB take at most 2.5% of their added logs more than 2 of them: it was 11%
/// (each session's scenario kept until the fit), and is under 1% now (its pairs for the fit).
#[test]
fn session_import_memory_follows_the_largest_session_not_the_folder() {
    const BYTES: usize = 4_000_000;
    let root = tempfile::tempdir().unwrap();
    let two = import_peak(root.path(), 2, BYTES);
    let many = import_peak(root.path(), 32, BYTES);
    let added_kib = (30 * BYTES / 1024) as u64;
    assert!(
        many <= two + added_kib / 40,
        "32 sessions peaked at {many} KiB, 2 at {two} KiB: {} KiB more for {added_kib} KiB of \
         logs more",
        many.saturating_sub(two)
    );
}
