#!/usr/bin/env python3
"""`memloop ui` on a large store: the time each page takes to answer.

    cargo build --release --locked -p memloop-cli
    python3 benches/ui_bench.py --bin target/release/memloop --store target/ui-bench-store \
        [--n 100000] [--precision int8] [--runs 20]

The store is built once (if missing) with the real default model: N memories made from the
256 benchmark sentences (each made unique by its number and topic), spread over 50 users and
two kinds, ingested as JSON Lines in batches of 512. Then `memloop ui` serves it and each page
is fetched RUNS times after a warm-up: the overview, a search (recall with explanations and
the context at 400 tokens), one memory's page and the forgetting page. Each time is the whole
round trip on loopback (request, the server's work, the page's bytes), an upper bound on the
server's time. Prints one JSON line per page.
"""
import argparse
import http.cookiejar
import json
import os
import statistics
import subprocess
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOPICS = ["travel", "health", "work", "family", "money", "food", "music", "garden", "code", "sport"]


def build(a):
    sentences = json.load(open(os.path.join(HERE, "data", "bench_sentences.json")))
    lines = os.path.join(os.path.dirname(os.path.abspath(a.store)), "ui-bench-memories.jsonl")
    with open(lines, "w") as f:
        for i in range(a.n):
            text = f"{sentences[i % len(sentences)]} (entry {i}, about {TOPICS[i % len(TOPICS)]})"
            f.write(json.dumps({"text": text, "user": f"user{i % 50}",
                                "kind": "fact" if i % 3 == 0 else "chunk"}) + "\n")
    started = time.perf_counter()
    subprocess.run([a.bin, "--store", a.store, "--precision", a.precision, "init"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([a.bin, "--store", a.store, "ingest", lines, "--batch", "512", "--grouped"],
                   check=True, stdout=subprocess.DEVNULL)
    os.remove(lines)
    print(json.dumps({"built": a.n, "seconds": round(time.perf_counter() - started, 1)}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/memloop")
    ap.add_argument("--store", default="target/ui-bench-store")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--precision", default="int8", choices=["f32", "int8"])
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    if not os.path.exists(a.store):
        build(a)
    ui = subprocess.Popen([a.bin, "--store", a.store, "ui", "--port", "0"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    try:
        url = ui.stdout.readline().strip()
        base = url.split("/?")[0]
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        opener.open(url, timeout=60).read()  # sets the cookie
        pages = {
            "overview": "/",
            "search": "/search?q=what+did+I+plan+for+the+garden&k=10&budget=400",
            "memory": "/memory/4242",
            "forgetting": "/forgetting",
        }
        for name, path in pages.items():
            opener.open(base + path, timeout=60).read()  # warm-up
            times = []
            size = 0
            for _ in range(a.runs):
                t0 = time.perf_counter()
                with opener.open(base + path, timeout=60) as r:
                    size = len(r.read())
                times.append((time.perf_counter() - t0) * 1e3)
            times.sort()
            print(json.dumps({"page": name, "memories": a.n, "p50_ms": round(statistics.median(times), 1),
                              "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
                              "bytes": size}), flush=True)
    finally:
        ui.terminate()
        ui.wait(timeout=30)


if __name__ == "__main__":
    main()
