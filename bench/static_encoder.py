"""The query-encoder study (#11, variant b): an asymmetric static encoder. Sections stay embedded by
the shipped model; a question is embedded as the mean of one table vector per word piece, no
transformer at query time. The table is fitted by ridge least squares so that pooled table
vectors approximate the shipped model's embedding of short texts cut from documentation,
starting from (and shrunk towards) each word piece's own embedding by the model.

Leave one corpus out: the table that embeds a set's questions is fitted only on the other
corpora's text (Lantern's docs, FastAPI, the Rust book, the Cargo book), so no set is fitted on
its own site (static-f16, static-pq48: a table that could ship with the model); static-own adds
the site's own text, twice weighted (what `lantern build` could fit at build time). Labelled
questions are never fitted on. Writes out/model-variants/<variant>.json
(question -> vector) and a row of out/model-variants/sizes.jsonl, which bench/model_variants.sh
then searches in the same bundles as the other variants.
  python bench/static_encoder.py SHARED [static-f16] [static-pq48] [static-own]
"""
import gzip, json, pathlib, re, sys, time
import brotli, numpy as np, onnxruntime as ort, scipy.sparse as sparse
from tokenizers import Tokenizer

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from model_variants import OUT, ROOT, SHARED, pq  # noqa: E402

CAP = 20000  # texts per corpus
LAMBDA = 0.01  # ridge strength towards the prior
tok = Tokenizer.from_file(str(ROOT / 'models' / 'minilm' / 'tokenizer.json'))
tok.no_padding(); tok.enable_truncation(128)
opts = ort.SessionOptions(); opts.intra_op_num_threads = 2
sess = ort.InferenceSession(str(ROOT / 'models' / 'minilm' / 'model.onnx'), opts)
INPUTS = [i.name for i in sess.get_inputs()]
VOCAB = tok.get_vocab_size()
CORPORA = {
    'docs': ([ROOT / 'site' / 'docs'], ROOT / 'golden' / 'lantern-docs.jsonl'),
    'fastapi': ([SHARED / 'corpora' / 'fastapi-docs' / 'docs' / 'en' / 'docs'], ROOT / 'golden' / 'fastapi.jsonl'),
    'rust-book': ([SHARED / 'corpora' / 'rust-book' / 'src'], SHARED / 'golden' / 'rust-book.jsonl'),
    'cargo-book': ([SHARED / 'corpora' / 'cargo-book' / 'src'], None),
}

