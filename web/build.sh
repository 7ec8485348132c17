#!/usr/bin/env bash
# Builds everything a reader's browser runs into OUT (default out/web/lantern), the folder a
# site publishes as /lantern/: the wasm runtime (web/runtime/build.sh), the Leptos UI (web/ui),
# the widget and the service worker (web/widget), its cache version stamped as a hash of the
# rest. `dist/package.sh` puts this folder inside the `lantern` binary; `site/build.sh` serves it
# with the demo.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${1:-out/web/lantern}"
bash web/runtime/build.sh "$out"
cargo build --quiet --profile wasm-small --target wasm32-unknown-unknown -p lantern-ui
rm -rf "$out/ui"
"$root/.tools/bin/wasm-bindgen" --target web --out-dir "$out/ui" target/wasm32-unknown-unknown/wasm-small/lantern_ui.wasm
bash web/tools/wasm-opt.sh "$out"/ui/*.wasm
cp web/widget/widget.js web/widget/widget.css "$out/"
bash web/tools/content-address.sh "$out/ui/lantern_ui_bg.wasm" \
  "$out/widget.js" "$out/ui/lantern_ui.js"
# The service worker's cache version: a hash of the runtime it serves.
rm -f "$out/sw.js"
version="$(find "$out" -type f ! -name '*.br' ! -name '*.gz' -print0 | sort -z | xargs -0 cat | sha256sum | cut -c1-12)"
sed "s/__LANTERN_VERSION__/$version/" web/widget/sw.js > "$out/sw.js"
