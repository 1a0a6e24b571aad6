#!/usr/bin/env python3
"""LanceDB's full-text search and hybrid search, with its defaults, on each of several corpora: the peer
`retrieval-bench --peers lancedb` runs beside memloop (same texts, same MiniLM vectors, same
queries).

    python3 benches/lancedb_rank.py IN.json OUT.json

IN: {"corpora": [{"docs": [{"key", "text", "vector"}], "queries": [{"text", "vector"}]}], "k": 10},
one table per corpus. OUT: {"corpora": [{"fts": [[key, ...] per query], "hybrid": [...],
"ingest_seconds"}], "lancedb": version, "ingest_seconds"}: the seconds to create each table
from the given vectors and build its FTS index.
The table gets a native FTS index on `text` (LanceDB's default tokenizer) and the vectors
as given; hybrid search uses LanceDB's default reranker (RRF). A query the FTS parser refuses
gets an empty ranking, as a caller would.

Environment: scripts/bench-venv.sh (lancedb, pyarrow, numpy from PyPI, pinned).
"""
import json
import sys
import tempfile
import time

import lancedb
import pyarrow as pa
from lancedb.index import FTS


def main():
    src, dst = sys.argv[1], sys.argv[2]
    data = json.load(open(src))
    out = [rank(c["docs"], c["queries"], data["k"]) for c in data["corpora"]]
    json.dump({"corpora": out, "lancedb": lancedb.__version__,
               "ingest_seconds": sum(c["ingest_seconds"] for c in out)}, open(dst, "w"))


def rank(docs, queries, k):
    """The FTS and hybrid rankings of `queries` over `docs`."""
    dim = len(docs[0]["vector"])
    table = pa.table({
        "key": [d["key"] for d in docs],
        "text": [d["text"] for d in docs],
        "vector": pa.array([d["vector"] for d in docs], type=pa.list_(pa.float32(), dim)),
    })
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        t = lancedb.connect(tmp).create_table("memories", data=table)
        t.create_index("text", config=FTS())
        ingest_seconds = time.perf_counter() - started
        fts, hybrid = [], []
        for q in queries:
            try:
                rows = t.search(q["text"], query_type="fts").limit(k).to_list()
            except Exception:  # the FTS query parser refuses some texts
                rows = []
            fts.append([r["key"] for r in rows])
            try:
                rows = (t.search(query_type="hybrid").vector(q["vector"]).text(q["text"])
                        .limit(k).to_list())
            except Exception:
                rows = t.search(q["vector"]).limit(k).to_list()
            hybrid.append([r["key"] for r in rows])
    return {"fts": fts, "hybrid": hybrid, "ingest_seconds": ingest_seconds}


if __name__ == "__main__":
    main()
