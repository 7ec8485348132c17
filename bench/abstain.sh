#!/usr/bin/env bash
# "No good match" calibrated to the site (#71): on every labelled set whose docs are here,
# where the build's generic probe questions land, and leave-one-site-out figures for three
# rules: one fixed threshold, the probes' median moved by a fitted offset (weights 0.5 and 1),
# and the rule builds use (halfway between the model's 0.43 and the probes' median). Each rule's
# constant is fitted on the other sets and scored on the one left out: out-of-scope questions
# declined, answerable ones flagged (a flag counts twice: it hides a right answer).
#   bash bench/abstain.sh            # LANTERN=path/to/lantern to measure another binary
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
shared="${LANTERN_SHARED:-$root/../shared}"
lantern="${LANTERN:-$root/target/release/lantern}"
[ -n "${LANTERN:-}" ] || cargo build --quiet --release --workspace --bin lantern
work=out/abstain
mkdir -p "$work"
# The probes as questions no page answers, so `lantern eval` reports each one's best cosine.
python3 - crates/indexer/src/abstain_probes.txt >"$work/probes.jsonl" <<'EOF2'
import json, sys
lines = [l.strip() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
for i, q in enumerate(lines):
    print(json.dumps({"id": f"probe-{i:02}", "type": "unanswerable", "query": q, "expected": []}))
EOF2

sets=("docs|site/docs|golden/lantern-docs.jsonl")
[ -d "$shared/corpora/fastapi-docs/docs/en/docs" ] &&
  sets+=("fastapi|$shared/corpora/fastapi-docs/docs/en/docs|golden/fastapi.jsonl")
[ -d "$shared/corpora/cargo-book/src" ] &&
  sets+=("cargo|$shared/corpora/cargo-book/src|golden/cargo-book.jsonl")
[ -d "$shared/corpora/rust-book/src" ] &&
  sets+=("rust-book|$shared/corpora/rust-book/src|$shared/golden/rust-book.jsonl")
[ -d /usr/share/doc/python-django-doc/html ] &&
  sets+=("django|/usr/share/doc/python-django-doc/html|golden/django.jsonl")
names=()
for s in "${sets[@]}"; do
  IFS='|' read -r name docs golden <<<"$s"
  $lantern build "$docs" --out "$work/$name.lantern" --cache "$work/$name.cache" --quiet 2>/dev/null |
    grep "no good match" | sed "s/^ */$name: /"
  $lantern eval --bundle "$work/$name.lantern" --golden "$golden" --json "$work/$name-golden.json" >/dev/null
  $lantern eval --bundle "$work/$name.lantern" --golden "$work/probes.jsonl" --json "$work/$name-probes.json" >/dev/null
  names+=("$name")
done
python3 bench/abstain.py "$work" "${names[@]}"
