#!/usr/bin/env bash
# Builds real site-generator output for the built-HTML tests into OUT (default out/built):
#   mkdocs-fixture/       MkDocs over tests/corpus/mkdocs (repeated headings, filters)
#   mkdocs-lantern-docs/  MkDocs over Lantern's own docs (site/docs)
#   rust-book/            mdBook over ../shared/corpora/rust-book, when it is present
# and a bundle beside each (NAME.lantern) made by `lantern build` with no options: the folder
# is recognised as built HTML. The generators are pinned: mdBook from the crate registry into
# .tools, MkDocs and Sphinx (which tests/browser/sphinx.test.mjs drives) from PyPI into
# tests/html/.venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="${1:-out/built}"
MDBOOK_VERSION=0.4.52
mdbook="$root/.tools/bin/mdbook"
if ! "$mdbook" --version 2>/dev/null | grep -q "v$MDBOOK_VERSION\$"; then
  echo "installing mdBook $MDBOOK_VERSION into .tools (about a minute, once)"
  cargo install --quiet --locked mdbook --version "$MDBOOK_VERSION" --root "$root/.tools" \
    --no-default-features --features search
fi
if [ ! -x tests/html/.venv/bin/mkdocs ] || [ ! -x tests/html/.venv/bin/sphinx-build ]; then
  python3 -m venv tests/html/.venv
  tests/html/.venv/bin/pip install --quiet --disable-pip-version-check -r tests/html/requirements.txt
fi
lantern=./target/release/lantern
[ -x "$lantern" ] || cargo build --quiet --release --workspace --bin lantern
rm -rf "$out"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

tests/html/.venv/bin/mkdocs build --quiet -f tests/corpus/mkdocs/mkdocs.yml -d "$out/mkdocs-fixture"
# Lantern's docs as an MkDocs site: the config lives in the output folder, not in site/docs.
mkdir -p "$out/mkdocs-src"
cat > "$out/mkdocs-src/mkdocs.yml" <<YAML
site_name: Lantern
docs_dir: $root/site/docs
use_directory_urls: true
theme:
  name: mkdocs
YAML
tests/html/.venv/bin/mkdocs build --quiet -f "$out/mkdocs-src/mkdocs.yml" -d "$out/mkdocs-lantern-docs"

book="$root/../shared/corpora/rust-book"
if [ -d "$book/src" ]; then
  mkdir -p "$out/rust-book-src"
  cat > "$out/rust-book-src/book.toml" <<TOML
[book]
title = "The Rust Programming Language"
src = "$(cd "$book/src" && pwd)"
[output.html]
TOML
  # The corpus has the book's text but not its code listings: mdBook reports each missing
  # include and leaves the directive in place (the indexer drops such lines).
  "$mdbook" build "$out/rust-book-src" -d "$out/rust-book" 2>/dev/null
fi

for site in mkdocs-fixture mkdocs-lantern-docs rust-book; do
  [ -d "$out/$site" ] || continue
  $lantern build "$out/$site" --out "$out/$site.lantern" --cache "out/$site.lantern.cache" --quiet
done
