#!/usr/bin/env bash
# What a site owner pays, Lantern against Pagefind on the same generator output in one run:
# the Cargo book built by MkDocs and the FastAPI docs built by Sphinx (MyST), from
# ../shared/corpora, and PostgreSQL's manual from Debian's package when installed. For each:
# index time cold (nothing cached), on the next deploy and with one page changed (against
# Pagefind's, which always indexes everything), files and bytes published (with the model, and
# with --model quick), and the packages installed.
#
#   bash bench/owner.sh            # LANTERN=path/to/lantern to time another binary
#
# The default binary is the packaged one (out/dist/lantern, `bash dist/package.sh out/dist`),
# which is what `npx lantern` runs; else target/release/lantern.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
corpora=../shared/corpora
[ -d "$corpora/cargo-book/src" ] || { echo "skipped: $corpora not found" >&2; exit 0; }
lantern="${LANTERN:-}"
if [ -z "$lantern" ]; then
  if [ -x out/dist/lantern ]; then lantern=out/dist/lantern; else
    [ -x target/release/lantern ] || cargo build --quiet --release --workspace --bin lantern
    lantern=target/release/lantern
  fi
fi
lantern="$(cd "$(dirname "$lantern")" && pwd)/$(basename "$lantern")"
venv=bench/.venv-owner
if [ ! -x "$venv/bin/sphinx-build" ] || [ ! -x "$venv/bin/mkdocs" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r bench/owner-requirements.txt
fi
(cd bench && npm ci --no-audit --no-fund --silent)
pagefind="$root/bench/node_modules/.bin/pagefind"
work="$root/out/owner-bench"
rm -rf "$work"
mkdir -p "$work"

# Generator output, built once; each tool gets its own copy.
mkdir -p "$work/cargo-src"
cat > "$work/cargo-src/mkdocs.yml" <<YAML
site_name: Cargo
docs_dir: $(cd "$corpora/cargo-book/src" && pwd)
site_dir: $work/cargo-built
theme:
  name: mkdocs
YAML
"$venv/bin/mkdocs" build --quiet -f "$work/cargo-src/mkdocs.yml"
mkdir -p "$work/fastapi-src"
cat > "$work/fastapi-src/conf.py" <<'PY'
project = "FastAPI"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
html_theme = "alabaster"
suppress_warnings = ["myst.header", "myst.xref_missing", "toc.not_included",
                     "misc.highlighting_failure", "myst.directive_unknown"]
PY
"$venv/bin/sphinx-build" -q -b html -c "$work/fastapi-src" \
  "$corpora/fastapi-docs/docs/en/docs" "$work/fastapi-built" 2>/dev/null

seconds() {
  local t0 t1
  t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'
}
files() { find "$1" -type f | wc -l; }
mb() { du -sb "$1" | awk '{printf "%.1f", $1 / 1000000}'; }

# The large manual (#72): PostgreSQL 15's, as Debian ships it, when installed
# (bash bench/manual.sh installs it).
sites=(cargo:"Cargo book (MkDocs)" fastapi:"FastAPI (Sphinx)")
if [ -d /usr/share/doc/postgresql-doc-15/html ]; then
  cp -r /usr/share/doc/postgresql-doc-15/html "$work/postgres-built"
  sites+=(postgres:"PostgreSQL 15 manual (DocBook)")
fi

# One page changed: a sentence added to the site's front page.
change_one_page() {
  sed -i 's|</body>|<p>Changed for the benchmark: one new sentence on this page.</p></body>|' "$1/index.html"
}

rows=()
for site in "${sites[@]}"; do
  name=${site%%:*}; label=${site#*:}
  pages=$(find "$work/$name-built" -name '*.html' | wc -l)
  cp -r "$work/$name-built" "$work/$name-lantern"
  cp -r "$work/$name-built" "$work/$name-pagefind"
  cache="$work/$name.cache"
  cold=$(seconds "$lantern" build "$work/$name-lantern" --cache "$cache" --quiet)
  again=$(seconds "$lantern" build "$work/$name-lantern" --cache "$cache" --quiet)
  change_one_page "$work/$name-lantern"
  changed=$(seconds "$lantern" build "$work/$name-lantern" --cache "$cache" --quiet)
  full="$(files "$work/$name-lantern/lantern") files, $(mb "$work/$name-lantern/lantern") MB"
  quick_s=$(seconds "$lantern" build "$work/$name-lantern" --cache "$cache" --model quick --quiet)
  quick="$(files "$work/$name-lantern/lantern") files, $(mb "$work/$name-lantern/lantern") MB"
  pf=$(seconds "$pagefind" --site "$work/$name-pagefind" --quiet)
  pf_out="$(files "$work/$name-pagefind/pagefind") files, $(mb "$work/$name-pagefind/pagefind") MB"
  ratio() { awk -v a="$1" -v b="$pf" 'BEGIN { printf "%.1fx", a / b }'; }
  rows+=("| $label, $pages pages | $cold ($(ratio "$cold")) / $again / $changed ($(ratio "$changed")) / $quick_s | $full | $quick | $pf | $pf_out |")
done

echo
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); lantern: $lantern"
echo
echo "| site | Lantern index s: cold (x Pagefind) / next deploy / one page changed (x Pagefind) / --model quick | Lantern published | with --model quick | Pagefind index s | Pagefind published |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
pf_pkgs=$(cd "$work" && npm pack pagefind@1.6.0 @pagefind/linux-x64@1.6.0 --dry-run --json 2>/dev/null \
  | python3 -c "import json,sys; print(sum(x['size'] for x in json.load(sys.stdin)))")
echo "| package (download) | bytes |"
echo "|---|---|"
for f in out/dist/*.tgz out/dist/*.whl out/dist/*.tar.gz; do
  [ -f "$f" ] && echo "| Lantern $(basename "$f") | $(stat -c %s "$f") |"
done
echo "| Pagefind 1.6.0 npm (pagefind + @pagefind/linux-x64) | $pf_pkgs |"
