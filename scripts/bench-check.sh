#!/usr/bin/env bash
# The performance regression gate (`just bench-check [BASE]`, run by .ci/run).
#
# Builds the criterion bench binary of BASE (a git revision; default: the merge base of HEAD
# with main) in a git worktree and that of the working tree (HEAD), then runs the headline
# benchmarks of both in the same job, interleaved: ROUNDS rounds, each running both binaries,
# HEAD first in odd rounds and BASE first in even ones, so drift in machine load hits both
# alike. Per benchmark, from criterion's median of each round (one short criterion run each):
#   best      the fastest round of each binary: other processes only ever add time, so the
#             fastest round is the one least disturbed
#   noise     how far the second-fastest round is from the fastest: max over both binaries of
#             second/best - 1 (one disturbed round does not widen the band; two do)
#   ratio     HEAD best / BASE best
# and HEAD fails when ratio > 1 + THRESHOLD + noise. When BASE is HEAD (CI on main) there is
# nothing to compare: the headline benchmarks run once (each must run). A benchmark BASE lacks is
# reported as new and not compared; one HEAD lacks is reported as gone.
#
# Env: BENCH_CHECK_ROUNDS (5; 1 when BASE is HEAD), BENCH_CHECK_THRESHOLD (0.25), BENCH_CHECK_MEASURE (seconds per
# benchmark per round, 1), BENCH_CHECK_SLOWDOWN=SCORER[:TIMES] (runs that lexical scorer's queries TIMES times, default 3, in HEAD's
# runs only, through the harness's TOOLBUDGET_BENCH_SLOWDOWN: the check that the gate fails),
# BENCH_CHECK_FILTER (a criterion regex replacing the headline set, for a quicker manual run).
# Exit: 0 pass, 1 a headline benchmark regressed, 2 could not build or run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Each scorer's query at 1,000 and 10,000 tools, counting, a scenario replay, the cached
# semantic index load.
HEADLINE='^(search/(keyword|regex|bm25)/query/(1000|10000)|embed/query/(semantic|hybrid)/(1000|10000)|tokenize/count_catalog_1000_tools|simulate/coding-session-5-deferred|embed/build/semantic_cached/10000)$'
HEADLINE="${BENCH_CHECK_FILTER:-$HEADLINE}"
THRESHOLD="${BENCH_CHECK_THRESHOLD:-0.25}"
MEASURE="${BENCH_CHECK_MEASURE:-1}"
target="${CARGO_TARGET_DIR:-$root/target}"
work="$target/bench-check"

base_rev="${1:-}"
if [ -z "$base_rev" ]; then
    for ref in main origin/main; do
        if git rev-parse -q --verify "$ref^{commit}" >/dev/null; then
            base_rev="$(git merge-base HEAD "$ref")"
            break
        fi
    done
    base_rev="${base_rev:-HEAD}"
fi
base_sha="$(git rev-parse --verify "$base_rev^{commit}")" || {
    echo "error: bench-check: unknown revision $base_rev" >&2
    exit 2
}
head_sha="$(git rev-parse HEAD)"
same=0
if [ "$base_sha" = "$head_sha" ] && [ -z "$(git status --porcelain --untracked-files=no)" ]; then
    same=1
fi
# One binary on both sides (CI on main) cannot regress against itself: the headline benchmarks
# run once, which checks that each still runs and prints its median; a comparison of a binary
# with itself measured only the machine's noise (2 rounds of both sides, 4 runs).
ROUNDS="${BENCH_CHECK_ROUNDS:-$([ "$same" = 1 ] && echo 1 || echo 5)}"

# Builds the bench binary of the tree in the current directory and copies it to $1.
build_bench() {
    local out="$1" exe
    exe="$(CARGO_TARGET_DIR="$target" cargo bench --bench toolbudget --no-run \
        --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "toolbudget" \
            and "bench" in m["target"]["kind"] and m.get("executable"):
        print(m["executable"])')"
    if [ -z "$exe" ]; then
        echo "error: bench-check: building the benches failed in $(pwd) (run cargo bench --no-run there)" >&2
        exit 2
    fi
    cp "$exe" "$out"
}

mkdir -p "$work"
rm -rf "$work/criterion"
if [ "$same" = 1 ]; then
    echo "bench-check: BASE is HEAD ($head_sha): one binary on both sides (measures the noise)"
else
    echo "bench-check: BASE $base_sha, HEAD $head_sha$(git diff --quiet HEAD || echo ' + working tree')"
    rm -rf "$work/base-src"
    git worktree prune
    git worktree add --detach --quiet "$work/base-src" "$base_sha"
    trap 'git -C "$root" worktree remove --force "$work/base-src" 2>/dev/null || true' EXIT
    (cd "$work/base-src" && build_bench "$work/base-bench")
fi
build_bench "$work/head-bench"

# Both sides read the same model; the embedding cache is shared (target/tmp), so the slower
# side does not embed the 10,000-tool catalog again.
export TOOLBUDGET_MODEL_DIR="${TOOLBUDGET_MODEL_DIR:-$root/models/all-MiniLM-L6-v2}"
[ -f "$TOOLBUDGET_MODEL_DIR/model.safetensors" ] || unset TOOLBUDGET_MODEL_DIR
export CRITERION_HOME="$work/criterion"

