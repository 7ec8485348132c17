#!/usr/bin/env python3
"""Writes N distinct replicas of a markdown docs folder, for the scale run (bench/scale.sh).

Replica 0 is the original. Replica r > 0 drops a different quarter of each paragraph's
sentences (chosen by a hash of r, the file, the paragraph and the sentence) and names its
pages "(volume r)", so its chunks embed to different vectors and its pages are told apart,
while code, headings and the vocabulary stay those of real docs.

With --identical every replica is an exact copy (only the paths differ): chunks then embed to
the same vectors, so a build reuses the embedding cache and 64 copies build in minutes, where
64 distinct replicas take hours of embedding on two cores.

usage: replicate.py SRC OUT N [--identical]
"""
import hashlib
import os
import re
import shutil
import sys

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z_`*\[])")


def keep(r, path, para, sent):
    h = hashlib.blake2b(f"{r}|{path}|{para}|{sent}".encode(), digest_size=2).digest()
    return h[0] % 4 != 0


def replicate(text, r, path, identical=False):
    if r == 0 or identical:
        return text
    out, para, fence, first_heading = [], [], False, True

    def flush():
        nonlocal para
        if para:
            n = len(out)
            joined = " ".join(l.strip() for l in para)
            sents = SENTENCE.split(joined)
            kept = [s for i, s in enumerate(sents) if keep(r, path, n, i)] or sents[:1]
            out.append(" ".join(kept) + "\n")
            para = []

    for line in text.splitlines(keepends=True):
        s = line.strip()
        if s.startswith("```") or s.startswith("~~~"):
            flush()
            fence = not fence
            out.append(line)
        elif fence:
            out.append(line)
        elif s.startswith("#"):
            flush()
            if first_heading:
                line = line.rstrip("\n") + f" (volume {r})\n"
                first_heading = False
            out.append(line)
        elif not s or s[0] in "|<>-*+" or re.match(r"\d+\.\s", s) or line.startswith("    "):
            # Blank lines, tables, HTML, quotes, lists and indented code are kept as written.
            flush()
            out.append(line)
        else:
            para.append(line)
    flush()
    return "".join(out)


def main():
    src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    identical = "--identical" in sys.argv[4:]
    if os.path.exists(dst):
        shutil.rmtree(dst)
    for r in range(n):
        for dirpath, _, files in os.walk(src):
            rel = os.path.relpath(dirpath, src)
            target = os.path.join(dst, f"volume{r}", rel)
            os.makedirs(target, exist_ok=True)
            for f in files:
                p = os.path.join(dirpath, f)
                if not f.endswith(".md"):
                    continue
                with open(p, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                with open(os.path.join(target, f), "w", encoding="utf-8") as fh:
                    fh.write(replicate(text, r, os.path.join(rel, f), identical))


if __name__ == "__main__":
    main()
