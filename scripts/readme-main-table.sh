#!/usr/bin/env bash
# The README's main table, rendered from `toolbudget simulate --format csv` over the shipped
# scenarios (the same rows as the report's data/scenarios.csv). Savings a scenario cannot claim
# print as n/a; a saving with a caveat is marked * and the caveat is printed under the table.
#
#   bash scripts/readme-main-table.sh    # target/release/toolbudget (TOOLBUDGET=... to change)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${TOOLBUDGET:-target/release/toolbudget}"
render=$(cat <<'PY'
import csv, sys
rows = list(csv.DictReader(sys.stdin))
def n(x):
    return f"{int(x):,}"
def saved(r, k):
    if r[k] == "":
        return "n/a*"
    return f"{float(r[k]):g}%" + ("*" if r["savings_caveats"] else "")
print("| scenario | counter | tools | deferred | tools sent eager → deferred | first request eager | deferred"
      " | saved | total input eager | deferred | saved | deferred list, whole conversation"
      " | searches / misses / retries | calls failed / premature / unavailable |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    cells = [
        r["scenario"], r["counter"], n(r["tool_count"]), n(r["deferred_count"]),
        f'{r["eager_tools_sent"]} → {r["deferred_tools_sent"]}',
        n(r["eager_first_request_tokens"]), n(r["deferred_first_request_tokens"]),
        saved(r, "first_request_savings_pct"),
        n(r["eager_total_input_tokens"]), n(r["deferred_total_input_tokens"]),
        saved(r, "total_input_savings_pct"), n(r["deferred_list_tokens"]),
        f'{r["deferred_searches"]} / {r["deferred_misses"]} / {r["deferred_retries"]}',
        f'{r["deferred_failed_calls"]} / {r["deferred_premature_calls"]} / {r["deferred_unavailable_calls"]}',
    ]
    print("| " + " | ".join(cells) + " |")
notes = [(r["scenario"], r["savings_caveats"]) for r in rows if r["savings_caveats"]]
if notes:
    print()
    for name, text in notes:
        print(f"\\* `{name}`: {text}.")
PY
)
"$bin" --quiet simulate scenarios/*.yaml --format csv | python3 -c "$render"
