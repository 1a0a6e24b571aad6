#!/usr/bin/env python3
"""memloop in Chromium beside the native build and beside onnxruntime-web, on the same machine
and texts, in the same run.

  bash scripts/build-wasm.sh --release --model
  cargo build --release -p memloop-benches --bin embed-bench --bin browser-baseline
  python3 -m pip install playwright==1.65.2 onnx onnxruntime tokenizers numpy safetensors
  python3 benches/onnx_graph.py fill --graph benches/data/minilm-onnx --model "$(bash scripts/fetch-model.sh)" --out target/minilm.onnx
  python3 benches/browser_bench.py --model "$(bash scripts/fetch-model.sh)" \\
      --onnx target/minilm.onnx --onnx-int8 target/minilm-int8.onnx \\
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
- The peer, with --onnx: what a web developer runs MiniLM with in a page, onnxruntime-web
  (the npm package, installed pinned into target/ort-web when missing; its WebAssembly SIMD
  backend, one thread, on the page's own thread) on the same weights' ONNX graph
  (`benches/onnx_graph.py fill`) in fp32 and int8 (onnxruntime's dynamic quantization, made
  from the fp32 file when --onnx-int8 is missing, as embed_peers.py does), the same sentences
  and protocol; then recall at the same --n texts the way the browser examples do it: every
  text embedded (int8) into one array, each question embedded and scanned in JavaScript (dot
  products, top 10). Its texts are tokenized beforehand in Python and its inputs built before
  the clock starts (memloop's figures include tokenizing, and the Worker's messages): the
  peer's figures are its runtime alone, so the ratios are lower bounds for memloop. Each
  peer's vectors are checked against memloop's (cosine) so that both embed the same thing.
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


ORT_WEB_VERSION = "1.31.1"

# onnxruntime-web loaded (WebAssembly SIMD, one thread), and a batch's vectors as
# sentence-transformers makes them: the last hidden states mean-pooled over the attention mask,
# normalised. `b` is a pre-tokenized batch ({ids, mask}, padded to its longest).
PEER_SETUP = """
  const ort = await import(ortUrl + 'ort.wasm.min.mjs')
  ort.env.wasm.wasmPaths = ortUrl
  ort.env.wasm.numThreads = 1
  const open = (url) => ort.InferenceSession.create(url, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' })
  const feeds = (b) => {
    const n = b.ids.length, len = b.ids[0].length
    const t = (rows) => new ort.Tensor('int64', BigInt64Array.from(rows.flat(), (x) => BigInt(x)), [n, len])
    return { input_ids: t(b.ids), attention_mask: t(b.mask), token_type_ids: t(b.ids.map((r) => r.map(() => 0))) }
  }
  const pool = (out, b) => {
    const [n, len, h] = out.dims, d = out.data, vs = []
    for (let i = 0; i < n; i++) {
      const v = new Float32Array(h)
      let m = 0
      for (let j = 0; j < len; j++) {
        if (!b.mask[i][j]) continue
        m++
        for (let c = 0; c < h; c++) v[c] += d[(i * len + j) * h + c]
      }
      let norm = 0
      for (let c = 0; c < h; c++) { v[c] /= m; norm += v[c] * v[c] }
      norm = Math.sqrt(norm)
      for (let c = 0; c < h; c++) v[c] /= norm
      vs.push(v)
    }
    return vs
  }
  const embed = async (session, f, b) => pool((await session.run(f)).last_hidden_state, b)
"""

PEER_EMBED = """
async ({ ortUrl, onnx, single, batches, runs }) => {
""" + PEER_SETUP + """
  const median = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)]
  const out = {}
  for (const [precision, url] of Object.entries(onnx)) {
    const session = await open(url)
    // Inputs built before the clock starts: the runtime alone is timed.
    const one = single.map(feeds), many = batches.map(feeds)
    const first = await embed(session, one[0], single[0])
    for (let i = 0; i < 4; i++) await embed(session, one[i], single[i])
    const b1 = [], b32 = []
    for (let r = 0; r < runs; r++) {
      let t = performance.now()
      for (let i = 0; i < 128; i++) await embed(session, one[i], single[i])
      b1.push(128 / ((performance.now() - t) / 1000))
      t = performance.now()
      let n = 0
      for (let i = 0; i < many.length; i++) n += (await embed(session, many[i], batches[i])).length
      b32.push(n / ((performance.now() - t) / 1000))
    }
    out[precision] = { batch1_per_s: median(b1), batch32_per_s: median(b32), first: Array.from(first[0]) }
    await session.release()
  }
  return { ...out, version: ort.env.versions?.web ?? null }
}
"""

PEER_RECALL = """
async ({ ortUrl, onnx, texts, queries, k }) => {
""" + PEER_SETUP + """
  const session = await open(onnx)
  const total = texts.reduce((s, b) => s + b.ids.length, 0)
  let h = 0, count = 0, all = null
  let t = performance.now()
  for (const b of texts) {
    for (const v of await embed(session, feeds(b), b)) {
      if (!all) { h = v.length; all = new Float32Array(h * total) }
      all.set(v, count * h)
      count++
    }
  }
  const ingest = count / ((performance.now() - t) / 1000)
  // A question embedded, then every vector scanned (dot products), the top k kept.
  const search = async (q) => {
    const [v] = await embed(session, feeds(q), q)
    const top = []
    for (let i = 0; i < count; i++) {
      let s = 0
      for (let c = 0; c < h; c++) s += all[i * h + c] * v[c]
      if (top.length < k || s > top[top.length - 1][0]) {
        top.push([s, i])
        top.sort((a, b) => b[0] - a[0])
        if (top.length > k) top.pop()
      }
    }
    return top
  }
  for (const q of queries) await search(q)
  const times = []
  for (const q of queries) {
    t = performance.now()
    await search(q)
    times.push(performance.now() - t)
  }
  await session.release()
  times.sort((a, b) => a - b)
  const pct = (p) => times[Math.round((times.length - 1) * p)]
  return { texts: count, ingest_per_s: ingest, p50_ms: pct(0.5), p99_ms: pct(0.99) }
}
"""


def tokenized(tok, texts, batch):
    """`texts` tokenized (truncated at 256 tokens) in batches of `batch`, each padded to its
    longest: [{ids, mask}]. Batches of more than one take the texts sorted by length, as
    sentence-transformers and embed_peers.py do."""
    order = sorted(texts, key=lambda s: len(tok.encode(s).ids)) if batch > 1 else texts
    out = []
    for i in range(0, len(order), batch):
        encs = tok.encode_batch(order[i:i + batch])
        out.append({"ids": [e.ids for e in encs], "mask": [e.attention_mask for e in encs]})
    return out


def ort_web(folder):
    """onnxruntime-web's dist folder: the pinned npm package in `folder`, installed if missing."""
    dist = folder / "node_modules" / "onnxruntime-web" / "dist"
    if not (dist / "ort.wasm.min.mjs").exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--no-save", "--prefix", str(folder), f"onnxruntime-web@{ORT_WEB_VERSION}"], check=True)
    return dist


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / ((sum(x * x for x in a) ** 0.5) * (sum(y * y for y in b) ** 0.5))


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
    ap.add_argument("--model", help="the f32 model folder, for the peer's tokenizer (scripts/fetch-model.sh prints it)")
    ap.add_argument("--onnx", help="run onnxruntime-web beside memloop on this ONNX file (benches/onnx_graph.py fill)")
    ap.add_argument("--onnx-int8", help="and on this int8 one (quantized from --onnx when missing)")
    ap.add_argument("--skip-native", action="store_true", help="leave out the native build (embed-bench, browser-baseline)")
    ap.add_argument("--ort-web", default=str(ROOT / "target" / "ort-web"), help="where onnxruntime-web is installed")
    args = ap.parse_args()
    if args.onnx and not args.model:
        ap.error("--onnx needs --model (the peer's tokenizer)")
    pkg = pathlib.Path(args.pkg)
    sentences = json.load(open(ROOT / "benches" / "data" / "bench_sentences.json"))
    texts, queries = corpus(args.dataset, args.n, args.queries)
    work = pathlib.Path(tempfile.mkdtemp(prefix="browser-bench-"))
    (work / "texts.json").write_text(json.dumps(texts))
    (work / "queries.json").write_text(json.dumps(queries))
    release = pathlib.Path(args.release_dir)
    one = {**os.environ, "RAYON_NUM_THREADS": "1", "CANDLE_NUM_THREADS": "1"}

    native_embed = {}
    for precision in ("f32", "int8") if not args.skip_native else ():
        out = subprocess.run([release / "embed-bench", "--threads", "1", "--runs", str(args.runs), "--precision", precision, "--json"],
                             check=True, capture_output=True, text=True, env=one).stdout
        line = json.loads([x for x in out.splitlines() if x.startswith("{")][-1])
        native_embed[precision] = {"batch1_per_s": line["batch1_per_s"], "batch32_per_s": line["batch32_per_s"]}
    native_recall = None
    if not args.skip_native:
        out = subprocess.run([release / "browser-baseline", "--texts", work / "texts.json", "--queries", work / "queries.json"],
                             check=True, capture_output=True, text=True, env=one).stdout
        native_recall = json.loads(out.strip().splitlines()[-1])

    folders = routes(pkg)
    peer_args = None
    if args.onnx:
        from tokenizers import Tokenizer

        if args.onnx_int8 and not os.path.exists(args.onnx_int8):
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantize_dynamic(args.onnx, args.onnx_int8, per_channel=True, weight_type=QuantType.QInt8)
        tok = Tokenizer.from_file(os.path.join(args.model, "tokenizer.json"))
        tok.enable_truncation(256)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        # Each graph served from its own folder (the server serves nothing a link leads out to).
        onnx = {}
        for precision, path in (("f32", args.onnx), ("int8", args.onnx_int8)):
            if path:
                path = pathlib.Path(path).resolve()
                folders[f"/onnx-{precision}/"] = path.parent
                onnx[precision] = f"/onnx-{precision}/{path.name}"
        folders["/ort/"] = ort_web(pathlib.Path(args.ort_web))
        peer_args = {
            "ortUrl": "/ort/",
            "onnx": onnx,
            "single": tokenized(tok, sentences[:128], 1),
            "batches": tokenized(tok, sentences, 32),
            "runs": args.runs,
        }
        recall_args = {"ortUrl": "/ort/", "onnx": onnx.get("int8", onnx["f32"]), "texts": tokenized(tok, texts, 32),
                       "queries": tokenized(tok, queries, 1), "k": 10}
    origin, server = serve(folders)
    profile = tempfile.mkdtemp(prefix="browser-bench-profile-")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=args.chromium, headless=True, args=["--no-sandbox"])
        page = context.new_page()
        page.set_default_timeout(3_600_000)
        page.goto(f"{origin}/test/index.html")
        page.wait_for_function("window.ready === true")
        browser_embed = page.evaluate(BROWSER_EMBED, {"sentences": sentences, "runs": args.runs})
        browser_recall = page.evaluate(BROWSER_RECALL, {"texts": texts, "queries": queries, "batch": 500, "k": 10})
        if peer_args:
            mine = page.evaluate("""async (s) => { const m = await memloop.Memory.open('bench-check'); const out = {};
                for (const p of ['f32', 'int8']) out[p] = (await m.embed([s], { precision: p })).vectors[0];
                await m.close(); return out }""", sentences[0])
            peer_embed = page.evaluate(PEER_EMBED, peer_args)
            peer_recall = page.evaluate(PEER_RECALL, recall_args)
        version = context.browser.version if context.browser else page.evaluate("navigator.userAgent")
        context.close()
    server.shutdown()

    wasm = (pkg / "memloop.wasm").read_bytes()
    model = {f.name: f.stat().st_size for f in (pkg / "model").iterdir() if f.name != "model.json"}
    figures = {
        "cpu": cpu(),
        "chromium": version,
        "embedding": {p: {"chromium": browser_embed[p]} | ({} if args.skip_native else {
                          "native_1_thread": native_embed[p],
                          "ratio_batch1": browser_embed[p]["batch1_per_s"] / native_embed[p]["batch1_per_s"],
                          "ratio_batch32": browser_embed[p]["batch32_per_s"] / native_embed[p]["batch32_per_s"]})
                      for p in ("f32", "int8")},
        "recall": {"chromium": browser_recall} | ({} if args.skip_native else {
                   "native_1_thread": native_recall,
                   "p50_ratio": browser_recall["p50_ms"] / native_recall["p50_ms"],
                   "ingest_ratio": browser_recall["ingest_per_s"] / native_recall["ingest_per_s"]}),
        "sizes": {"wasm_bytes": len(wasm), "wasm_gzip_bytes": len(gzip.compress(wasm, 9)), "model_bytes": model},
    }
    if peer_args:
        peer = {"onnxruntime_web": peer_embed.pop("version") or ORT_WEB_VERSION}
        for p in ("f32", "int8"):
            if p not in peer_embed:
                continue
            first = peer_embed[p].pop("first")
            peer[p] = {**peer_embed[p], "cosine_to_memloop": cosine(first, mine[p]),
                       "ratio_batch1": browser_embed[p]["batch1_per_s"] / peer_embed[p]["batch1_per_s"],
                       "ratio_batch32": browser_embed[p]["batch32_per_s"] / peer_embed[p]["batch32_per_s"]}
            # Both embed the same sentence (int8's noise apart): misfed inputs give 0.3-0.7.
            assert peer[p]["cosine_to_memloop"] > 0.98, (p, peer[p]["cosine_to_memloop"])
        peer["recall"] = {**peer_recall, "p50_ratio": browser_recall["p50_ms"] / peer_recall["p50_ms"]}
        figures["onnxruntime_web"] = peer
    print(json.dumps(figures, indent=1))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
