#!/usr/bin/env bash
# The model-size study (#11): the shipped int8 model against the same model's weights in smaller
# formats (variant a: 4-bit and 3-bit groups, GPTQ, product-quantized word embeddings) and against
# a static query encoder fitted to it (variant b, bench/static_encoder.py, names static-*), in one
# run. For each: the packed weights' bytes (raw, gzip -9, brotli 11), query-vector cosine with
# the shipped model, and page-level vector and hybrid MRR@10 / hit@5 on every labelled set whose
# bundle is in out/ (as tests/run.sh builds them), chunks embedded by the shipped model.
# Needs python3 with pip; installs numpy & co. into out/.bench-venv once. About 4 minutes a
# variant on 2 cores.
#   bash bench/model_variants.sh [VARIANT...]      (default: all of both scripts)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
shared="${LANTERN_SHARED:-$root/../shared}"
export LANTERN_MODEL_DIR="$root/models/minilm"
bash models/fetch.sh
venv=out/.bench-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet numpy==2.4.6 scipy==1.17.1 safetensors==0.8.0 tokenizers==0.23.3 \
    onnxruntime==1.32.0 brotli==1.2.1
fi
cargo build --quiet --release --workspace --bin lantern
lantern=./target/release/lantern
work=out/model-variants
rm -f "$work/sizes.jsonl"
packed=() static=()
for v in "$@"; do case "$v" in static-*) static+=("$v") ;; *) packed+=("$v") ;; esac; done
if [ $# -eq 0 ] || [ ${#packed[@]} -gt 0 ]; then
  "$venv/bin/python" bench/model_variants.py "$shared" "${packed[@]}"
fi
if [ $# -eq 0 ] || [ ${#static[@]} -gt 0 ]; then
  "$venv/bin/python" bench/static_encoder.py "$shared" "${static[@]}"
fi

sets=()
[ -f out/site.lantern ] && sets+=("docs|out/site.lantern|golden/lantern-docs.jsonl")
[ -f out/fastapi.lantern ] && sets+=("fastapi|out/fastapi.lantern|golden/fastapi.jsonl")
[ -f out/rust-book.lantern ] && sets+=("rust-book|out/rust-book.lantern|$shared/golden/rust-book.jsonl")
results="$work/results.jsonl"
: >"$results"
for v in model $(python3 -c "import json,sys; [print(json.loads(l)['variant']) for l in open(sys.argv[1])]" "$work/sizes.jsonl"); do
  for s in "${sets[@]}"; do
    IFS='|' read -r name bundle golden <<<"$s"
    given=()
    [ "$v" = model ] || given=(--query-vectors "$work/$v.json")
    $lantern eval --bundle "$bundle" --golden "$golden" "${given[@]}" --json "$work/e.json" >/dev/null
    python3 - "$work/e.json" "$v" "$name" >>"$results" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
row = {"variant": sys.argv[2], "set": sys.argv[3]}
for mode in ("vector", "hybrid"):
    m = r[mode]
    for group in ("all", "en"):
        if group in m:
            row[f"{mode}_{group}"] = [m[group]["mrr10"], m[group]["hit5"]]
row["auroc"] = r.get("calibration", {}).get("auroc")
print(json.dumps(row))
EOF
  done
done
python3 - "$work/sizes.jsonl" "$results" <<'EOF'
import json, sys
sizes = {s["variant"]: s for s in map(json.loads, open(sys.argv[1]))}
rows = [json.loads(l) for l in open(sys.argv[2])]
sets = sorted({r["set"] for r in rows}, key=lambda s: ["docs", "rust-book", "fastapi"].index(s))
print("| variant | weights raw / gzip / brotli KiB | query cosine with the model, mean / min | "
      + " | ".join(f"{s} vector / hybrid MRR@10 (hit@5)" for s in sets) + " | Rust book English hybrid | abstention AUROC (docs, FastAPI) |")
print("|---" * (5 + len(sets)) + "|")
for v in dict.fromkeys(r["variant"] for r in rows):
    if v == "model":
        head = "int8 model (shipped) | 22387.2 / 20446.7 / - | 1 / 1"
    else:
        z = sizes[v]
        head = f"{v} | {z['raw']/1024:.1f} / {z['gzip']/1024:.1f} / {z['br']/1024:.1f} | {z['cos_mean']:.3f} / {z['cos_min']:.3f}"
    cells, en, auroc = [], "-", []
    for s in sets:
        r = next(r for r in rows if r["variant"] == v and r["set"] == s)
        cells.append(f"{r['vector_all'][0]:.3f} / {r['hybrid_all'][0]:.3f} ({r['hybrid_all'][1]:.3f})")
        if "hybrid_en" in r:
            en = f"{r['hybrid_en'][0]:.3f} ({r['hybrid_en'][1]:.3f})"
        if r.get("auroc") is not None:
            auroc.append(f"{r['auroc']:.3f}")
    print(f"| {head} | " + " | ".join(cells) + f" | {en} | {' / '.join(auroc) or '-'} |")
EOF
