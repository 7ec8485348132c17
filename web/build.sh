#!/usr/bin/env bash
# Builds everything a reader's browser runs into OUT (default out/web/lantern), the folder a
# site publishes as /lantern/: the wasm runtime (web/runtime/build.sh), the UI (web/ui),
# the widget and the service worker (web/widget), its cache version stamped as a hash of the
# rest. `dist/package.sh` puts this folder inside the `lantern` binary; `site/build.sh` serves it
# with the demo.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${1:-out/web/lantern}"
bash web/runtime/build.sh "$out"
# The UI module carries the search core. Two builds: ui/ stems English (and the languages
# without a stemmer), ui-intl/ every language; `lantern build SITE_DIR` publishes the one a
# bundle needs under ui/ (crates/indexer/src/publish.rs).
for variant in ui ui-intl; do
  features=""
  [ "$variant" = ui-intl ] && features="--features all-languages"
  # shellcheck disable=SC2086
  cargo build --quiet --profile wasm-small --target wasm32-unknown-unknown -p lantern-ui $features
  rm -rf "$out/$variant"
  "$root/.tools/bin/wasm-bindgen" --target web --no-typescript --out-dir "$out/$variant" target/wasm32-unknown-unknown/wasm-small/lantern_ui.wasm
done
bash web/tools/wasm-opt.sh "$out"/ui/*.wasm "$out"/ui-intl/*.wasm
cp web/widget/widget.js web/widget/widget.css "$out/"
node web/tools/minify.mjs "$out/widget.js" "$out"/ui/lantern_ui.js "$out"/ui-intl/lantern_ui.js
bash web/tools/content-address.sh "$out/ui/lantern_ui_bg.wasm" "$out/ui/lantern_ui.js"
bash web/tools/content-address.sh "$out/ui-intl/lantern_ui_bg.wasm" "$out/ui-intl/lantern_ui.js"
# The service worker's cache version: a hash of the runtime it serves.
rm -f "$out/sw.js"
version="$(find "$out" -type f ! -name '*.br' ! -name '*.gz' -print0 | sort -z | xargs -0 cat | sha256sum | cut -c1-12)"
sed "s/__LANTERN_VERSION__/$version/" web/widget/sw.js > "$out/sw.js"
node web/tools/minify.mjs "$out/sw.js"
