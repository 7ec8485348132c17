#!/usr/bin/env bash
# How cost grows with the site: the Rust book at 1x, 16x and 64x (bench/replicate.py: exact
# copies under other paths, or REPLICAS=distinct for replicas the model embeds anew, about three
# hours at 64x on two cores), Lantern against Pagefind in the same run (bench/scale.mjs: build
# time and memory, bytes and ms to the first keyword and hybrid result in Chromium), then the
# recall of the partitioned vector search against an exact scan (benches/vectors.rs, on the
# Rust book's vectors and on 16 and 64 noisy copies of them).
# Embedding caches are kept in SCALE_WORK (default out/scale), so a second run reuses them.
#
# bash bench/scale.sh [SCALES...]     (default: 1 16 64)
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
echo
echo "Vector partitions against an exact scan (the Rust book's vectors, then 16 and 64 noisy copies):"
[ -f out/rust-book.lantern ] || ./target/release/lantern build "$src" --out out/rust-book.lantern --quiet
LANTERN_MODEL_DIR="$root/models/minilm" cargo bench -q -p lantern-server --bench vectors -- \
  "$root/out/rust-book.lantern" "$golden" 2>/dev/null
