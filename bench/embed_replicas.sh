#!/usr/bin/env bash
# Embeds distinct replicas of the Rust book into the scale run's caches a few volumes at a
# time, so the hours a cold 64x build takes (REPLICAS=distinct bash bench/scale.sh) can be
# spread over interruptions: each step builds volumes 0..k into one cache and saves it, and an
# interrupted step loses only its own volumes. Replicas are deterministic (bench/replicate.py),
# so volumes 0..15 of the 64x set are the 16x set and its cache is copied when they are done.
#
# nice -n 19 bash bench/embed_replicas.sh [STEP]     (default STEP 8 volumes)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
step="${1:-8}"
work="${SCALE_WORK:-$root/out/scale}"
docs="$work/docs-64-distinct"
grow="$work/grow-distinct"
cache="$work/cache-64-distinct"
[ -d "$docs" ] || python3 bench/replicate.py ../shared/corpora/rust-book/src "$docs" 64
mkdir -p "$grow"
for ((k = step; k <= 64; k += step)); do
  for ((r = k - step; r < k; r++)); do
    [ -d "$grow/volume$r" ] || cp -r "$docs/volume$r" "$grow/volume$r"
  done
  if [ -f "$cache.done-$k" ]; then continue; fi
  echo "volumes 0..$((k - 1)): $(date +%T)"
  ./target/release/lantern site "$grow" --out "$work/grow-site" --title grow --cache "$cache" >/dev/null
  touch "$cache.done-$k"
  if [ "$k" -eq 16 ]; then cp "$cache" "$work/cache-16-distinct"; fi
done
echo "done: $(date +%T)"
