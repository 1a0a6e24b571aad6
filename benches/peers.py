#!/usr/bin/env python3
"""ANN peers on the same texmex files as `ann-bench`, printing the same JSON lines.

Runs hnswlib, faiss-cpu (IndexHNSWFlat and IndexHNSWSQ with 8-bit scalar quantisation, inner
product) and usearch (f32, bf16 and i8, inner product) with the same M / efConstruction, builds with --threads threads, saves, then opens and searches in a
fresh child process (so the open's RSS is its own) with one search thread, every query batch
handed to the library at once (the library's fastest single-thread path).

    python3 -m pip install numpy hnswlib==0.8.0 faiss-cpu usearch
    python3 benches/peers.py --base B.fvecs --query Q.fvecs --truth T.ivecs \
        --k 10 --m 16 --ef-construction 200 --ef 16,32,64,128,256 --threads 2 \
        [--systems hnswlib,faiss,faiss-sq8,usearch,usearch-bf16,usearch-i8]

`ann-bench --write-truth T.ivecs` writes the truth file both tools then share.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def read_vecs(path, dtype, limit=None):
    raw = np.fromfile(path, dtype=np.int32)
    dim = int(raw[0])
    rows = raw.reshape(-1, dim + 1)
    if limit:
        rows = rows[:limit]
    return np.ascontiguousarray(rows[:, 1:].view(dtype))


def unit(x):
    return np.ascontiguousarray(x / np.linalg.norm(x, axis=1, keepdims=True), dtype=np.float32)


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / (1024 * 1024)


def emit(obj):
    print(json.dumps(obj), flush=True)


class Hnswlib:
    name = "hnswlib"
    vectors = "f32"

    def build(self, base, m, efc, threads):
        import hnswlib

        self.index = hnswlib.Index(space="ip", dim=base.shape[1])
        self.index.init_index(max_elements=base.shape[0], ef_construction=efc, M=m)
        self.index.add_items(base, np.arange(base.shape[0]), num_threads=threads)

    def save(self, d):
        self.index.save_index(os.path.join(d, "hnswlib.bin"))

    def open(self, d, dim):
        import hnswlib

        self.index = hnswlib.Index(space="ip", dim=dim)
        self.index.load_index(os.path.join(d, "hnswlib.bin"))
        self.index.set_num_threads(1)

    def search(self, q, k, ef):
        self.index.set_ef(ef)
        labels, _ = self.index.knn_query(q, k=k, num_threads=1)
        return labels


class Faiss:
    name = "faiss"
    vectors = "f32"

    def make(self, dim, m):
        import faiss

        return faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT)

    def build(self, base, m, efc, threads):
        import faiss

        faiss.omp_set_num_threads(threads)
        self.index = self.make(base.shape[1], m)
        self.index.hnsw.efConstruction = efc
        if not self.index.is_trained:
            self.index.train(base)
        self.index.add(base)

    def save(self, d):
        import faiss

        faiss.write_index(self.index, os.path.join(d, "faiss.index"))

    def open(self, d, dim):
        import faiss

        faiss.omp_set_num_threads(1)
        path = os.path.join(d, "faiss.index")
        try:
            self.index = faiss.read_index(path, faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
            self.mode = "mmap"
        except RuntimeError:
            self.index = faiss.read_index(path)
            self.mode = "read"

    def search(self, q, k, ef):
        self.index.hnsw.efSearch = ef
        _, labels = self.index.search(q, k)
        return labels


class FaissSq8(Faiss):
    """IndexHNSWSQ: the graph over 8-bit scalar-quantised vectors (per-dimension ranges,
    trained on the base set); distances are computed on the codes, with no exact re-scoring."""

    name = "faiss-sq8"
    vectors = "int8"

    def make(self, dim, m):
        import faiss

        return faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_8bit, m, faiss.METRIC_INNER_PRODUCT)


class Usearch:
    name = "usearch"
    vectors = "f32"
    dtype = "f32"

    def build(self, base, m, efc, threads):
        from usearch.index import Index

        self.index = Index(ndim=base.shape[1], metric="ip", dtype=self.dtype, connectivity=m, expansion_add=efc)
        self.index.add(np.arange(base.shape[0]), base, threads=threads)

    def save(self, d):
        self.index.save(os.path.join(d, "usearch.index"))

    def open(self, d, dim):
        from usearch.index import Index

        self.index = Index.restore(os.path.join(d, "usearch.index"), view=True)

    def search(self, q, k, ef):
        self.index.expansion_search = ef
        return self.index.search(q, k, threads=1).keys


class UsearchBf16(Usearch):
    name = "usearch-bf16"
    vectors = "bf16"
    dtype = "bf16"


class UsearchI8(Usearch):
    name = "usearch-i8"
    vectors = "int8"
    dtype = "i8"


SYSTEMS = {s.name: s for s in (Hnswlib, Faiss, FaissSq8, Usearch, UsearchBf16, UsearchI8)}


def probe(a):
    queries = unit(read_vecs(a.query, np.float32, a.limit_query))
    truth = read_vecs(a.truth, np.int32, a.limit_query)[:, : a.k]
    system = SYSTEMS[a.probe]()
    before = rss_mb()
    t0 = time.perf_counter()
    system.open(a.index_dir, queries.shape[1])
    ms = (time.perf_counter() - t0) * 1e3
    rss = rss_mb() - before
    size = sum(os.path.getsize(os.path.join(a.index_dir, f)) for f in os.listdir(a.index_dir))
    line = {"system": a.probe, "vectors": system.vectors, "phase": "open", "ms": round(ms, 3), "rss_mb": round(rss, 2), "file_mb": round(size / 2**20, 1)}
    if hasattr(system, "mode"):
        line["mode"] = system.mode
    emit(line)
    system.search(queries, a.k, max(a.ef))  # warm-up, untimed
    for ef in a.ef:
        t0 = time.perf_counter()
        labels = system.search(queries, a.k, ef)
        secs = time.perf_counter() - t0
        found = sum(len(set(map(int, l)) & set(map(int, t))) for l, t in zip(labels, truth))
        emit({"system": a.probe, "vectors": system.vectors, "ef": ef, "recall": round(found / truth.size, 4), "qps": round(len(queries) / secs)})
    emit({"system": a.probe, "vectors": system.vectors, "phase": "searched", "searches": len(queries) * (1 + len(a.ef)),
          "rss_mb": round(rss_mb() - before, 2)})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True)
    ap.add_argument("--query", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--ef-construction", type=int, default=200)
    ap.add_argument("--ef", type=lambda s: [int(x) for x in s.split(",")], default=[16, 32, 64, 128, 256])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--systems", default="hnswlib,faiss,faiss-sq8,usearch,usearch-bf16,usearch-i8")
    ap.add_argument("--limit-query", type=int)
    ap.add_argument("--json", action="store_true", help="accepted for symmetry with ann-bench; output is always JSON")
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    ap.add_argument("--index-dir", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.probe:
        return probe(a)
    base = unit(read_vecs(a.base, np.float32))
    for name in a.systems.split(","):
        system = SYSTEMS[name]()
        t0 = time.perf_counter()
        system.build(base, a.m, a.ef_construction, a.threads)
        emit({"system": name, "vectors": SYSTEMS[name].vectors, "phase": "build", "seconds": round(time.perf_counter() - t0, 2), "threads": a.threads, "n": len(base)})
        with tempfile.TemporaryDirectory() as d:
            system.save(d)
            del system
            args = [sys.executable, __file__, "--probe", name, "--index-dir", d, "--base", a.base, "--query", a.query,
                    "--truth", a.truth, "--k", str(a.k), "--ef", ",".join(map(str, a.ef))]
            if a.limit_query:
                args += ["--limit-query", str(a.limit_query)]
            subprocess.run(args, check=True)


if __name__ == "__main__":
    main()
