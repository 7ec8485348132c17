#!/usr/bin/env bash
# Builds the demo site into OUT (default out/web): Lantern's docs (site/docs) as HTML pages with
# the search widget, their bundle and the published model (`lantern site`), the wasm runtime
# (web/runtime/build.sh), the Leptos UI (web/ui), the widget and the service worker (web/widget).
# Serve it with `lantern serve OUT`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${1:-out/web}"
bash models/fetch.sh
bash web/runtime/build.sh "$out/lantern"
cargo build --quiet --release -p lantern-cli
cargo build --quiet --profile wasm-small --target wasm32-unknown-unknown -p lantern-ui
rm -rf "$out/lantern/ui"
"$root/.tools/bin/wasm-bindgen" --target web --out-dir "$out/lantern/ui" target/wasm32-unknown-unknown/wasm-small/lantern_ui.wasm
bash web/tools/wasm-opt.sh "$out"/lantern/ui/*.wasm
cp web/widget/widget.js web/widget/widget.css "$out/lantern/"
bash web/tools/content-address.sh "$out/lantern/ui/lantern_ui_bg.wasm" \
  "$out/lantern/widget.js" "$out/lantern/ui/lantern_ui.js"
mkdir -p "$out/assets"
cp web/pages/site.css "$out/assets/"
# The service worker's cache version: a hash of the runtime it serves.
version="$(find "$out/lantern" -type f -print0 | sort -z | xargs -0 cat | sha256sum | cut -c1-12)"
sed "s/__LANTERN_VERSION__/$version/" web/widget/sw.js > "$out/sw.js"
./target/release/lantern site site/docs --out "$out" --title Lantern --model-dir models/minilm
node web/tools/precompress.mjs "$out"
