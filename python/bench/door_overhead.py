"""The Python door's lexical recall latency on the store `binding-overhead` seeded: the same
queries in the same order (see benches/src/bin/binding-overhead.rs).

    python python/bench/door_overhead.py STORE [MEMORIES] [QUERIES]
"""

import json
import sys
import time

import memloop

NOUNS = ["falcon", "compiler", "glacier", "violin", "harbor", "orchid", "reactor", "canyon",
         "lantern", "meadow", "quartz", "tundra"]


def sentence(i: int) -> str:
    return f"the {NOUNS[i % 12]} near station {i} code k{(i * 7919) % 10007}"


def main() -> None:
    store = sys.argv[1]
    memories = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    queries = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    query = lambda i: sentence((i * 7) % memories)  # noqa: E731
    with memloop.Memory(store, hashing_embedder=384, sync=False) as m:
        for i in range(200):
            m.recall(query(i), k=5, strategy="lexical")
        micros = []
        for i in range(queries):
            t = time.perf_counter_ns()
            m.recall(query(i), k=5, strategy="lexical")
            micros.append((time.perf_counter_ns() - t) / 1000)
    micros.sort()
    print(json.dumps({"door": "python", "queries": len(micros), "p50_us": micros[len(micros) // 2],
                      "mean_us": sum(micros) / len(micros)}))


if __name__ == "__main__":
    main()
