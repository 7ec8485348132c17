#!/usr/bin/env bash
# Build benchmark: cold build, rebuild after editing one page, rebuild with no change, bundle
# bytes by part, for Lantern's docs and the shared corpora. Prints a markdown table.
# Usage: bash bench/build.sh [CORPUS_DIR...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash models/fetch.sh >/dev/null
cargo build --quiet --release --workspace --bin lantern
bin="$root/target/release/lantern"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
corpora=("$@")
if [ ${#corpora[@]} -eq 0 ]; then
  corpora=(site/docs ../shared/corpora/rust-book/src ../shared/corpora/fastapi-docs/docs/en/docs)
fi

secs() { python3 -c "import sys; print(f'{float(sys.argv[1]):.1f}')" "$1"; }
echo "| corpus | pages | chunks | cold build s | ms/chunk | peak RSS MiB | rebuild, 1 page edited s | rebuild, no change s | bundle KiB | text | postings | vectors | bytes/chunk | gzipped KiB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for c in "${corpora[@]}"; do
  [ -d "$c" ] || { echo "skipping $c (missing)" >&2; continue; }
  name="$(basename "$(dirname "$c")")/$(basename "$c")"
  docs="$work/docs"; rm -rf "$docs"; cp -r "$c" "$docs"; chmod -R u+w "$docs"
  out="$work/b.lantern"; rm -f "$out" "$out.cache"
  /usr/bin/time -f "%e %M" -o "$work/t" "$bin" build "$docs" --out "$out" --quiet > "$work/log"
  read -r cold rss < "$work/t"
  line="$(head -1 "$work/log")"
  pages=$(echo "$line" | sed -E 's/.*: ([0-9]+) pages.*/\1/')
  chunks=$(echo "$line" | sed -E 's/.* ([0-9]+) chunks.*/\1/')
  mspc=$(echo "$line" | sed -E 's/.*, ([0-9.]+) ms\/chunk.*/\1/')
  # Edit one page: append a paragraph to the largest markdown file.
  page="$(find "$docs" -name '*.md' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)"
  printf '\n\nAn added paragraph about benchmark edits.\n' >> "$page"
  /usr/bin/time -f "%e" -o "$work/t" "$bin" build "$docs" --out "$out" --quiet > /dev/null
  edit="$(cat "$work/t")"
  /usr/bin/time -f "%e" -o "$work/t" "$bin" build "$docs" --out "$out" --quiet > /dev/null
  noop="$(cat "$work/t")"
  parts="$("$bin" inspect "$out" | grep '^parts')"
  size=$(stat -c %s "$out")
  gz=$(gzip -9 -c "$out" | wc -c)
  text=$(echo "$parts" | sed -E 's/.*text ([^,]+),.*/\1/')
  post=$(echo "$parts" | sed -E 's/.*postings ([^,]+),.*/\1/')
  vec=$(echo "$parts" | sed -E 's/.*vectors\+graph ([^,]+),.*/\1/')
  echo "| $name | $pages | $chunks | $(secs "$cold") | $mspc | $((rss / 1024)) | $(secs "$edit") | $(secs "$noop") | $((size / 1024)) | $text | $post | $vec | $((size / chunks)) | $((gz / 1024)) |"
done
