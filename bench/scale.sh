#!/usr/bin/env bash
# How cost grows: the Rust book at 1x, 4x and 16x (its pages repeated under different paths).
# Build time, bundle bytes and native query latency per mode. Prints a markdown table.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
src="${1:-../shared/corpora/rust-book/src}"
golden="${2:-../shared/golden/rust-book.jsonl}"
bin="$root/target/release/lantern"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "| scale | pages | chunks | build s | bundle MiB | keyword p50/p95 ms | vector p50/p95 ms | hybrid p50/p95 ms |"
echo "|---|---|---|---|---|---|---|---|"
for n in 1 4 16; do
  docs="$work/docs-$n"; mkdir -p "$docs"
  for i in $(seq 1 "$n"); do cp -r "$src" "$docs/copy$i"; done
  chmod -R u+w "$docs"
  /usr/bin/time -f "%e" -o "$work/t" "$bin" build "$docs" --out "$work/b$n.lantern" --no-cache --quiet > "$work/log"
  line="$(head -1 "$work/log")"
  pages=$(echo "$line" | sed -E 's/.*: ([0-9]+) pages.*/\1/')
  chunks=$(echo "$line" | sed -E 's/.* ([0-9]+) chunks.*/\1/')
  mib=$(python3 -c "import os,sys; print(f'{os.path.getsize(sys.argv[1])/2**20:.2f}')" "$work/b$n.lantern")
  # Expected pages exist in every copy; any copy counts as the answer.
  "$bin" eval --bundle "$work/b$n.lantern" --golden "$golden" > "$work/eval"
  lat() { grep "^$1 *latency" "$work/eval" | sed -E 's/.*p50 ([0-9.]+) ms, p95 ([0-9.]+) ms.*/\1 \/ \2/'; }
  echo "| ${n}x | $pages | $chunks | $(cat "$work/t") | $mib | $(lat keyword) | $(lat vector) | $(lat hybrid) |"
done
