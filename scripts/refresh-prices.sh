#!/usr/bin/env bash
# Refreshes data/prices/genai-prices.json, the bundled model price table, from pydantic's
# genai-prices package on PyPI (MIT). Nothing downloads at build or run time: this script is the
# only thing that touches the network, and only through pip.
#
# The wheel carries its data as Python source (genai_prices/data.py: Provider(...), ModelInfo(...),
# ClauseOr(...) constructor calls). We parse that file with `ast` (no import, no pydantic) and
# rewrite the calls into the package's own JSON shape (what its loader types._providers_from_raw takes):
#   ClauseStartsWith(starts_with='x') -> {"starts_with": "x"}, ClauseOr(or_=[...]) -> {"or": [...]},
#   ModelPrice(input_mtok=Decimal('3'), ...) -> {"input_mtok": 3, ...},
#   TieredPrices(base=..., tiers=[Tier(start=..., price=...)]) -> {"base": ..., "tiers": [{"start": ..., "price": ...}]},
#   ConditionalPrice(constraint=StartDateConstraint(start_date=datetime.date(2026, 2, 5)), prices=...)
#     -> {"constraint": {"start_date": "2026-02-05"}, "prices": {...}}.
# Nothing is flattened. Only the providers in PROVIDERS are kept, each with all its models in the
# package's order (first match wins); per model: id, name, match, context_window, deprecated,
# prices (price_variants, the batch/flex/priority/fast overrides, are dropped). Every provider's
# model_match is kept, in order, in "provider_detection", so an id that belongs to a provider we
# dropped is recognised as such rather than mis-priced.
#
# Usage: scripts/refresh-prices.sh [OUT_FILE]   (default: data/prices/genai-prices.json)
# Bumping: set GENAI_PRICES_VERSION and GENAI_PRICES_SHA256 below (a wrong digest fails and prints
# the digest it got), run, review the diff, and update data/prices/README.md.
# SNAPSHOT_DATE=YYYY-MM-DD overrides the recorded snapshot date. Without it, the date already in
# the file is kept when the wheel digest is unchanged (so a re-run is byte-identical), else today (UTC).
set -euo pipefail

GENAI_PRICES_VERSION="0.2.5"
GENAI_PRICES_SHA256="864883e3b52031840b8240283c0a3b4ba22315b588e7fe2876025e38194179fc"
# Providers whose models the agent CLIs call: Claude Code (anthropic; aws for Claude on Bedrock,
# whose logs carry ids like us.anthropic.claude-haiku-4-5-20251001-v1:0), Codex (openai), Gemini
# CLI (google; its table also prices Claude on Vertex and falls back to anthropic).
PROVIDERS="anthropic openai google aws"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/data/prices/genai-prices.json}"
mkdir -p "$(dirname "$out")"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

python3 -m pip download --quiet --no-deps --only-binary=:all: --no-cache-dir \
    "genai-prices==$GENAI_PRICES_VERSION" -d "$tmp"
wheel="$tmp/genai_prices-$GENAI_PRICES_VERSION-py3-none-any.whl"
if [ ! -f "$wheel" ]; then
    echo "error: expected $wheel, pip gave: $(ls "$tmp")" >&2
    exit 1
fi
got="$(sha256sum "$wheel" | cut -d' ' -f1)"
if [ "$got" != "$GENAI_PRICES_SHA256" ]; then
    echo "error: $(basename "$wheel"): sha256 $got, expected $GENAI_PRICES_SHA256" >&2
    exit 1
fi

WHEEL="$wheel" WHEEL_SHA256="$got" OUT="$out" PROVIDERS="$PROVIDERS" \
    SNAPSHOT_DATE="${SNAPSHOT_DATE:-}" python3 - <<'PY'
import ast
import datetime
import decimal
import email.parser
import json
import os
import sys
import zipfile

wheel = os.environ["WHEEL"]
wheel_sha256 = os.environ["WHEEL_SHA256"]
out = os.environ["OUT"]
keep = os.environ["PROVIDERS"].split()


def die(msg):
    sys.exit(f"error: {msg}")


with zipfile.ZipFile(wheel) as zf:
    names = zf.namelist()
    meta_name = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
    lic_name = next((n for n in names if "/licenses/" in n and n.endswith("LICENSE")), None)
    if meta_name is None or lic_name is None or "genai_prices/data.py" not in names:
        die(f"unexpected wheel layout: {names}")
    meta = email.parser.Parser().parsestr(zf.read(meta_name).decode())
    license_text = zf.read(lic_name).decode().strip()
    data_src = zf.read("genai_prices/data.py").decode()

license_name = meta.get("License-Expression") or meta.get("License")
if not license_name:
    die("no licence in wheel METADATA")
urls = dict(
    (k.strip(), v.strip())
    for k, _, v in (u.partition(",") for u in meta.get_all("Project-URL") or [])
)

# --- data.py (constructor calls) -> the package's JSON shape --------------------------------
# Keyword renames where the dataclass field differs from the JSON key.
RENAME = {"or_": "or", "and_": "and"}
# Classes whose keyword arguments map 1:1 onto JSON object keys.
OBJECTS = {
    "Provider", "ModelInfo", "ModelPrice", "TieredPrices", "Tier", "ConditionalPrice",
    "PriceVariant", "StartDateConstraint", "TimeOfDateConstraint", "ClauseStartsWith",
    "ClauseEndsWith", "ClauseContains", "ClauseRegex", "ClauseEquals", "ClauseOr", "ClauseAnd",
    "UsageExtractor", "UsageExtractorMapping", "ArrayMatch",
}


