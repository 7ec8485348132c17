#!/usr/bin/env bash
# The query-embedding study (#11): the model against query tables of several ranks, in one run,
# on every labelled set whose docs are here. For each variant: what the reader downloads to
# embed queries (raw, gzip -9, brotli 11 as `lantern site` precompresses), the table's mean
# cosine with the model on held-out site texts, and page-level vector and hybrid MRR@10 and
# hit@5 per set (English questions of the Rust book apart). Browser timings: bench/browser.mjs.
#   bash bench/query_table.sh [RANKS...]      (default: 64 128 256)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
shared="${LANTERN_SHARED:-$root/../shared}"
ranks=("${@:-64 128 256}")
read -r -a ranks <<<"${ranks[*]}"
cargo build --quiet --release --workspace --bin lantern
lantern=./target/release/lantern
work=out/study
mkdir -p "$work"

sets=("docs|site/docs|golden/lantern-docs.jsonl")
[ -d "$shared/corpora/rust-book/src" ] && sets+=("rust-book|$shared/corpora/rust-book/src|$shared/golden/rust-book.jsonl")
[ -d "$shared/corpora/fastapi-docs/docs/en/docs" ] && sets+=("fastapi|$shared/corpora/fastapi-docs/docs/en/docs|golden/fastapi.jsonl")

results="$work/results.jsonl"
: >"$results"
for rank in "${ranks[@]}"; do
  for s in "${sets[@]}"; do
    IFS='|' read -r name docs golden <<<"$s"
    out="$work/$name-$rank.lantern"
    cfg="$work/$name-$rank.toml"
    # The docs folder's own lantern.toml, if any, with the rank set.
    { [ -f "$docs/lantern.toml" ] && grep -v '^query_table_rank' "$docs/lantern.toml" || true
      echo "query_table_rank = $rank"; } >"$cfg"
    $lantern build "$docs" --out "$out" --config "$cfg" --cache "$work/$name.cache" >"$work/$name-$rank.log" 2>&1 \
      || { cat "$work/$name-$rank.log" >&2; exit 1; }
    fit="$(grep -o 'held-out cosine [0-9.]*' "$work/$name-$rank.log" | awk '{print $3}')"
    for enc in table model; do
      [ "$enc" = model ] && [ "$rank" != "${ranks[0]}" ] && continue
      $lantern eval --bundle "$out" --golden "$golden" --query-encoder "$enc" --json "$work/e.json" >/dev/null
      python3 - "$work/e.json" "$name" "$enc" "$rank" "$out" "${fit:-}" >>"$results" <<'EOF'
import gzip, json, os, sys, zlib
path, name, enc, rank, bundle, fit = sys.argv[1:7]
d = json.load(open(path))
row = {"set": name, "encoder": enc, "rank": int(rank) if enc == "table" else None,
       "fit_cosine": float(fit) if enc == "table" and fit else None}
for mode in ("vector", "hybrid"):
    for typ, m in d[mode].items():
        if typ in ("all", "en"):
            row[f"{mode}_{typ}"] = [round(m["mrr10"], 3), round(m["hit5"], 3)]
if enc == "table":
    raw = open(bundle + ".query", "rb").read()
    row["bytes"] = [len(raw), len(gzip.compress(raw, 9))]
print(json.dumps(row))
EOF
    done
  done
done

# Brotli sizes as the site build writes them (Node's zlib, quality 11).
node -e '
const fs = require("fs"), zlib = require("zlib");
const rows = fs.readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
for (const r of rows) if (r.encoder === "table") {
  const raw = fs.readFileSync(`out/study/${r.set}-${r.rank}.lantern.query`);
  r.bytes.push(zlib.brotliCompressSync(raw, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length);
}
const kib = (b) => (b / 1024).toFixed(1);
const onnx = fs.readFileSync("models/minilm/model.onnx");
const pkg = "out/web/lantern/pkg";
// The embedder module is named by its content (lantern_embed_wasm_bg-<hash>.wasm).
const wasm = (fs.existsSync(pkg) ? fs.readdirSync(pkg) : [])
  .filter((f) => /^lantern_embed_wasm_bg(-[0-9a-f]{12})?\.wasm$/.test(f)).map((f) => `${pkg}/${f}`)[0];
const model = `model ${kib(onnx.length)} / ${kib(zlib.gzipSync(onnx, { level: 9 }).length)} KiB` +
  (wasm && fs.existsSync(`${wasm}.br`) ? ` + embedder wasm ${kib(fs.statSync(`${wasm}.br`).size)} KiB br` : "");
console.log("| variant | set | query-side download (raw / gzip / brotli KiB) | fit cosine | vector MRR@10 / hit@5 | hybrid MRR@10 / hit@5 | hybrid, English questions |");
console.log("|---|---|---|---|---|---|---|");
for (const r of rows) {
  const v = r.encoder === "model" ? "model (int8 MiniLM-L6)" : `query table, rank ${r.rank}`;
  const bytes = r.encoder === "model" ? model : r.bytes.map(kib).join(" / ");
  const f = (x) => x ? `${x[0].toFixed(3)} / ${x[1].toFixed(3)}` : "-";
  console.log(`| ${v} | ${r.set} | ${bytes} | ${r.fit_cosine ?? "-"} | ${f(r.vector_all)} | ${f(r.hybrid_all)} | ${f(r.hybrid_en)} |`);
}
' "$results"
