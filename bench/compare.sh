#!/usr/bin/env bash
# Lantern and Pagefind side by side on Lantern's docs, the FastAPI docs and the Rust book (needs out/web from
# site/build.sh). Prints markdown tables.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[ -d out/web/lantern ] || bash site/build.sh out/web
(cd bench && npm ci --no-audit --no-fund --silent)
(cd tests/browser && npm ci --no-audit --no-fund --silent)
node bench/compare.mjs lantern-docs site/docs golden/lantern-docs.jsonl
if [ -d ../shared/corpora/fastapi-docs/docs/en/docs ]; then
  node bench/compare.mjs fastapi ../shared/corpora/fastapi-docs/docs/en/docs golden/fastapi.jsonl
fi
if [ -d ../shared/corpora/rust-book/src ]; then
  node bench/compare.mjs rust-book ../shared/corpora/rust-book/src ../shared/golden/rust-book.jsonl
fi
