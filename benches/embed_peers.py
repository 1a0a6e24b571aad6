#!/usr/bin/env python3
"""sentence-transformers (PyTorch, CPU) on the same protocol as `embed-bench`, same JSON line.

    python3 -m pip install torch sentence-transformers
    python3 benches/embed_peers.py --model DIR --threads 1,2 \
        [--sentences benches/data/bench_sentences.json]

DIR is the fetched all-MiniLM-L6-v2 folder (scripts/fetch-model.sh prints it).
"""
import argparse
import json
import os
import statistics
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--sentences", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "bench_sentences.json"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    import torch
    from sentence_transformers import SentenceTransformer

    sentences = json.load(open(a.sentences))
    model = SentenceTransformer(a.model, device="cpu")
    tok = model.tokenizer
    probe = next((s for s in sentences if len(tok(s)["input_ids"]) == 58), sentences[0])
    for threads in map(int, a.threads.split(",")):
        torch.set_num_threads(threads)
        model.encode(sentences, batch_size=32)  # warm-up

        def rate(fn, n):
            runs = []
            for _ in range(a.runs):
                t0 = time.perf_counter()
                fn()
                runs.append(n / (time.perf_counter() - t0))
            return statistics.median(runs)

        b1 = rate(lambda: [model.encode([s], batch_size=1) for s in sentences[:128]], 128)
        b32 = rate(lambda: model.encode(sentences, batch_size=32), len(sentences))
        lat = []
        for _ in range(50):
            t0 = time.perf_counter()
            model.encode([probe], batch_size=1)
            lat.append((time.perf_counter() - t0) * 1e3)
        print(json.dumps({"system": "sentence-transformers", "threads": threads, "batch1_per_s": round(b1, 1),
                          "batch32_per_s": round(b32, 1), "latency_ms": round(statistics.median(lat), 2),
                          "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
