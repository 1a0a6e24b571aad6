#!/usr/bin/env python3
"""sentence-transformers (PyTorch, CPU) and onnxruntime on the same protocol as `embed-bench`,
same JSON lines.

    python3 -m pip install torch sentence-transformers onnxruntime onnx
    python3 benches/embed_peers.py --model DIR --threads 1,2 [--onnx target/minilm.onnx] \
        [--onnx-int8 target/minilm-int8.onnx] [--skip-torch] \
        [--sentences benches/data/bench_sentences.json]

DIR is the fetched all-MiniLM-L6-v2 folder (scripts/fetch-model.sh prints it). With --onnx the
model is exported there once if missing (fp32, opset 17, dynamic axes, as in
research/embedding.md; without PyTorch, make it with benches/onnx_graph.py) and run with
onnxruntime (ORT_ENABLE_ALL, CPU); its batch-32 figure sorts the sentences by length first, as
sentence-transformers does, so neither peer pays for padding it could avoid. With --onnx-int8
that file (made once from the --onnx one by onnxruntime's dynamic quantization: int8 weights
per output channel, activations quantized per call, the recipe fastembed and onnxruntime's docs
give) runs the same way. --skip-torch runs onnxruntime alone (needs onnxruntime, onnx,
tokenizers and numpy only).
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
    ap.add_argument("--onnx", help="also run onnxruntime on this ONNX file (exported if missing)")
    ap.add_argument("--onnx-int8", help="also run onnxruntime on this int8 ONNX file (quantized from --onnx if missing)")
    ap.add_argument("--skip-torch", action="store_true", help="only onnxruntime")
    a = ap.parse_args()
    from tokenizers import Tokenizer

    sentences = json.load(open(a.sentences))
    tok = Tokenizer.from_file(os.path.join(a.model, "tokenizer.json"))
    probe = next((s for s in sentences if len(tok.encode(s).ids) == 58), sentences[0])
    if a.onnx and not os.path.exists(a.onnx):
        export_onnx(a.model, a.onnx)
    if a.onnx_int8 and not os.path.exists(a.onnx_int8):
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(a.onnx, a.onnx_int8, per_channel=True, weight_type=QuantType.QInt8)
    if not a.skip_torch:
        import torch
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(a.model, device="cpu")
    for threads in map(int, a.threads.split(",")):
        if a.onnx:
            run_onnx(a, a.onnx, "onnxruntime", sentences, probe, threads)
        if a.onnx_int8:
            run_onnx(a, a.onnx_int8, "onnxruntime int8", sentences, probe, threads)
        if a.skip_torch:
            continue
        torch.set_num_threads(threads)
        report("sentence-transformers", threads, a.runs, sentences, probe,
               encode_one=lambda s: model.encode([s], batch_size=1),
               encode_all=lambda: model.encode(sentences, batch_size=32),
               version={"torch": torch.__version__})


def report(system, threads, runs, sentences, probe, encode_one, encode_all, version):
    """Times the protocol (batch 1 over the first 128, batch 32 over all, one-sentence latency)
    after a warm-up and prints one JSON line."""
    encode_all()  # warm-up

    def rate(fn, n):
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            fn()
            times.append(n / (time.perf_counter() - t0))
        return statistics.median(times)

    b1 = rate(lambda: [encode_one(s) for s in sentences[:128]], 128)
    b32 = rate(encode_all, len(sentences))
    lat = []
    for _ in range(50):
        t0 = time.perf_counter()
        encode_one(probe)
        lat.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"system": system, "threads": threads, "batch1_per_s": round(b1, 1),
                      "batch32_per_s": round(b32, 1), "latency_ms": round(statistics.median(lat), 2),
                      **version}), flush=True)


def export_onnx(model_dir, path):
    """The fp32 export of the model's encoder (PyTorch and transformers needed)."""
    from transformers import AutoModel

    export_module(AutoModel.from_pretrained(model_dir).eval(), path)


def export_module(model, path):
    """Exports a transformers BERT model's `last_hidden_state` to ONNX at `path` (opset 17,
    dynamic batch and sequence axes)."""
    import torch

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    ids = torch.ones((2, 8), dtype=torch.long)
    mask = ids.clone()
    mask[1, 5:] = 0  # traced with an all-ones mask, transformers leaves the mask out of the graph
    names = ["input_ids", "attention_mask", "token_type_ids"]
    torch.onnx.export(Wrap(model), (ids, mask, torch.zeros_like(ids)), path, input_names=names,
                      output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                      dynamic_axes={k: {0: "b", 1: "s"} for k in names + ["last_hidden_state"]})


def ort_encoder(sess, model_dir):
    """`encode(texts)`: an onnxruntime session's normalised mean-pooled vectors, as
    sentence-transformers makes them (truncated at 256 tokens, padded per call)."""
    import numpy as np
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(256)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")

    def encode(batch):
        encs = tok.encode_batch(batch)
        ids = np.array([e.ids for e in encs], dtype=np.int64)
        am = np.array([e.attention_mask for e in encs], dtype=np.int64)
        h = sess.run(None, {"input_ids": ids, "attention_mask": am, "token_type_ids": np.zeros_like(ids)})[0]
        m = am[..., None].astype(np.float32)
        v = (h * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    return encode, tok


def run_onnx(a, path, system, sentences, probe, threads):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    encode, tok = ort_encoder(sess, a.model)
    by_len = sorted(sentences, key=lambda s: len(tok.encode(s).ids))
    report(system, threads, a.runs, sentences, probe,
           encode_one=lambda s: encode([s]),
           encode_all=lambda: [encode(by_len[i:i + 32]) for i in range(0, len(by_len), 32)],
           version={"onnxruntime": ort.__version__})


if __name__ == "__main__":
    main()
