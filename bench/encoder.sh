#!/usr/bin/env bash
# Chunks a second, Lantern's packed encoder against tract (the ONNX model it is made from), on
# the same chunks of the Cargo book in one run, with the processor's SIMD features
# (crates/packer/examples/encoder_speed.rs). N chunks, evenly sampled (default 300).
#
#   bash bench/encoder.sh [N]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
src=../shared/corpora/cargo-book/src
[ -d "$src" ] || { echo "skipped: $src not found" >&2; exit 0; }
bash models/fetch.sh
cargo build --quiet --release -p lantern-cli -p lantern-packer --example encoder_speed
mkdir -p out/bench
[ -f out/bench/cargo-book.lantern ] || ./target/release/lantern build "$src" --out out/bench/cargo-book.lantern --quiet
./target/release/examples/encoder_speed models/minilm out/bench/cargo-book.lantern "${1:-300}"
