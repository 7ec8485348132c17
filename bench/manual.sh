#!/usr/bin/env bash
# Lantern on large real manuals, installed by name from Debian's packages (#71, #72):
# - Django 3.2's manual (python-django-doc, Sphinx, 539 pages): the large manual to tune on,
#   scored on golden/django.jsonl (frozen before any tuning) with the model and the query table;
# - PostgreSQL 15's manual (postgresql-doc-15, DocBook, 1,169 pages): the held-out test. No
#   questions over it live here; the script builds it and checks that the top ten results of
#   five everyday queries carry no "Prev | Up | Home | Next" bar in excerpt, title or breadcrumb.
# Prints build times, bundle sizes and the scores.
#
#   bash bench/manual.sh            # LANTERN=path/to/lantern to measure another binary
#   ONLY=django bash bench/manual.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
lantern="${LANTERN:-$root/target/release/lantern}"
if [ -z "${LANTERN:-}" ] && [ ! -x "$lantern" ]; then
  cargo build --quiet --release --workspace --bin lantern
fi
django=/usr/share/doc/python-django-doc/html
postgres=/usr/share/doc/postgresql-doc-15/html
need=()
[ -d "$django" ] || need+=(python-django-doc)
[ -d "$postgres" ] || need+=(postgresql-doc-15)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
work="$root/out/manual-bench"
mkdir -p "$work"

build() { # name folder
  local started=$SECONDS
  rm -rf "$work/$1.lantern" "$work/$1.lantern.cache"
  "$lantern" build "$2" --out "$work/$1.lantern" --cache "$work/$1.cache.cold" --quiet
  echo "$1: cold build $((SECONDS - started)) s"
  rm -rf "$work/$1.cache.cold"
}

if [ "${ONLY:-django}" = django ] || [ -z "${ONLY:-}" ]; then
  build django "$django"
  "$lantern" eval --bundle "$work/django.lantern" --golden golden/django.jsonl
  if [ -f "$work/django.lantern.query" ] || [ -d "$work/django.lantern.query" ]; then
    "$lantern" eval --bundle "$work/django.lantern" --golden golden/django.jsonl --query-encoder table
  fi
fi

if [ "${ONLY:-postgres}" = postgres ] || [ -z "${ONLY:-}" ]; then
  build postgres "$postgres"
  bars=0
  for q in "vacuum" "create index" "replication conflicts" "connection pooling" "backup and restore"; do
    n="$("$lantern" query "$work/postgres.lantern" "$q" --json \
      | python3 -c '
import json, re, sys
bar = re.compile(r"\bPrev\b.*\b(Up|Home)\b.*\bNext\b", re.S)
hits = json.load(sys.stdin)["hits"][:10]
print(sum(1 for h in hits if bar.search(" ".join([h["title"], h["breadcrumb"], h["excerpt"]]))))')"
    echo "postgres: \"$q\": $n of the top 10 carry a Prev/Up/Next bar"
    bars=$((bars + n))
  done
  echo "postgres: $bars results with a navigation bar over five everyday queries"
fi
