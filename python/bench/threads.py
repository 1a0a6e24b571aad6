"""Threads on one store: do Python threads run memloop calls in parallel (the GIL released)?

    bash scripts/build-wheel.sh && python -m venv /tmp/v && /tmp/v/bin/pip install dist/memloop-*.whl
    RAYON_NUM_THREADS=1 /tmp/v/bin/python python/bench/threads.py [--memories 2000] [--seconds 10]

On the default model (all-MiniLM-L6-v2): builds a store, then runs for ``--seconds`` each
(1) one thread recalling, (2) four threads recalling while a fifth remembers. Prints recalls
and writes per second and the process's CPU time over wall time (cores busy). With
``RAYON_NUM_THREADS=1`` each call embeds on one core, so anything past 1.0 cores in (2) is
Python threads running memloop at the same time; with the GIL held it could not pass 1.0.
"""

import argparse
import json
import os
import random
import tempfile
import threading
import time

import memloop

WORDS = ("agent deploy database cache staging port config user prefers build test release "
         "memory vector index query latency token budget context summary failure retry "
         "timeout network disk python rust thread lock schema migration backup").split()


def sentence(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 24))) + "."


def run(memory, readers, writer, seconds, seed):
    stop = threading.Event()
    counts = {"recalls": 0, "writes": 0}
    lock = threading.Lock()

    def read(i):
        rng = random.Random(seed + i)
        n = 0
        while not stop.is_set():
            memory.recall(sentence(rng), k=5)
            n += 1
        with lock:
            counts["recalls"] += n

    def write():
        rng = random.Random(seed + 100)
        n = 0
        while not stop.is_set():
            memory.remember(sentence(rng) + f" (written {n})")
            n += 1
        with lock:
            counts["writes"] += n

    threads = [threading.Thread(target=read, args=(i,)) for i in range(readers)]
    if writer:
        threads.append(threading.Thread(target=write))
    cpu0, wall0 = os.times(), time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    cpu1, wall = os.times(), time.perf_counter() - wall0
    cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    return {"readers": readers, "writer": writer, "seconds": round(wall, 2),
            "recalls_per_s": round(counts["recalls"] / wall, 1),
            "writes_per_s": round(counts["writes"] / wall, 1),
            "cores_busy": round(cpu / wall, 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        with memloop.Memory(os.path.join(tmp, "store"), sync=False) as memory:
            memory.remember_batch([sentence(rng) for _ in range(args.memories)])
            memory.checkpoint()
            alone = run(memory, 1, False, args.seconds, 1)
            shared = run(memory, 4, True, args.seconds, 2)
    shared["recall_speedup"] = round(shared["recalls_per_s"] / alone["recalls_per_s"], 2)
    env = {"RAYON_NUM_THREADS": os.environ.get("RAYON_NUM_THREADS"), "cpus": os.cpu_count(),
           "memories": args.memories}
    print(json.dumps({"env": env, "one_thread": alone, "four_readers_one_writer": shared}))


if __name__ == "__main__":
    main()
