"""Python overhead per recall: Python -> C ABI -> engine, against the engine called from Rust.

    cargo build --release -p memloop-benches --bin recall-latency
    pip install ./ffi/python            # release build of the library
    python ffi/python/bench/overhead.py [--memories 2000] [--queries 300] [--rounds 3]

Builds one store per embedder (the default model, and the model-free hashing embedder where
recall is fastest and the relative overhead largest), then alternates rounds of the same
recalls from Rust (target/release/recall-latency) and from Python, through the `Memory`
wrapper and through bare ctypes calls. Prints mean microseconds per recall and the overhead
as a share of the Rust time.
"""

import argparse
import ctypes
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import memloop
from memloop._native import LIB

ROOT = Path(__file__).resolve().parents[3]
WORDS = ("agent deploy database cache staging port config user prefers build test release "
         "memory vector index query latency token budget context summary failure retry "
         "timeout network disk python rust thread lock schema migration backup").split()


def sentence(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 24))) + "."


def python_round(memory, queries, repeat):
    times = []
    for _ in range(repeat):
        for q in queries:
            t = time.perf_counter()
            memory.recall(q, k=5)
            times.append((time.perf_counter() - t) * 1e6)
    return statistics.fmean(times)


def ctypes_round(memory, queries, repeat):
    handle = memory._h()
    requests = [json.dumps({"query": q, "k": 5}).encode() for q in queries]
    out = ctypes.c_void_p()
    times = []
    for _ in range(repeat):
        for r in requests:
            t = time.perf_counter()
            assert LIB.memloop_recall(handle, r, ctypes.byref(out)) == 0
            LIB.memloop_free_string(out)
            times.append((time.perf_counter() - t) * 1e6)
    return statistics.fmean(times)


def rust_round(store, queries_file, repeat, hashing):
    cmd = [str(ROOT / "target/release/recall-latency"), "--store", str(store),
           "--queries", str(queries_file), "--repeat", str(repeat)]
    if hashing:
        cmd += ["--hashing", str(hashing)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["mean_us"]


def measure(name, hashing, args, work):
    rng = random.Random(7)
    store = work / name
    with memloop.Memory(store, hashing_embedder=hashing, sync=False) as m:
        for _ in range(args.memories):
            m.remember(sentence(rng))
    queries = [sentence(rng) for _ in range(args.queries)]
    qfile = work / f"{name}.queries.txt"
    qfile.write_text("\n".join(queries) + "\n")
    rust, py, raw = [], [], []
    for _ in range(args.rounds):
        rust.append(rust_round(store, qfile, args.repeat, hashing))
        with memloop.Memory(store, hashing_embedder=hashing) as m:
            for q in queries:  # warm, as the Rust side does
                m.recall(q, k=5)
            py.append(python_round(m, queries, args.repeat))
            raw.append(ctypes_round(m, queries, args.repeat))
    r, p, c = statistics.median(rust), statistics.median(py), statistics.median(raw)
    row = {"embedder": name, "memories": args.memories, "recalls": args.queries * args.repeat,
           "rust_us": round(r, 1), "python_us": round(p, 1), "ctypes_us": round(c, 1),
           "overhead_pct": round(100 * (p - r) / r, 2), "ctypes_overhead_pct": round(100 * (c - r) / r, 2)}
    print(json.dumps(row), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hashing-only", action="store_true",
                        help="skip the default model (the wrapper's fixed cost alone)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        measure("hashing-384", 384, args, work)
        if not args.hashing_only:
            measure("all-MiniLM-L6-v2", None, args, work)


if __name__ == "__main__":
    sys.exit(main())