def conv(node):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return [conv(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {conv(k): conv(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.Call):
        fn = ast.unparse(node.func)
        if fn == "Decimal":
            (arg,) = node.args
            return decimal.Decimal(conv(arg))
        if fn == "datetime.date":
            return datetime.date(*[conv(a) for a in node.args]).isoformat()
        if fn == "datetime.time":
            kw = {k.arg: ast.unparse(k.value) for k in node.keywords}
            if kw not in ({}, {"tzinfo": "datetime.UTC"}):
                die(f"unsupported time {ast.unparse(node)}")
            t = datetime.time(*[conv(a) for a in node.args]).isoformat()
            return t + "Z" if kw else t
        if fn in OBJECTS:
            if node.args:
                die(f"positional arguments in {ast.unparse(node)[:200]}")
            obj = {}
            for k in node.keywords:
                v = conv(k.value)
                if v is not None:
                    obj[RENAME.get(k.arg, k.arg)] = v
            return obj
    die(f"unsupported expression in data.py: {ast.unparse(node)[:200]}")


tree = ast.parse(data_src)
providers_node = None
for stmt in tree.body:
    if isinstance(stmt, ast.AnnAssign) and getattr(stmt.target, "id", None) == "providers":
        providers_node = stmt.value
if providers_node is None:
    die("no `providers = [...]` in genai_prices/data.py")
all_providers = conv(providers_node)


def num(d):
    """Decimal -> JSON number, refusing anything a float would not round-trip."""
    if d == d.to_integral_value() and abs(d) < 2**53:
        return int(d)
    f = float(d)
    if decimal.Decimal(repr(f)) != d:
        die(f"price {d} does not round-trip through a JSON number")
    return f


def jsonable(v):
    if isinstance(v, decimal.Decimal):
        return num(v)
    if isinstance(v, list):
        return [jsonable(e) for e in v]
    if isinstance(v, dict):
        return {k: jsonable(e) for k, e in v.items()}
    return v


# price_variants (batch / flex / priority / fast-mode overrides picked by request context) are
# dropped: toolbudget prices the standard tier, and they would add ~80 KB.
MODEL_KEYS = ["id", "name", "match", "context_window", "deprecated", "prices"]
PROVIDER_KEYS = ["id", "name", "api_pattern", "model_match", "provider_match", "fallback_model_providers"]

by_id = {p["id"]: p for p in all_providers}
missing = [p for p in keep if p not in by_id]
if missing:
    die(f"providers not in package: {missing}")
for p in keep:
    for fb in by_id[p].get("fallback_model_providers", []):
        if fb not in keep:
            die(f"{p} falls back to {fb}, which is not kept; add it to PROVIDERS")

providers = []
for p in all_providers:  # package order
    if p["id"] not in keep:
        continue
    slim = {k: p[k] for k in PROVIDER_KEYS if k in p}
    slim["models"] = [{k: m[k] for k in MODEL_KEYS if k in m} for m in p["models"]]
    providers.append(slim)

detection = [
    {"id": p["id"], "model_match": p.get("model_match"), "provider_match": p.get("provider_match"),
     "in_snapshot": p["id"] in keep}
    for p in all_providers
]

snapshot_date = os.environ.get("SNAPSHOT_DATE") or None
if snapshot_date is None and os.path.exists(out):
    try:
        with open(out) as f:
            old = json.load(f)["source"]
        if old.get("wheel_sha256") == wheel_sha256:
            snapshot_date = old.get("snapshot_date")
    except (ValueError, KeyError, TypeError):
        pass
if snapshot_date is None:
    snapshot_date = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
datetime.date.fromisoformat(snapshot_date)

doc = {
    "source": {
        "package": meta["Name"],
        "version": meta["Version"],
        "registry": "PyPI",
        "wheel": os.path.basename(wheel),
        "wheel_sha256": wheel_sha256,
        "data_file": "genai_prices/data.py",
        "homepage": urls.get("Source") or urls.get("Homepage"),
        "license": license_name,
        "license_text": license_text,
        "snapshot_date": snapshot_date,
        "snapshot_date_meaning": "date this snapshot was taken from PyPI; the wheel carries no release date",
        "refresh": "scripts/refresh-prices.sh",
    },
    "format": {
        "units": "prices are USD per million tokens (*_mtok) or per thousand (*_kcount)",
        "slimmed": "only the providers in providers_kept, in package order, each with all its models in "
                   "package order; per model only id, name, match, context_window, deprecated, prices "
                   "(standard tier: price_variants for batch/flex/priority/fast are dropped)",
        "match": "clauses {equals|starts_with|ends_with|contains|regex: str} and {or|and: [clause]}; "
                 "matching semantics in data/prices/README.md",
        "prices": "either one price object, or a list of {constraint?, prices}: the last entry whose "
                  "constraint is active wins (start_date <= request date, UTC), else the first",
        "tiered": "a price may be {base, tiers: [{start, price}]}: when the request's total input "
                  "tokens exceed a tier's start, that tier's price applies to ALL its tokens",
    },
    "providers_kept": keep,
    "provider_detection": detection,
    "providers": providers,
}

text = json.dumps(jsonable(doc), indent=1, ensure_ascii=False) + "\n"
tmp_out = out + ".tmp"
with open(tmp_out, "w") as f:
    f.write(text)
os.replace(tmp_out, out)
n = sum(len(p["models"]) for p in providers)
print(f"wrote {out}: {meta['Name']} {meta['Version']}, {len(providers)} providers, {n} models, "
      f"{len(text)} bytes, snapshot {snapshot_date}")
PY
