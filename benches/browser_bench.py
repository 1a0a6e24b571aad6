#!/usr/bin/env python3
"""memloop in Chromium beside the native build, on the same machine and texts.

  bash scripts/build-wasm.sh --release --model
  cargo build --release -p memloop-benches --bin embed-bench --bin browser-baseline
  target/py-venv/bin/python benches/browser_bench.py \\
      --dataset ../shared/datasets/longmemeval/longmemeval_s_dev.json.gz [--json docs/bench-data/browser.json]

- Embedding throughput: the 256 sentences of `benches/data/bench_sentences.json` (embed-bench's
  protocol: batch 1 over the first 128, batch 32 over all), f32 and int8, the median of
  `--runs`; in Chromium through `memory.embed` (one Worker: single-threaded), natively by
  embed-bench with one thread.
- Recall p50 at 10,000 memories: `--n` LongMemEval-S turns (the dev file, each cut to 300
  characters) remembered as conversations of 500 turns, then `--queries` of its questions
  recalled (k 10, the default strategy, query embedding included, one untimed pass first);
  in Chromium through `memory.call` from the page (the Worker's messages included), natively
  by browser-baseline (the same registry requests through `Memory::call`, one thread).
- Sizes: memloop.wasm raw and gzipped (-9), the model's files.
"""

import argparse
import gzip
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile

from playwright.sync_api import sync_playwright

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "wasm" / "test"))
from serve import routes, serve  # noqa: E402


def corpus(dataset, n, q):
    texts, seen, queries = [], set(), []
    with gzip.open(dataset, "rt") as f:
        for question in json.load(f):
            if len(queries) < q:
                queries.append(question["question"])
            for session in question["haystack_sessions"]:
                for turn in session:
                    t = turn["content"][:300]
                    if len(texts) < n and t not in seen:
                        seen.add(t)
                        texts.append(t)
            if len(texts) >= n and len(queries) >= q:
                break
    return texts, queries


def cpu():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


BROWSER_EMBED = """
async ({ sentences, runs }) => {
  const out = {}
  const median = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)]
  for (const precision of ['f32', 'int8']) {
    const mem = await memloop.Memory.open('bench-embed-' + precision)
    await mem.embed(sentences, { precision })
    const b1 = [], b32 = []
    for (let r = 0; r < runs; r++) {
      let t = performance.now()
      for (const s of sentences.slice(0, 128)) await mem.embed([s], { precision })
      b1.push(128 / ((performance.now() - t) / 1000))
      t = performance.now()
      for (let i = 0; i < sentences.length; i += 32) await mem.embed(sentences.slice(i, i + 32), { precision })
      b32.push(sentences.length / ((performance.now() - t) / 1000))
    }
    out[precision] = { batch1_per_s: median(b1), batch32_per_s: median(b32) }
    await mem.close()
  }
  return out
}
"""

BROWSER_RECALL = """
async ({ texts, queries, batch, k }) => {
  const mem = await memloop.Memory.open('bench-store')
  let t = performance.now()
  for (let b = 0; b * batch < texts.length; b++) {
    const turns = texts.slice(b * batch, (b + 1) * batch).map((text, i) => ({ speaker: 'user', text, time: 1767225600000 + (b * batch + i) * 1000 }))
    await mem.call('remember_conversation', { session: 's' + b, turns })
  }
  const ingest = texts.length / ((performance.now() - t) / 1000)
  for (const query of queries) await mem.call('recall', { query, k })
  const times = []
  for (const query of queries) {
    t = performance.now()
    await mem.call('recall', { query, k })
    times.push(performance.now() - t)
  }
  const stats = await mem.stats()
  await mem.close()
  times.sort((a, b) => a - b)
  const pct = (p) => times[Math.round((times.length - 1) * p)]
  return { texts: texts.length, memories: stats.memories, ingest_per_s: ingest, p50_ms: pct(0.5), p99_ms: pct(0.99), model: stats.model }
}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--pkg", default=str(ROOT / "target" / "wasm-pkg"))
    ap.add_argument("--release-dir", default=str(ROOT / "target" / "release"))
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--chromium", default=os.environ.get("MEMLOOP_CHROMIUM", "/usr/bin/chromium"))
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    pkg = pathlib.Path(args.pkg)
    sentences = json.load(open(ROOT / "benches" / "data" / "bench_sentences.json"))
    texts, queries = corpus(args.dataset, args.n, args.queries)
    work = pathlib.Path(tempfile.mkdtemp(prefix="browser-bench-"))
    (work / "texts.json").write_text(json.dumps(texts))
    (work / "queries.json").write_text(json.dumps(queries))
    release = pathlib.Path(args.release_dir)
    one = {**os.environ, "RAYON_NUM_THREADS": "1", "CANDLE_NUM_THREADS": "1"}

    native_embed = {}
    for precision in ("f32", "int8"):
        out = subprocess.run([release / "embed-bench", "--threads", "1", "--runs", str(args.runs), "--precision", precision, "--json"],
                             check=True, capture_output=True, text=True, env=one).stdout
        line = json.loads([x for x in out.splitlines() if x.startswith("{")][-1])
        native_embed[precision] = {"batch1_per_s": line["batch1_per_s"], "batch32_per_s": line["batch32_per_s"]}
    out = subprocess.run([release / "browser-baseline", "--texts", work / "texts.json", "--queries", work / "queries.json"],
                         check=True, capture_output=True, text=True, env=one).stdout
    native_recall = json.loads(out.strip().splitlines()[-1])

    origin, server = serve(routes(pkg))
    profile = tempfile.mkdtemp(prefix="browser-bench-profile-")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=args.chromium, headless=True, args=["--no-sandbox"])
        page = context.new_page()
        page.set_default_timeout(3_600_000)
        page.goto(f"{origin}/test/index.html")
        page.wait_for_function("window.ready === true")
        browser_embed = page.evaluate(BROWSER_EMBED, {"sentences": sentences, "runs": args.runs})
        browser_recall = page.evaluate(BROWSER_RECALL, {"texts": texts, "queries": queries, "batch": 500, "k": 10})
        version = context.browser.version if context.browser else page.evaluate("navigator.userAgent")
        context.close()
    server.shutdown()

    wasm = (pkg / "memloop.wasm").read_bytes()
    model = {f.name: f.stat().st_size for f in (pkg / "model").iterdir() if f.name != "model.json"}
    figures = {
        "cpu": cpu(),
        "chromium": version,
        "embedding": {p: {"chromium": browser_embed[p], "native_1_thread": native_embed[p],
                          "ratio_batch1": browser_embed[p]["batch1_per_s"] / native_embed[p]["batch1_per_s"],
                          "ratio_batch32": browser_embed[p]["batch32_per_s"] / native_embed[p]["batch32_per_s"]}
                      for p in ("f32", "int8")},
        "recall": {"chromium": browser_recall, "native_1_thread": native_recall,
                   "p50_ratio": browser_recall["p50_ms"] / native_recall["p50_ms"],
                   "ingest_ratio": browser_recall["ingest_per_s"] / native_recall["ingest_per_s"]},
        "sizes": {"wasm_bytes": len(wasm), "wasm_gzip_bytes": len(gzip.compress(wasm, 9)), "model_bytes": model},
    }
    print(json.dumps(figures, indent=1))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
