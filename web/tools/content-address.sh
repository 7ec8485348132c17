#!/usr/bin/env bash
# Names a built file by its content: renames DIR/NAME.EXT to DIR/NAME-<12 hex of its sha256>.EXT
# and rewrites every mention of NAME.EXT in the files that load it, failing if one is left
# unchanged. The service worker serves such names cache first and `lantern serve` marks them
# immutable, so a warm visit neither fetches nor revalidates them, and Chromium keeps a wasm
# module's compiled code with the cached copy.
#   content-address.sh FILE LOADER...
set -euo pipefail
file="$1"
shift
[ "$#" -gt 0 ] || { echo "usage: content-address.sh FILE LOADER..." >&2; exit 2; }
dir="$(dirname "$file")"
base="$(basename "$file")"
stem="${base%.*}"
ext="${base##*.}"
hashed="$stem-$(sha256sum "$file" | cut -c1-12).$ext"
mv "$file" "$dir/$hashed"
for loader in "$@"; do
  sed -i "s/${stem//./\\.}\\.$ext/$hashed/g" "$loader"
  grep -q "$hashed" "$loader" || { echo "content-address.sh: $loader does not name $base" >&2; exit 1; }
done
