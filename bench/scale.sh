#!/usr/bin/env bash
# How cost grows with the site: the Rust book at 1x, 16x and 64x as distinct replicas
# (bench/replicate.py), Lantern against Pagefind in the same run (bench/scale.mjs: build time
# and memory, bytes and ms to the first keyword and hybrid result in Chromium), then the recall
# of the partitioned vector search against an exact scan (benches/vectors.rs) at each size.
# Embedding caches are kept in WORK (default out/scale), so a second run rebuilds from them.
#
# bash bench/scale.sh [SCALES...]     (default: 1 16 64; 64x embeds about 85,000 chunks)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
src="../shared/corpora/rust-book/src"
golden="$root/../shared/golden/rust-book.jsonl"
work="${SCALE_WORK:-$root/out/scale}"
mkdir -p "$work"
[ -d out/web/lantern ] || bash site/build.sh out/web
(cd bench && npm ci --no-audit --no-fund --silent)
(cd tests/browser && npm ci --no-audit --no-fund --silent)
scales=("$@")
[ ${#scales[@]} -gt 0 ] || scales=(1 16 64)
node bench/scale.mjs "$src" "$work" "${scales[@]}"
for n in "${scales[@]}"; do
  echo
  echo "Vector partitions at ${n}x (recall@10 against an exact scan; the Rust book's questions and chunk openings):"
  LANTERN_MODEL_DIR="$root/models/minilm" cargo bench -q -p lantern-server --bench vectors -- \
    "$work/site-$n/search.lantern" "$golden" 2>/dev/null
done
