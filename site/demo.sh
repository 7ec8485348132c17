#!/usr/bin/env bash
# Builds the search bundle for Lantern's own docs (site/docs) and runs a few searches on it
# with the same engine the browser uses. Pass a question to ask your own.
set -euo pipefail
cd "$(dirname "$0")/.."
bash models/fetch.sh
cargo build --quiet --release -p lantern
mkdir -p out
./target/release/lantern build site/docs --out out/site.lantern
if [ $# -gt 0 ]; then
  ./target/release/lantern query out/site.lantern "$*" --explain
  exit 0
fi
for q in "how do I keep results between builds" "max_file_bytes" "what is the capital of France"; do
  echo; echo "\$ lantern query out/site.lantern \"$q\""
  ./target/release/lantern query out/site.lantern "$q" -k 3
done
