#!/usr/bin/env python3
"""BENCHMARKS.md's charts, drawn with matplotlib from the benchmarks' JSON output in
docs/bench-data/ into docs/img/ (SVG):

    target/bench-venv/bin/python -m pip install matplotlib==3.10.7
    target/bench-venv/bin/python scripts/bench-charts.py

- ann.json: recall@10 / QPS points per system (ann-bench --json and benches/peers.py, as
  benches/summarize.py reads them) -> bench-ann.svg
- quality.json: one figure per system per data set (retrieval-bench --json) -> bench-quality.svg
- embedding-*.jsonl: embed-bench --json and benches/embed_peers.py lines -> bench-embedding.svg
"""
import glob
import json
import os
import statistics

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "docs", "bench-data")
IMG = os.path.join(ROOT, "docs", "img")
plt.rcParams["svg.hashsalt"] = "memloop"  # the same input draws the same file
plt.rcParams["font.size"] = 9


def ann():
    d = json.load(open(os.path.join(DATA, "ann.json")))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, points in d["curves"].items():
        style = "-o" if name.startswith("memloop") else "--."
        ax.plot([p[0] for p in points], [p[1] for p in points], style, label=name,
                linewidth=2 if name == "memloop int8" else 1, markersize=3)
    ax.set_yscale("log")
    ax.set_xlim(0.85, 1.0)
    ax.axvline(0.95, color="grey", linewidth=0.5)
    ax.axvline(0.99, color="grey", linewidth=0.5)
    ax.set_xlabel("recall@10")
    ax.set_ylabel("queries per second (1 thread, log)")
    ax.set_title("100k MiniLM vectors: recall against speed (up and right is better)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(IMG, "bench-ann.svg"))


def quality():
    d = json.load(open(os.path.join(DATA, "quality.json")))
    sets = list(d["sets"])
    systems = list(d["sets"][sets[0]])
    fig, ax = plt.subplots(figsize=(7, 3.8))
    width = 0.8 / len(systems)
    for i, system in enumerate(systems):
        xs = [j + i * width for j in range(len(sets))]
        ax.bar(xs, [d["sets"][s][system] for s in sets], width, label=system,
               hatch="//" if system.startswith("memloop rerank") else None)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(sets))])
    ax.set_xticklabels([s.replace(", ", "\n") for s in sets], fontsize=7)
    ax.set_ylim(0.4, 0.9)
    ax.set_ylabel("score (higher is better)")
    ax.set_title("Retrieval quality beside BM25 and LanceDB")
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(os.path.join(IMG, "bench-quality.svg"))


def embedding():
    rows = []
    for path in sorted(glob.glob(os.path.join(DATA, "embedding-*.jsonl"))):
        rows = [json.loads(line) for line in open(path)]
    # The newest file; lines without a corpus are the sentences (older files); candle's
    # encoder (the length-bucketing check) is not drawn.
    rows = [r for r in rows if r.get("kernels", "native") == "native" and r["threads"] == 2]
    name = lambda r: f"memloop {r['precision']}" if r["system"] == "memloop" else r["system"]
    corpora = list(dict.fromkeys(r.get("corpus", "sentences") for r in rows))
    systems = ["memloop f32", "onnxruntime", "memloop int8", "onnxruntime int8"]
    fig, axes = plt.subplots(1, len(corpora), figsize=(5 * len(corpora), 3.4), squeeze=False)
    for ax, corpus in zip(axes[0], corpora):
        mine = [r for r in rows if r.get("corpus", "sentences") == corpus]
        for k, key in enumerate(["batch1_per_s", "batch32_per_s"]):
            # The median of the rounds: one slow round (another process waking) moves a mean.
            values = [statistics.median(r[key] for r in mine if name(r) == s) for s in systems]
            ax.bar([i + k * 0.4 for i in range(len(systems))], values, 0.4,
                   label=f"batch {key[5:key.index('_')]}")
        ax.set_xticks([i + 0.2 for i in range(len(systems))])
        ax.set_xticklabels([s.replace(" ", "\n", 1) for s in systems], fontsize=8)
        ax.set_ylabel("texts per second")
        ax.set_title(f"{corpus}, 2 threads", fontsize=9)
        ax.legend(fontsize=8)
    fig.suptitle("all-MiniLM-L6-v2 on 2 cores (Sapphire Rapids): memloop beside onnxruntime",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(IMG, "bench-embedding.svg"))

if __name__ == "__main__":
    os.makedirs(IMG, exist_ok=True)
    ann()
    quality()
    embedding()
    print("wrote docs/img/bench-ann.svg, bench-quality.svg, bench-embedding.svg")