run() {
    local side="$1" round="$2" dir=$root
    [ "$side" = base ] && [ "$same" = 0 ] && dir="$work/base-src"
    local slow=()
    [ "$side" = head ] && [ -n "${BENCH_CHECK_SLOWDOWN:-}" ] &&
        slow=(env "TOOLBUDGET_BENCH_SLOWDOWN=$BENCH_CHECK_SLOWDOWN")
    echo "bench-check: round $round/$ROUNDS: $side"
    # criterion resolves relative paths from the package folder, as under cargo bench.
    if ! (cd "$dir" && "${slow[@]}" "$work/$side-bench" --bench "$HEADLINE" --noplot \
        --save-baseline "bc-$side-$round" --warm-up-time 0.3 \
        --measurement-time "$MEASURE" --sample-size 10 >"$work/$side-$round.log" 2>&1); then
        echo "error: bench-check: the $side benches failed; see $work/$side-$round.log" >&2
        tail -5 "$work/$side-$round.log" >&2
        exit 2
    fi
}

started=$SECONDS
if [ "$same" = 1 ]; then
    for round in $(seq 1 "$ROUNDS"); do run head "$round"; done
    echo "bench-check: measured in $((SECONDS - started)) s"
    python3 - "$CRITERION_HOME" <<'PY'
import json, os, sys

rows = []
for dirpath, _, files in os.walk(sys.argv[1]):
    if os.path.basename(dirpath).startswith("bc-head-") and "estimates.json" in files:
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            bench_id = json.load(f)["full_id"]
        with open(os.path.join(dirpath, "estimates.json")) as f:
            rows.append((bench_id, json.load(f)["median"]["point_estimate"]))
if not rows:
    print("error: bench-check: no headline benchmark ran", file=sys.stderr)
    sys.exit(2)
print(f"\n{'benchmark':44} {'median':>10}  (BASE is HEAD: nothing to compare)")
for bench_id, ns in sorted(rows):
    text = next((f"{ns / s:.3g} {u}" for u, s in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)) if ns >= s),
                f"{ns:.3g} ns")
    print(f"{bench_id:44} {text:>10}")
print(f"\nbench-check: passed ({len(rows)} headline benchmarks ran; a branch is compared with "
      "its merge base)")
PY
    exit $?
fi
for round in $(seq 1 "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then run head "$round"; run base "$round"; else
        run base "$round"; run head "$round"; fi
done
echo "bench-check: measured in $((SECONDS - started)) s"

# A benchmark over the limit is measured again, alone, for CONFIRM more interleaved rounds,
# and fails only if it is still over the limit with every round counted: a burst of load on a
# shared machine slows one benchmark for a while, a real regression slows it every time.
CONFIRM="${BENCH_CHECK_CONFIRM:-5}"
analyze() {
    python3 - "$CRITERION_HOME" "$1" "$THRESHOLD" "$work/failed" <<'PY'
import json, os, sys

home, rounds, threshold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
medians = {}  # (side, id) -> [median ns per round]
for dirpath, _, files in os.walk(home):
    base = os.path.basename(dirpath)
    if not base.startswith("bc-") or "estimates.json" not in files:
        continue
    side = base.split("-")[1]
    with open(os.path.join(dirpath, "benchmark.json")) as f:
        bench_id = json.load(f)["full_id"]
    with open(os.path.join(dirpath, "estimates.json")) as f:
        median = json.load(f)["median"]["point_estimate"]
    medians.setdefault((side, bench_id), []).append(median)

def fmt(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"

def best(xs):
    return min(xs)

def spread(xs):
    xs = sorted(xs)
    return xs[1] / xs[0] - 1 if len(xs) > 1 else 0.0

ids = sorted({i for _, i in medians})
print(f"\nthreshold: HEAD fails when HEAD/BASE > 1 + {threshold} + noise (times: the fastest "
      f"of {rounds} round medians; noise: second-fastest/fastest - 1, the larger side)")
print(f"{'benchmark':44} {'BASE':>10} {'HEAD':>10} {'ratio':>6} {'noise':>6}  verdict")
failed = []
for i in ids:
    b, h = medians.get(("base", i)), medians.get(("head", i))
    if h is None:
        print(f"{i:44} {fmt(best(b)):>10} {'-':>10} {'':>6} {'':>6}  gone in HEAD")
        continue
    if b is None:
        print(f"{i:44} {'-':>10} {fmt(best(h)):>10} {'':>6} {'':>6}  new (BASE lacks it)")
        continue
    mb, mh = best(b), best(h)
    ratio, noise = mh / mb, max(spread(b), spread(h))
    limit = 1 + threshold + noise
    verdict = "ok" if ratio <= limit else f"SLOWER (limit {limit:.2f})"
    if ratio > limit:
        failed.append(i)
    print(f"{i:44} {fmt(mb):>10} {fmt(mh):>10} {ratio:6.2f} {noise:6.2f}  {verdict}")
if not ids:
    print("error: bench-check: no headline benchmark ran", file=sys.stderr)
    sys.exit(2)
with open(sys.argv[4], "w") as f:
    f.write("\n".join(failed))
if failed:
    print(f"\nbench-check: {len(failed)} headline benchmark(s) slower: {', '.join(failed)}")
    sys.exit(1)
print("\nbench-check: passed")
PY
}

rc=0
analyze "$ROUNDS" || rc=$?
if [ "$rc" = 1 ] && [ "$CONFIRM" -gt 0 ]; then
    HEADLINE="^($(sed 's/[][().*+?^$|\\]/\\&/g' "$work/failed" | paste -sd '|'))$"
    echo "bench-check: confirming with $CONFIRM more rounds of: $HEADLINE"
    total=$((ROUNDS + CONFIRM))
    for round in $(seq $((ROUNDS + 1)) "$total"); do
        if [ $((round % 2)) = 1 ]; then run head "$round"; run base "$round"; else
            run base "$round"; run head "$round"; fi
    done
    rc=0
    analyze "$total" || rc=$?
fi
if [ "$rc" = 1 ]; then
    echo "bench-check: FAILED (confirmed over the extra rounds)"
fi
exit "$rc"
