#!/usr/bin/env bash
# Builds the demo site into OUT (default out/web): Lantern's docs (site/docs) as HTML pages with
# the search widget, their bundle and the published model (`lantern site`), and the browser
# runtime (web/build.sh: wasm modules, UI, widget, service worker) under lantern/.
# Serve it with `lantern serve OUT`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${1:-out/web}"
bash models/fetch.sh
bash web/build.sh "$out/lantern"
cargo build --quiet --release --workspace --bin lantern
mkdir -p "$out/assets"
cp web/pages/site.css "$out/assets/"
# The demo's service worker serves the whole site (offline pages too), from the root.
cp "$out/lantern/sw.js" "$out/sw.js"
./target/release/lantern site site/docs --out "$out" --title Lantern --model-dir models/minilm
node web/tools/precompress.mjs "$out"
# The reader's first download of code, printed, and held to its budget.
node web/tools/first-download.mjs "$out/lantern"
