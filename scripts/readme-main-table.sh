#!/usr/bin/env bash
# The README's table "What the shipped scenarios show", rendered from the committed example
# report's docs/example-report/data/scenarios.csv (the README quotes that report). A scenario
# counted by another counter than the report's names it. With --check, compares the rendered
# rows with README.md's and exits 1 with a diff when they differ.
#
#   bash scripts/readme-main-table.sh            # print the table
#   bash scripts/readme-main-table.sh --check    # after regenerating docs/example-report/
set -euo pipefail
cd "$(dirname "$0")/.."
render=$(cat <<'PY'
import csv, sys
# The rows the README shows, in its order.
SCENARIOS = ["builtins-plus-mcp", "coding-session-5-deferred", "ten-servers-names",
             "failure-modes", "live-servers"]
COUNTER = "anthropic-estimate"
rows = {r["scenario"]: r for r in csv.DictReader(open("docs/example-report/data/scenarios.csv"))}
def n(x):
    return f"{int(x):,}"
def pct(x):
    # The report's one decimal, with a typographic minus.
    return f"{float(x):.1f}%".replace("-", "\u2212")
def usd(x):
    # Per 1,000 conversations, as the report prints dollars: whole above $100, else cents.
    x = float(x) * 1000
    return f"${x:,.0f}" if x >= 100 else f"${x:.2f}"
print("| scenario | tools (deferred) | first request, eager \u2192 deferred | saved"
      " | whole conversation saved | per 1,000 conversations, cached |")
print("|---|---:|---:|---:|---:|---:|")
for name in SCENARIOS:
    if name not in rows:
        sys.exit(f"error: docs/example-report/data/scenarios.csv: no scenario {name}")
    r = rows[name]
    label = f"`{name}`" + ("" if r["counter"] == COUNTER else f" (`{r['counter']}`)")
    cells = [
        label, f'{n(r["tool_count"])} ({n(r["deferred_count"])})',
        f'{n(r["eager_first_request_tokens"])} \u2192 {n(r["deferred_first_request_tokens"])}',
        pct(r["first_request_savings_pct"]), pct(r["total_input_savings_pct"]),
        f'{usd(r["eager_cost_cached_usd"])} \u2192 {usd(r["deferred_cost_cached_usd"])}',
    ]
    print("| " + " | ".join(cells) + " |")
PY
)
table=$(python3 -c "$render")
if [[ "${1:-}" != "--check" ]]; then
    printf '%s\n' "$table"
    exit 0
fi
# The README's table: from its header row to the first line that is not a table row.
current=$(awk '/^\| scenario \| tools \(deferred\) \| first request, eager/ {on = 1}
    on && !/^\|/ {exit} on {print}' README.md)
if [[ "$current" != "$table" ]]; then
    echo "error: README.md: the table \"What the shipped scenarios show\" differs from docs/example-report/data/scenarios.csv:" >&2
    diff <(printf '%s\n' "$current") <(printf '%s\n' "$table") >&2 || true
    exit 1
fi
echo "README.md's scenario table matches docs/example-report/data/scenarios.csv"
