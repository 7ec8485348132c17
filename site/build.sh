#!/usr/bin/env bash
# Builds the demo site into OUT (default out/web): Lantern's docs as HTML pages with the search
# widget, their bundle, the runtime (runtime-wasm/build.sh), the Leptos UI, the model and the
# service worker. Serve it with `lantern serve OUT`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${1:-out/web}"
bash models/fetch.sh
bash runtime-wasm/build.sh "$out/lantern"
cargo build --quiet --release -p lantern-cli
cargo build --quiet --release --target wasm32-unknown-unknown -p lantern-ui
rm -rf "$out/lantern/ui"
"$root/.tools/bin/wasm-bindgen" --target web --out-dir "$out/lantern/ui" target/wasm32-unknown-unknown/release/lantern_ui.wasm
cp site/assets/widget.js site/assets/widget.css "$out/lantern/"
mkdir -p "$out/assets" "$out/model"
cp site/assets/site.css "$out/assets/"
cp site/assets/sw.js "$out/sw.js"
cp models/minilm/model.onnx models/minilm/tokenizer.json "$out/model/"
./target/release/lantern site site/docs --out "$out" --title Lantern
