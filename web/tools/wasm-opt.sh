#!/usr/bin/env bash
# Shrinks wasm modules in place with binaryen's wasm-opt -Oz (pinned in package.json). The
# optimised output is cached by the input's sha256 under target/wasm-opt, because the embedder
# (20 MB) takes minutes; modules are optimised in parallel.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tools="$root/web/tools"
if [ ! -x "$tools/node_modules/.bin/wasm-opt" ] || [ ! -x "$tools/node_modules/.bin/terser" ]; then
  (cd "$tools" && npm ci --no-audit --no-fund --silent)
fi
cache="$root/target/wasm-opt"
mkdir -p "$cache"
pids=()
for wasm in "$@"; do
  (
    key="$(sha256sum "$wasm" | cut -c1-32)"
    if [ ! -f "$cache/$key.wasm" ]; then
      "$tools/node_modules/.bin/wasm-opt" -Oz "$wasm" -o "$cache/$key.tmp"
      mv "$cache/$key.tmp" "$cache/$key.wasm"
    fi
    before=$(stat -c %s "$wasm")
    cp "$cache/$key.wasm" "$wasm"
    echo "  wasm-opt -Oz: $(basename "$wasm") $before -> $(stat -c %s "$wasm") bytes"
  ) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
