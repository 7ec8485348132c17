#!/usr/bin/env bash
# A reader typing into Lantern's widget and Pagefind's UI on the Rust book (1x and, given
# SCALES, larger copies): bytes to the first result, in the same run (bench/typing.mjs), under
# gzip and brotli (ENCODINGS), with the model and with quick meaning only.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
src=../shared/corpora/rust-book/src
[ -d "$src" ] || { echo "skipped: $src not found" >&2; exit 0; }
[ -d out/web/lantern ] || bash site/build.sh out/web
[ -x target/release/lantern ] || cargo build --release --workspace --bin lantern
(cd bench && npm ci --no-audit --no-fund --silent)
(cd tests/browser && npm ci --no-audit --no-fund --silent)
mkdir -p out/bench
node bench/typing.mjs "$src" out/bench ${SCALES:-1 64}
