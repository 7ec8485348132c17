"""Writes builder/tests/fixtures/reference_vectors.json: embeddings of a few sentences computed
independently of Lantern (onnxruntime on the original, unprepared int8 model; the Python
`tokenizers` package), against which the Rust embedder's parity test checks cosine >= 0.999.

Run once after `bash models/fetch.sh`:  pip install onnxruntime==1.32.0 tokenizers numpy
                                        python3 models/reference_vectors.py
"""
import json, pathlib
import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

here = pathlib.Path(__file__).parent
SENTENCES = [
    "How do I install Lantern?",
    "The builder cuts each page into heading-aware chunks.",
    "Vectors are quantized to int8 with a scale chosen from the data.",
    "fn main() { println!(\"hello\"); }",
    "Wie funktioniert die Suche offline?",
    "所有权规则",
    "a " * 400,  # longer than the 256-token limit: exercises truncation
]

tok = Tokenizer.from_file(str(here / "cache" / "tokenizer.json"))
tok.no_padding()
tok.enable_truncation(256)
sess = ort.InferenceSession(str(here / "cache" / "model.int8.onnx"))
out = []
for s in SENTENCES:
    enc = tok.encode(s)
    feed = {
        "input_ids": np.array([enc.ids], dtype=np.int64),
        "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
        "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
    }
    hidden = sess.run(None, feed)[0][0]
    mask = np.array(enc.attention_mask, dtype=np.float32)[:, None]
    v = (hidden * mask).sum(0) / mask.sum()
    v = v / np.linalg.norm(v)
    out.append({"text": s, "ids": enc.ids, "vector": [round(float(x), 7) for x in v]})
dest = here.parent / "builder" / "tests" / "fixtures" / "reference_vectors.json"
dest.write_text(json.dumps({"produced_by": "models/reference_vectors.py (onnxruntime %s)" % ort.__version__, "cases": out}))
print("wrote", dest)
