#!/usr/bin/env python3
"""The whole store per memory beside LanceDB and Chroma, for the same texts and vectors.

Stores the first N texts (one per line) with their vectors (fvecs, row i for line i) in
LanceDB (a table of id, text and vector; then with its full-text index, as memloop keeps a
lexical index too) and in Chroma (a persistent collection, inner product), and reports the
bytes each directory holds on disk. memloop stores are measured the same way: pass their
directories (built by `engine-bench --dir D --sizes N`, f32 and `--index-vectors int8`).

    target/bench-venv/bin/python benches/store_size.py --texts base.txt --vectors base.fvecs \
        --n 100000 --work /tmp/sizes --memloop f32=/tmp/eb-f32/store-100000 \
        --memloop int8=/tmp/eb-int8/store-100000

Prints one JSON line per store: system, memories, bytes, bytes_per_memory.
"""
import argparse
import json
import os
import shutil

import numpy as np


def read_fvecs(path, n):
    raw = np.fromfile(path, dtype=np.int32)
    dim = int(raw[0])
    return raw.reshape(-1, dim + 1)[:n, 1:].view(np.float32).copy()


def disk_bytes(path):
    """Bytes the files under `path` occupy on disk (allocated blocks, as `du` counts them)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            total += os.stat(os.path.join(root, f)).st_blocks * 512
    return total


def emit(system, n, path):
    b = disk_bytes(path)
    print(json.dumps({"system": system, "memories": n, "bytes": b,
                      "bytes_per_memory": round(b / n, 1)}), flush=True)


def lancedb_store(texts, vecs, work):
    import lancedb
    import pyarrow as pa

    path = os.path.join(work, "lancedb")
    shutil.rmtree(path, ignore_errors=True)
    db = lancedb.connect(path)
    dim = vecs.shape[1]
    table = pa.table({
        "id": pa.array(np.arange(len(texts), dtype=np.int64)),
        "text": pa.array(texts),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), dim),
    })
    t = db.create_table("memories", table)
    emit("lancedb", len(texts), path)
    t.create_fts_index("text")
    emit("lancedb + full-text index", len(texts), path)


def chroma_store(texts, vecs, work):
    import chromadb

    path = os.path.join(work, "chroma")
    shutil.rmtree(path, ignore_errors=True)
    client = chromadb.PersistentClient(path=path)
    col = client.create_collection("memories", metadata={"hnsw:space": "ip"})
    step = 5000
    for i in range(0, len(texts), step):
        col.add(ids=[str(j) for j in range(i, min(i + step, len(texts)))],
                embeddings=vecs[i:i + step].tolist(), documents=texts[i:i + step])
    del col
    del client
    emit("chroma", len(texts), path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--texts", required=True)
    ap.add_argument("--vectors", required=True)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--work", required=True)
    ap.add_argument("--memloop", action="append", default=[],
                    help="LABEL=DIR of a memloop store holding the same N memories")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    with open(a.texts, encoding="utf-8") as f:
        texts = [line.rstrip("\n") for line in f if line.strip()][: a.n]
    vecs = read_fvecs(a.vectors, len(texts))
    for spec in a.memloop:
        label, path = spec.split("=", 1)
        emit(f"memloop, {label} index", len(texts), path)
    lancedb_store(texts, vecs, a.work)
    chroma_store(texts, vecs, a.work)


if __name__ == "__main__":
    main()
