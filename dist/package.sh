#!/usr/bin/env bash
# Builds the self-contained `lantern` and the packages site owners install it from, into OUT
# (default out/dist):
#   lantern                                   the binary (Linux x86-64, static): it carries the browser
#                                             runtime, the widget, the service worker and the model
#   lantern-VERSION-x86_64-linux.tar.gz       the binary to download
#   lantern-docs-search-VERSION.tgz           the npm package (`npx lantern build site/`): the
#                                             launcher, whose optional dependency
#   lantern-docs-search-linux-x64-VERSION.tgz carries the binary (npm fetches only this machine's)
#   lantern_docs_search-VERSION-*.whl         the Python wheel (`pip install`, then `lantern`)
#   with LANTERN_AARCH64=1, also lantern-aarch64, lantern-VERSION-aarch64-linux.tar.gz, an
#   aarch64 wheel and lantern-docs-search-linux-arm64-VERSION.tgz (see below)
# Plain `cargo build` stays the development path (it carries nothing and reads the checkout).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="$(mkdir -p "${1:-out/dist}" && cd "${1:-out/dist}" && pwd)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
work="$out/work"
rm -rf "$work"
mkdir -p "$work/assets"

bash models/fetch.sh
# The runtime every reader's browser runs.
bash web/build.sh "$work/assets/web"
# The model as a site publishes it (content-addressed pack and word rows): published by a
# development build of `lantern` over a small built site, then carried by the real one.
cargo build --quiet --release --workspace --bin lantern
mkdir -p "$work/site"
cp -r tests/corpus/built-site/. "$work/site/"
./target/release/lantern build "$work/site" --runtime "$work/assets/web" --no-cache --quiet \
  --model-dir models/minilm >/dev/null
cp -r "$work/site/lantern/model" "$work/assets/model"

# The binary, carrying both, statically linked (musl): it runs on any Linux x86-64, whatever
# its C library or version, so the wheel is manylinux and musllinux alike. Its own target
# folder leaves the development binary as a plain build has it.
target=x86_64-unknown-linux-musl
rustup target list --installed | grep -qx "$target" || rustup target add "$target"
if ! command -v musl-gcc >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl-tools >/dev/null
fi
command -v musl-gcc >/dev/null || {
  echo "dist/package.sh: the static build needs musl-gcc (Debian and Ubuntu: apt-get install musl-tools)" >&2
  exit 1
}
LANTERN_ASSETS_DIR="$work/assets" cargo build --quiet --release -p lantern-cli --target "$target"
cp "target/$target/release/lantern" "$out/lantern"
strip "$out/lantern" 2>/dev/null || true

# The download.
tar -C "$out" -czf "$out/lantern-$version-x86_64-linux.tar.gz" lantern

# With LANTERN_AARCH64=1, the same static build for aarch64 Linux (ARM servers and CI runners):
# its download, its wheel and its npm package. It needs an aarch64 C compiler for ring's C parts
# (Debian and Ubuntu: gcc-aarch64-linux-gnu); bash dist/check-aarch64.sh runs it under qemu.
if [ "${LANTERN_AARCH64:-0}" = 1 ]; then
  arm=aarch64-unknown-linux-musl
  command -v aarch64-linux-gnu-gcc >/dev/null || {
    echo "dist/package.sh: the aarch64 build needs aarch64-linux-gnu-gcc (Debian and Ubuntu: apt-get install gcc-aarch64-linux-gnu)" >&2
    exit 1
  }
  rustup target list --installed | grep -qx "$arm" || rustup target add "$arm"
  LANTERN_ASSETS_DIR="$work/assets" CC_aarch64_unknown_linux_musl=aarch64-linux-gnu-gcc \
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=aarch64-linux-gnu-gcc \
    cargo build --quiet --release -p lantern-cli --target "$arm"
  mkdir -p "$work/aarch64"
  cp "target/$arm/release/lantern" "$work/aarch64/lantern"
  aarch64-linux-gnu-strip "$work/aarch64/lantern" 2>/dev/null || true
  cp "$work/aarch64/lantern" "$out/lantern-aarch64"
  tar -C "$work/aarch64" -czf "$out/lantern-$version-aarch64-linux.tar.gz" lantern
  python3 dist/wheel.py "$work/aarch64/lantern" "$out" "$version"
fi

# npm, as Pagefind and esbuild ship: lantern-docs-search is the launcher alone, and each
# platform's binary is its own package (lantern-docs-search-linux-x64, -linux-arm64), an
# optional dependency with os and cpu set, so npm downloads only the one the machine runs.
npm_pack() { # dir
  (cd "$1" && npm pack --silent --pack-destination "$out" >/dev/null)
}
npm_platform() { # platform cpu binary
  local dir="$work/npm-$1"
  mkdir -p "$dir/bin"
  cp "$3" "$dir/bin/lantern"
  sed "s/__VERSION__/$version/g; s/__PLATFORM__/$1/g; s/__CPU__/$2/g" dist/npm/platform.json >"$dir/package.json"
  npm_pack "$dir"
}
npm_dir="$work/npm"
mkdir -p "$npm_dir/bin"
cp dist/npm/lantern.js "$npm_dir/bin/lantern.js"
cp dist/npm/README.md "$npm_dir/README.md"
sed "s/__VERSION__/$version/g" dist/npm/package.json >"$npm_dir/package.json"
npm_pack "$npm_dir"
npm_platform linux-x64 x64 "$out/lantern"
if [ "${LANTERN_AARCH64:-0}" = 1 ]; then npm_platform linux-arm64 arm64 "$out/lantern-aarch64"; fi

# Python: a wheel whose script is the binary.
python3 dist/wheel.py "$out/lantern" "$out" "$version"

rm -rf "$work"
ls -l "$out" | awk 'NR > 1 {print "  " $5 " bytes  " $9}'
