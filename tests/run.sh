#!/usr/bin/env bash
# The project's test command: fetches the model if needed, checks formatting and lints, then
# runs every test with the real model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash models/fetch.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings
cargo test --workspace --release
