"""Python overhead per recall: Python -> engine, against the engine called from Rust.

    cargo build --release -p memloop-benches --bin recall-latency
    bash scripts/build-wheel.sh && python -m venv /tmp/v && /tmp/v/bin/pip install dist/memloop-*.whl
    /tmp/v/bin/python python/bench/overhead.py [--memories 2000] [--queries 300] [--rounds 3]
        [--ctypes DIR]

Builds one store per embedder (the default model, and the model-free hashing embedder where
recall is fastest and the relative overhead largest), then alternates rounds of the same
recalls from Rust (target/release/recall-latency) and from Python through the native
extension (`memloop`, the installed wheel). With ``--ctypes DIR`` it also runs them through
the earlier binding, ctypes over the C ABI with JSON in and out: DIR holds that package's
``memloop/`` with a release ``libmemloop_ffi.so`` in it (the package as of commit 6262293,
``git archive 6262293 ffi/python``, and ``cargo build --release -p memloop-ffi``). Prints mean
microseconds per recall and each binding's overhead over Rust.
"""

import argparse
import importlib.util
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import memloop

ROOT = Path(__file__).resolve().parents[2]
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


def load_ctypes(directory):
    """The earlier ctypes package from ``directory``, imported as ``memloop_ctypes``."""
    package = Path(directory) / "memloop"
    spec = importlib.util.spec_from_file_location(
        "memloop_ctypes", package / "__init__.py", submodule_search_locations=[str(package)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["memloop_ctypes"] = module
    spec.loader.exec_module(module)
    return module


def rust_round(store, queries_file, repeat, hashing):
    cmd = [str(ROOT / "target/release/recall-latency"), "--store", str(store),
           "--queries", str(queries_file), "--repeat", str(repeat)]
    if hashing:
        cmd += ["--hashing", str(hashing)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["mean_us"]


def measure(name, hashing, args, work, legacy):
    rng = random.Random(7)
    store = work / name
    with memloop.Memory(store, hashing_embedder=hashing, sync=False) as m:
        for _ in range(args.memories):
            m.remember(sentence(rng))
    queries = [sentence(rng) for _ in range(args.queries)]
    qfile = work / f"{name}.queries.txt"
    qfile.write_text("\n".join(queries) + "\n")
    bindings = [("native", memloop)] + ([("ctypes", legacy)] if legacy else [])
    times = {"rust": []}
    for _ in range(args.rounds):
        times["rust"].append(rust_round(store, qfile, args.repeat, hashing))
        for label, package in bindings:
            with package.Memory(store, hashing_embedder=hashing) as m:
                for q in queries:  # warm, as the Rust side does
                    m.recall(q, k=5)
                times.setdefault(label, []).append(python_round(m, queries, args.repeat))
    rust = statistics.median(times["rust"])
    row = {"embedder": name, "memories": args.memories, "recalls": args.queries * args.repeat,
           "rust_us": round(rust, 2)}
    for label, _ in bindings:
        t = statistics.median(times[label])
        row[f"{label}_us"] = round(t, 2)
        row[f"{label}_overhead_us"] = round(t - rust, 2)
        row[f"{label}_overhead_pct"] = round(100 * (t - rust) / rust, 2)
    print(json.dumps(row), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hashing-only", action="store_true",
                        help="skip the default model (the wrapper's fixed cost alone)")
    parser.add_argument("--ctypes", metavar="DIR",
                        help="also measure the earlier ctypes package found in DIR")
    args = parser.parse_args()
    legacy = load_ctypes(args.ctypes) if args.ctypes else None
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        measure("hashing-384", 384, args, work, legacy)
        if not args.hashing_only:
            measure("all-MiniLM-L6-v2", None, args, work, legacy)


if __name__ == "__main__":
    sys.exit(main())
