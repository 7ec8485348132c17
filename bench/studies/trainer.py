"""Training for contextual_table.py: the table's rows, and optionally one small attention layer
over the words in order, fitted by cosine to the model's vectors with JAX on the CPU."""

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

L = 24  # words a training text has at most (query_fit.rs MAX_WORDS)
K = 4  # terms a word expands to at most


def pack(seqs):
    n = len(seqs)
    ids = np.zeros((n, L, K), np.int32)
    wts = np.zeros((n, L, K), np.float32)
    mask = np.zeros((n, L), np.float32)
    for i, units in enumerate(seqs):
        for j, u in enumerate(units[:L]):
            mask[i, j] = 1
            for k, (t, w) in enumerate(u[:K]):
                ids[i, j, k] = t
                wts[i, j, k] = w
    return ids, wts, mask


def init(kind, A, rank, heads, hd, seed=0):
    p = {"A": jnp.asarray(A, jnp.float32)}
    if kind == "ctx":
        k = jax.random.split(jax.random.PRNGKey(seed), 4)
        s = 1 / np.sqrt(rank)
        p["pos"] = jnp.zeros((L, rank))
        p["wq"] = jax.random.normal(k[0], (rank, heads * hd)) * s
        p["wk"] = jax.random.normal(k[1], (rank, heads * hd)) * s
        p["wv"] = jax.random.normal(k[2], (rank, heads * hd)) * s
        p["wo"] = jnp.zeros((heads * hd, rank))
    return p


def make_encode(kind, heads, hd, B):
    B = jnp.asarray(B, jnp.float32)

    def encode(p, ids, wts, mask):
        x = (p["A"][ids] * wts[..., None]).sum(2)  # n, L, rank
        if kind == "ctx":
            # Rows are small next to their scale in the basis: attention reads them normalized.
            xn = x * jax.lax.rsqrt((x * x).sum(-1, keepdims=True) + 1e-8) + p["pos"][None]
            n = x.shape[0]
            q = (xn @ p["wq"]).reshape(n, L, heads, hd)
            k = (xn @ p["wk"]).reshape(n, L, heads, hd)
            v = (x @ p["wv"]).reshape(n, L, heads, hd)
            s = jnp.einsum("nlhd,nmhd->nhlm", q, k) / np.sqrt(hd)
            s = jnp.where(mask[:, None, None, :] > 0, s, -1e9)
            a = jax.nn.softmax(s, axis=-1)
            o = jnp.einsum("nhlm,nmhd->nlhd", a, v).reshape(n, L, heads * hd)
            x = x + o @ p["wo"]
        cnt = jnp.maximum(mask.sum(1, keepdims=True), 1)
        pooled = (x * mask[..., None]).sum(1) / cnt
        y = pooled @ B
        return y * jax.lax.rsqrt((y * y).sum(-1, keepdims=True) + 1e-12)

    return encode


def train(kind, texts, Y, A, B, held, qs, args):
    rank = A.shape[1]
    ids, wts, mask = pack(texts)
    Yj = np.asarray(Y, np.float32)
    tr = np.where(~held)[0]
    ho = np.where(held)[0]
    encode = make_encode(kind, args.heads, args.head_dim, B)
    p = init(kind, A, rank, args.heads, args.head_dim)
    lr_rows = args.lr * (0.3 if kind == "ctx" else 1.0)
    labels = {k: ("rows" if k == "A" else "ctx") for k in p}
    opt = optax.multi_transform(
        {"rows": optax.adam(lr_rows), "ctx": optax.adam(args.lr)}, labels
    )
    state = opt.init(p)

    def loss(p, i, w, m, y):
        v = encode(p, i, w, m)
        return 1 - (v * y).sum(-1).mean()

    @jax.jit
    def step(p, state, i, w, m, y):
        l, g = jax.value_and_grad(loss)(p, i, w, m, y)
        u, state = opt.update(g, state, p)
        return optax.apply_updates(p, u), state, l

    enc = jax.jit(encode)

    def heldcos(p):
        v = np.asarray(enc(p, ids[ho], wts[ho], mask[ho]))
        return float((v * Yj[ho]).sum(1).mean())

    rng = np.random.default_rng(0)
    bs = 256
    t0 = time.time()
    print(f"{kind}: start held-out cosine {heldcos(p):.4f}", file=sys.stderr)
    for ep in range(args.epochs):
        perm = rng.permutation(tr)
        tot = 0.0
        for b in range(0, len(perm) - bs + 1, bs):
            j = perm[b : b + bs]
            p, state, l = step(p, state, ids[j], wts[j], mask[j], Yj[j])
            tot += float(l)
        print(
            f"{kind}: epoch {ep + 1} train loss {tot / (len(perm) // bs):.4f} "
            f"held-out cosine {heldcos(p):.4f} ({time.time() - t0:.0f}s)",
            file=sys.stderr,
        )
    qi, qw, qm = pack(qs)

    def encode_q(_seqs):
        v = np.array(enc(p, qi, qw, qm))
        v[qm.sum(1) == 0] = 0
        return v

    return {"encode": encode_q, "heldcos": heldcos(p), "params": p}
