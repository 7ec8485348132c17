#!/usr/bin/env bash
# The benchmark run: builds everything, measures build, size, speed and quality against
# Pagefind, and rewrites BENCHMARKS.md with the date, machine and commit. Not part of CI's
# pass/fail (too slow and noisy); CI compiles the Rust benchmark so it cannot rot.
# Takes about 20-30 minutes on two cores.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash site/build.sh out/web > /dev/null
(cd bench && npm ci --no-audit --no-fund --silent)
(cd tests/browser && npm ci --no-audit --no-fund --silent)
./target/release/lantern build ../shared/corpora/rust-book/src --out out/rust-book.lantern --quiet > /dev/null

out="$(mktemp)"
{
  echo "# Benchmarks"
  echo
  echo "Written by \`bash bench/run.sh\` on $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD),"
  echo "on $(nproc) cores and $(free -g | awk '/Mem:/ {print $2}') GiB of memory. Ratios compare figures measured in the same run;"
  echo "absolute times vary between machines and runs."
  echo
  echo "## Build (bench/build.sh)"
  echo
  bash bench/build.sh
  echo
  echo "## Growth (bench/scale.sh): the Rust book repeated"
  echo
  bash bench/scale.sh
  echo
  echo "## Vector search: exact int8 scan against the HNSW graph (cargo bench --bench vectors)"
  echo
  LANTERN_MODEL_DIR="$root/models/minilm" cargo bench --quiet -p lantern-server --bench vectors -- "$root/out/rust-book.lantern" \
    "$root/../shared/golden/rust-book.jsonl" "$root/golden/lantern-docs.jsonl" 2>/dev/null
  echo
  echo "## In the browser (bench/browser.mjs, headless Chromium, localhost)"
  echo
  node bench/browser.mjs
  echo
  # Sections written by hand (between the kept markers) survive the rewrite; dated studies
  # live in bench/studies/, one file each.
  [ -f BENCHMARKS.md ] && awk '/^<!-- kept:/ {k = 1} k {print} /^<!-- \/kept -->/ {k = 0; print ""}' BENCHMARKS.md
  echo "## Against Pagefind (bench/compare.sh)"
  bash bench/compare.sh
} > "$out"
mv "$out" BENCHMARKS.md
echo "wrote BENCHMARKS.md"
