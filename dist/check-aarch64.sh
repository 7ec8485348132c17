#!/usr/bin/env bash
# The aarch64 packages as an owner on an ARM machine meets them, run under qemu's user-mode
# emulation (Debian: qemu-user): npm installs the launcher with its arm64 binary package into an
# empty folder (forced: npm here runs on x86-64) and that binary tells its version; pip installs
# the wheel into another, and its binary builds a small generator-built site; everything it publishes is compared
# byte for byte with what the x86-64 binary publishes for the same site (the encoder's
# integer kernels there and the portable code on aarch64 must give the same vectors).
#   LANTERN_AARCH64=1 bash dist/package.sh && bash dist/check-aarch64.sh [DIST_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dist="$(cd "${1:-$root/out/dist}" && pwd)"
command -v qemu-aarch64 >/dev/null || {
  echo "dist/check-aarch64.sh: needs qemu-aarch64 (Debian and Ubuntu: apt-get install qemu-user)" >&2
  exit 1
}
wheel="$(ls "$dist"/lantern_docs_search-*aarch64*.whl)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
pip install --quiet --no-deps --platform manylinux2014_aarch64 --only-binary=:all: \
  --target "$tmp/arm" "$wheel"
arm_lantern="$tmp/arm/bin/lantern"
qemu-aarch64 "$arm_lantern" --version
mkdir "$tmp/npm" && (
  cd "$tmp/npm"
  export HOME="$tmp/npm" npm_config_cache="$tmp/npm/.npm" npm_config_offline=true npm_config_update_notifier=false
  npm init -y >/dev/null
  npm install --no-audit --no-fund --force --loglevel=error "$dist"/lantern-docs-search-[0-9]*.tgz \
    "$dist"/lantern-docs-search-linux-arm64-*.tgz
  echo "npm (arm64): $(qemu-aarch64 node_modules/lantern-docs-search-linux-arm64/bin/lantern --version)"
)
# No query table: its twelve thousand texts would take most of an hour under emulation, and
# the chunks' vectors are what tells the encoders apart.
printf 'query_table_rank = 0\n' >"$tmp/lantern.toml"
for arch in x86_64 aarch64; do
  cp -r "$root/tests/corpus/built-site" "$tmp/site-$arch"
done
"$dist/lantern" build "$tmp/site-x86_64" --config "$tmp/lantern.toml" --no-cache --quiet
qemu-aarch64 "$arm_lantern" build "$tmp/site-aarch64" --config "$tmp/lantern.toml" --no-cache --quiet
files="$(find "$tmp/site-aarch64/lantern" -type f | wc -l)"
if diff -r "$tmp/site-x86_64/lantern" "$tmp/site-aarch64/lantern" >/dev/null; then
  echo "aarch64: the same $files files, byte for byte, as the x86-64 binary publishes"
else
  diff -rq "$tmp/site-x86_64/lantern" "$tmp/site-aarch64/lantern" | head -20 >&2
  echo "aarch64: what it published differs from the x86-64 binary's" >&2
  exit 1
fi
