#!/usr/bin/env bash
# Builds the demo site (Lantern's own docs with search) and serves it on http://127.0.0.1:8080/.
# Open it, press "/" or Ctrl-K, and search. Ctrl-C stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
bash site/build.sh out/web
exec ./target/release/lantern serve out/web --addr "${LANTERN_ADDR:-127.0.0.1:8080}"
