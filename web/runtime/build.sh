#!/usr/bin/env bash
# Builds the three browser modules (search core, embedder, answer protocol) with plain cargo and the pinned
# wasm-bindgen-cli, and assembles the runtime into OUT (default out/web/lantern):
#   lantern.js, fetch.js, embedder.js, embed-worker.js, lantern.d.ts (the API's types for pages
#   that script it), pkg/*.wasm + bindings (no TypeScript of their own: no reader fetches it).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="${1:-out/web/lantern}"
WB_VERSION=0.2.130
wb="$root/.tools/bin/wasm-bindgen"

rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
if ! "$wb" --version 2>/dev/null | grep -q " $WB_VERSION\$"; then
  echo "installing wasm-bindgen-cli $WB_VERSION into .tools (a few minutes, once)"
  # Without its default TLS stack (rustls and ring, for the test runner's downloads, which this
  # never runs): 171 s instead of 318 s cold on two cores, the same output byte for byte.
  cargo install --quiet wasm-bindgen-cli --version "$WB_VERSION" --root "$root/.tools" \
    --no-default-features
fi

cargo build --quiet --profile wasm-small --target wasm32-unknown-unknown -p lantern-search-wasm
cargo build --quiet --profile wasm-small --target wasm32-unknown-unknown -p lantern-embed-wasm
cargo build --quiet --profile wasm-small --target wasm32-unknown-unknown -p lantern-ask-wasm
rm -rf "$out/pkg"
mkdir -p "$out/pkg"
"$wb" --target web --no-typescript --out-dir "$out/pkg" target/wasm32-unknown-unknown/wasm-small/lantern_search_wasm.wasm
"$wb" --target web --no-typescript --out-dir "$out/pkg" target/wasm32-unknown-unknown/wasm-small/lantern_embed_wasm.wasm
"$wb" --target web --no-typescript --out-dir "$out/pkg" target/wasm32-unknown-unknown/wasm-small/lantern_ask_wasm.wasm
bash web/tools/wasm-opt.sh "$out"/pkg/*.wasm
rm -f "$out"/embed-worker-*.js*
cp web/runtime/lantern.js web/runtime/embed-worker.js web/runtime/fetch.js web/runtime/embedder.js \
  web/runtime/lantern.d.ts "$out/"
node web/tools/minify.mjs "$out"/lantern.js "$out"/embed-worker.js "$out"/fetch.js "$out"/embedder.js \
  "$out"/pkg/*.js
# Both wasm modules are named by their content (web/tools/content-address.sh says why); the
# JavaScript that loads them keeps its name and is revalidated on every visit.
bash web/tools/content-address.sh "$out/pkg/lantern_embed_wasm_bg.wasm" \
  "$out/embed-worker.js" "$out/pkg/lantern_embed_wasm.js"
bash web/tools/content-address.sh "$out/pkg/lantern_search_wasm_bg.wasm" \
  "$out/lantern.js" "$out/pkg/lantern_search_wasm.js"
bash web/tools/content-address.sh "$out/pkg/lantern_ask_wasm_bg.wasm" \
  "$out/lantern.js" "$out/pkg/lantern_ask_wasm.js"
# So is the embedder's worker (after it names its module): a shared worker is found by its URL,
# so a page of a new build never talks to a worker an older build left running.
bash web/tools/content-address.sh "$out/embed-worker.js" "$out/embedder.js"
ls -l "$out/pkg"/*.wasm | awk '{print "  " $5 " bytes  " $9}'