def embed(seqs, bs=64):
    """The shipped model's mean-pooled, normalized vectors, batched by length."""
    order = np.argsort([len(s) for s in seqs]); out = np.zeros((len(seqs), 384), np.float32)
    for i in range(0, len(seqs), bs):
        idx = order[i:i + bs]; width = max(len(seqs[j]) for j in idx)
        ids = np.zeros((len(idx), width), np.int64); mask = np.zeros_like(ids)
        for r, j in enumerate(idx):
            ids[r, :len(seqs[j])] = seqs[j]; mask[r, :len(seqs[j])] = 1
        feed = {'input_ids': ids, 'attention_mask': mask, 'token_type_ids': np.zeros_like(ids)}
        h = sess.run(None, {k: v for k, v in feed.items() if k in INPUTS})[0]
        v = (h * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        out[idx] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out

def plain(markdown):
    t = re.sub(r'```.*?```', ' ', markdown, flags=re.S)
    t = re.sub(r'\{\*.*?\*\}|<[^>]+>', ' ', t)
    t = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', t)
    return re.sub(r'[`*_>#|]', ' ', t)

def texts(dirs, seed=0):
    """Headings, sentences (24 words at most) and 2-8 word windows: query-sized texts."""
    rng = np.random.default_rng(seed); out = []
    for d in dirs:
        for f in sorted(pathlib.Path(d).rglob('*.md')):
            md = f.read_text(errors='replace')
            out += [' '.join(plain(h).split()) for h in re.findall(r'^#+\s+(.+)$', md, flags=re.M)]
            for para in re.split(r'\n\s*\n', plain(md)):
                for s in re.split(r'(?<=[.?!:])\s+', ' '.join(para.split())):
                    w = s.split()
                    if len(w) < 3:
                        continue
                    out.append(' '.join(w[:24]))
                    for _ in range(2):
                        n = int(rng.integers(2, 9))
                        if len(w) > n:
                            a = int(rng.integers(0, len(w) - n)); out.append(' '.join(w[a:a + n]))
    out = sorted(set(o for o in out if o))
    rng.shuffle(out)
    return out[:CAP]

def design(seqs):
    """Row i: word-piece counts of text i over its length (mean pooling as a linear map)."""
    rows, cols, vals = [], [], []
    for i, s in enumerate(seqs):
        u, c = np.unique(s, return_counts=True)
        rows += [i] * len(u); cols += list(u); vals += list(c / len(s))
    return sparse.csr_matrix((vals, (rows, cols)), shape=(len(seqs), VOCAB), dtype=np.float64)

def fit(A, Y, V0, lam=LAMBDA, iters=100):
    """argmin ||A V - Y||^2 + lam ||V - V0||^2 by conjugate gradients, one step size per column."""
    At = A.T.tocsr()
    op = lambda V: At @ (A @ V) + lam * V
    V = V0.astype(np.float64).copy()
    r = At @ Y + lam * V0 - op(V); p = r.copy(); rs = (r * r).sum(0)
    for _ in range(iters):
        Ap = op(p); a = rs / ((p * Ap).sum(0) + 1e-30)
        V += p * a; r -= Ap * a; rn = (r * r).sum(0)
        if np.sqrt(rn.max()) < 1e-6:
            break
        p = r + p * (rn / (rs + 1e-30)); rs = rn
    return V.astype(np.float32)

def pooled(V, q):
    v = V[tok.encode(q).ids].mean(0)
    return v / (np.linalg.norm(v) + 1e-12)

if __name__ == '__main__':
    want = sys.argv[2:] or ['static-f16', 'static-pq48', 'static-own']
    OUT.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    V0 = embed([[tok.token_to_id('[CLS]'), t, tok.token_to_id('[SEP]')] for t in range(VOCAB)], bs=512)
    data = {}
    for name, (dirs, golden) in CORPORA.items():
        S = texts(dirs)
        qs = [json.loads(l)['query'] for l in open(golden) if l.strip()] if golden and golden.exists() else []
        data[name] = ([tok.encode(s).ids for s in S], embed([tok.encode(s).ids for s in S]), qs)
        print(f'{name}: {len(S)} texts embedded ({time.time() - t0:.0f} s)', flush=True)
    vecs = {v: {} for v in want}; cos = {v: [] for v in want}; tables = {}
    for name, (_, _, qs) in data.items():
        if not qs:
            continue
        others = [o for o in data if o != name]
        A = design(sum((data[o][0] for o in others), []))
        V = fit(A, np.concatenate([data[o][1] for o in others]), V0)
        ref = embed([tok.encode(q).ids for q in qs])
        if 'static-own' in want:
            own = fit(design(data[name][0] * 2 + sum((data[o][0] for o in others), [])),
                      np.concatenate([data[name][1]] * 2 + [data[o][1] for o in others]), V0)
        for v in want:
            if v == 'static-own':
                for q, r in zip(qs, ref):
                    vecs[v][q] = pooled(own, q); cos[v].append(float(vecs[v][q] @ r))
                tables[v] = own.astype(np.float16).tobytes()
                continue
            T, raw = pq(V, 48) if v == 'static-pq48' else (V, V.astype(np.float16).tobytes())
            tables[v] = raw  # sizes: the last fitted table (all are the same shape)
            for q, r in zip(qs, ref):
                vecs[v][q] = pooled(T, q); cos[v].append(float(vecs[v][q] @ r))
        print(f'{name}: table fitted on {", ".join(others)} ({time.time() - t0:.0f} s)', flush=True)
    for v in want:
        (OUT / f'{v}.json').write_text(json.dumps({q: [round(float(x), 6) for x in e] for q, e in vecs[v].items()}))
        raw = tables[v]; c = np.array(cos[v])
        row = {'variant': v, 'raw': len(raw), 'gzip': len(gzip.compress(raw, 9)),
               'br': len(brotli.compress(raw, quality=11, lgwin=24)), 'cos_mean': float(c.mean()), 'cos_min': float(c.min())}
        with open(OUT / 'sizes.jsonl', 'a') as f:
            f.write(json.dumps(row) + '\n')
        print(json.dumps(row), flush=True)
