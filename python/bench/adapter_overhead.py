"""What the framework adapters add to a memloop call, same query, same run, interleaved:

- LangGraph `MemloopStore.search(prefix, query=q, limit=10)` beside the engine call it makes
  (`Memory.recall(q, k=10, tags=[prefix], strategy="rerank")`);
- the same without a query (`search(prefix, limit=10)` beside `Memory.list(tags=..., limit=10)`);
- LangChain `MemloopVectorStore.similarity_search(q, k=10)` beside `Memory.recall(q, k=10, ...)`.

Real default model. Needs the langgraph and langchain extras:

    python python/bench/adapter_overhead.py [ITEMS] [QUERIES]
"""

import json
import statistics
import sys
import tempfile
import time

from memloop import Memory
from memloop.integrations.langchain import MemloopVectorStore
from memloop.integrations.langgraph import MemloopStore

TOPICS = ["tea", "coffee", "paris", "berlin", "violin", "glacier", "compiler", "harbor", "orchid", "canyon"]


def text(i):
    return f"note {i}: the user mentioned {TOPICS[i % 10]} and {TOPICS[(i * 7) % 10]} on day {i % 31}"


def timed(f):
    t = time.perf_counter_ns()
    f()
    return (time.perf_counter_ns() - t) / 1000


def pair(name, adapter, engine, queries):
    a, e = [], []
    for i in range(queries):
        if i % 2:
            a.append(timed(lambda: adapter(i)))
            e.append(timed(lambda: engine(i)))
        else:
            e.append(timed(lambda: engine(i)))
            a.append(timed(lambda: adapter(i)))
    return {
        "call": name,
        "adapter_p50_us": round(statistics.median(a)),
        "engine_p50_us": round(statistics.median(e)),
        "overhead_p50_us": round(statistics.median(a) - statistics.median(e)),
        "ratio": round(statistics.median(a) / statistics.median(e), 3),
    }


def main():
    items = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    queries = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    query = lambda i: f"what did the user say about {TOPICS[i % 10]}?"  # noqa: E731
    results = []
    with Memory(tempfile.mkdtemp(prefix="memloop-adapters-"), sync=False) as memory:
        store = MemloopStore(memory=memory)
        for i in range(items):
            store.put(("memories", "alice"), f"k{i}", {"content": text(i)})
        tag = 'langgraph.ns:["memories","alice"]'
        for i in range(20):
            store.search(("memories", "alice"), query=query(i), limit=10)
        results.append(pair(
            "langgraph search(query)",
            lambda i: store.search(("memories", "alice"), query=query(i), limit=10),
            lambda i: memory.recall(query(i), k=10, tags=[tag, "langgraph"], kinds=["document"], strategy="rerank"),
            queries,
        ))
        results.append(pair(
            "langgraph search(no query)",
            lambda i: store.search(("memories", "alice"), limit=10, offset=i % 50),
            lambda i: memory.list(tags=[tag, "langgraph"], kinds=["document"], limit=10, offset=i % 50),
            queries,
        ))
        vs = MemloopVectorStore(memory=memory, collection="bench")
        vs.add_texts([text(i) for i in range(items)])
        results.append(pair(
            "langchain similarity_search",
            lambda i: vs.similarity_search(query(i), k=10),
            lambda i: memory.recall(query(i), k=10, tags=["langchain.collection:bench"], kinds=["chunk"]),
            queries,
        ))
    for r in results:
        print(json.dumps({"items": items, "queries": queries, **r}))


if __name__ == "__main__":
    main()
