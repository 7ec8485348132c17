"""A study for #51: does reading the question's words in order close the query table's gap?

Reads what `crates/indexer/examples/query_export.rs` wrote for one bundle, fits the product's
bag-of-words table (ridge towards each term's word vector, in the top principal directions of
the texts' vectors), then trains on the same texts, by cosine to the model's vectors:
  bag-cos  the same rows, tuned by cosine instead of least squares;
  ctx      the rows plus one small attention layer over the words in order (positions, a few
           heads, a zero-started output so training starts from the bag).
Judged on the labelled questions by vector search alone, page level (a page scores its best
chunk): MRR@10 and hit@5, next to the model's own vectors of the questions.

  python3 bench/studies/contextual_table.py EXPORT_DIR GOLDEN [--epochs N] [--heads H] [--save DIR]

With --save, each encoder's vectors of the questions go to DIR/NAME.json, judged as the product
searches with them by `lantern eval --bundle B --golden G --query-encoder table
--query-vectors DIR/NAME.json` (the table's calibration puts their cosines on the model's scale).
"""

import argparse
import json
import sys
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spl

DIM = 384


def read_units(path):
    seqs = []
    for line in open(path):
        line = line.rstrip("\n")
        units = []
        if line:
            for u in line.split("|"):
                units.append([(int(a), float(b)) for a, b in (p.split(":") for p in u.split(","))])
        seqs.append(units)
    return seqs


def read_f32(path, rows):
    a = np.fromfile(path, dtype="<f4")
    return a.reshape(rows, -1)


def bag_matrix(seqs, terms):
    """Pooled terms as the product pools them: each word 1/n, shared among its terms."""
    r, c, v = [], [], []
    for i, units in enumerate(seqs):
        if not units:
            continue
        n = len(units)
        for u in units:
            for t, w in u:
                r.append(i), c.append(t), v.append(w / n)
    return sp.csr_matrix((v, (r, c)), shape=(len(seqs), terms), dtype=np.float64)


def fit_ridge(X, Z, P, ridge):
    diag = np.asarray(X.multiply(X).sum(axis=0)).ravel()
    used = max(1, int((diag > 0).sum()))
    lam = ridge * diag.sum() / used
    M = (X.T @ X).tocsc() + lam * sp.identity(X.shape[1], format="csc")
    rhs = X.T @ Z + lam * P
    A = np.empty_like(P)
    for k in range(Z.shape[1]):
        A[:, k], _ = spl.cg(M, rhs[:, k], x0=P[:, k], maxiter=60, rtol=1e-5)
    return A


def normalize(v):
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, 1e-9)


def page_metrics(qv, chunks, chunk_pages, golden, page_index):
    """Vector search alone, page level: MRR@10 and hit@5 over answerable questions."""
    sims = qv @ chunks.T
    npages = len(page_index)
    mrr, hit5, n = 0.0, 0.0, 0
    for i, g in enumerate(golden):
        exp = g.get("expected") or []
        exp = [exp] if isinstance(exp, str) else exp
        if not exp:
            continue
        n += 1
        if not np.isfinite(qv[i]).all() or np.linalg.norm(qv[i]) == 0:
            continue
        best = np.full(npages, -2.0)
        np.maximum.at(best, chunk_pages, sims[i])
        order = np.argsort(-best)[:10]
        srcs = [page_index[p] for p in order]
        rank = next((k + 1 for k, s in enumerate(srcs) if any(matches(s, e) for e in exp)), None)
        if rank:
            mrr += 1 / rank
            hit5 += rank <= 5
    return mrr / max(n, 1), hit5 / max(n, 1)


def matches(source, expected):
    def stem(p):
        for ext in (".md", ".markdown", ".html", ".htm"):
            if p.endswith(ext):
                return p[: -len(ext)]
        return p

    s, e = stem(source), stem(expected)
    return e == s or e.endswith("/" + s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("export")
    ap.add_argument("golden")
    ap.add_argument("--rank", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--ridge", type=float, default=0.3)
    ap.add_argument("--variants", default="bag-cos,ctx")
    ap.add_argument("--save", default="")
    args = ap.parse_args()
    d = args.export
    texts = read_units(f"{d}/texts.txt")
    Y = read_f32(f"{d}/texts.f32", len(texts))
    terms = [l.rstrip("\n") for l in open(f"{d}/terms.txt")]
    T = len(terms)
    TV = read_f32(f"{d}/terms.f32", T)
    chunk_pages_src = [l.rstrip("\n") for l in open(f"{d}/chunks.txt")]
    C = read_f32(f"{d}/chunks.f32", len(chunk_pages_src))
    page_index = sorted(set(chunk_pages_src))
    pid = {p: i for i, p in enumerate(page_index)}
    chunk_pages = np.array([pid[p] for p in chunk_pages_src])
    qs = read_units(f"{d}/questions.txt")
    QM = read_f32(f"{d}/questions.f32", len(qs))
    golden = [json.loads(l) for l in open(args.golden) if l.strip()]
    assert len(golden) == len(qs)

    keep = [i for i, s in enumerate(texts) if s]
    texts = [texts[i] for i in keep]
    Y = Y[keep]
    # The basis: top principal directions of the targets, uncentred.
    w, V = np.linalg.eigh(Y.T.astype(np.float64) @ Y)
    B = V[:, np.argsort(-w)[: args.rank]].T  # rank x DIM
    Z = Y @ B.T
    P = TV @ B.T
    X = bag_matrix(texts, T)
    t0 = time.time()
    A = fit_ridge(X, Z, P, args.ridge)
    print(f"ridge fit {time.time() - t0:.1f}s, {len(texts)} texts, {T} terms", file=sys.stderr)

    out = {"set": args.export}
    m = page_metrics(normalize(QM), C, chunk_pages, golden, page_index)
    out["model"] = m
    Xq = bag_matrix(qs, T)
    qbag = normalize(np.asarray(Xq @ A) @ B)
    out["bag"] = page_metrics(qbag, C, chunk_pages, golden, page_index)

    def save(name, qv):
        """Question vectors for `lantern eval --query-encoder table --query-vectors`."""
        if args.save:
            vectors = {
                g["query"]: ([float(x) for x in v] if np.linalg.norm(v) > 0 else None)
                for g, v in zip(golden, qv)
            }
            json.dump(vectors, open(f"{args.save}/{name}.json", "w"))

    save("bag", qbag)
    held = np.arange(len(texts)) % 10 == 9
    tb = normalize(np.asarray(X @ A) @ B)
    out["bag_heldcos"] = float((tb[held] * Y[held]).sum(1).mean())

    variants = [v for v in args.variants.split(",") if v]
    if variants:
        import trainer

        for v in variants:
            res = trainer.train(v, texts, Y, A, B, held, qs, args)
            qv = res["encode"](qs)
            out[v] = page_metrics(qv, C, chunk_pages, golden, page_index)
            out[v + "_heldcos"] = res["heldcos"]
            save(v, qv)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
