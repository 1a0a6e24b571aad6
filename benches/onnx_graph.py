#!/usr/bin/env python3
"""The ONNX graph of a BERT model, exported without its weights, for machines that cannot run
PyTorch (onnxruntime needs no PyTorch; exporting does).

    # where PyTorch and transformers are installed (needs only the model's config.json):
    python3 benches/onnx_graph.py export --config DIR/config.json --out GRAPH_DIR
    # where the weights are (needs onnx, numpy, safetensors):
    python3 benches/onnx_graph.py fill --graph GRAPH_DIR --model DIR --out target/minilm.onnx

`export` builds the architecture from the config, fills every parameter with distinct random
values, exports it (opset 17, dynamic batch and sequence axes, eager attention, the
`last_hidden_state` output) and writes `graph.onnx` with every initializer that is a parameter
(or its transpose) taken out, plus `weights.json` saying which parameter, transposed or not,
each one was; a parameter with no initializer fails the export.
`fill` puts the real weights (the model's `model.safetensors`) back in and, with --reference,
checks the result against sentence-transformers' vectors (cosine ≥ 0.9999 on every text).
"""
import argparse
import json
import os
import sys

from embed_peers import export_module, ort_encoder  # benches/, beside this file


def export(a):
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper
    from transformers import BertConfig, BertModel

    config = BertConfig.from_json_file(a.config)
    config._attn_implementation = "eager"
    model = BertModel(config, add_pooling_layer=False).eval()
    torch.manual_seed(0)
    with torch.no_grad():
        # Distinct values (so each initializer matches one parameter below), at BERT's own
        # scale.
        for name, p in model.named_parameters():
            p.normal_(0.0, 0.02)
            if "LayerNorm.weight" in name:
                p.add_(1.0)
    params = {k: v.detach().numpy() for k, v in model.state_dict().items() if v.dtype == torch.float32}

    os.makedirs(a.out, exist_ok=True)
    full = os.path.join(a.out, "full.onnx")
    export_module(model, full)
    m = onnx.load(full)
    by_key = {}
    for k, v in params.items():
        by_key.setdefault((v.shape, v.tobytes()), (k, False))
        if v.ndim == 2:
            by_key.setdefault((v.T.shape, np.ascontiguousarray(v.T).tobytes()), (k, True))
    mapping, kept = {}, []
    for init in m.graph.initializer:
        arr = numpy_helper.to_array(init)
        hit = by_key.get((arr.shape, arr.tobytes())) if arr.dtype == np.float32 else None
        if hit and arr.size > 1:
            mapping[init.name] = {"param": hit[0], "transposed": hit[1], "dims": list(arr.shape)}
        else:
            kept.append(init)
    del m.graph.initializer[:]
    m.graph.initializer.extend(kept)
    missing = sorted(set(params) - {v["param"] for v in mapping.values()})
    print(f"{len(mapping)} initializers are parameters, {len(kept)} kept; parameters not found: {missing}")
    if missing:
        sys.exit("some parameters are not initializers of the export")
    graph = os.path.join(a.out, "graph.onnx")
    onnx.save(m, graph)
    json.dump(mapping, open(os.path.join(a.out, "weights.json"), "w"), indent=1)
    os.remove(full)


def fill_from(graph, mapping, params, out):
    import numpy as np
    import onnx
    from onnx import numpy_helper

    m = onnx.load(graph)
    for name, w in mapping.items():
        arr = params[w["param"]].astype(np.float32)
        if w["transposed"]:
            arr = np.ascontiguousarray(arr.T)
        assert list(arr.shape) == w["dims"], (name, arr.shape, w["dims"])
        m.graph.initializer.append(numpy_helper.from_array(arr, name))
    onnx.save(m, out)


def fill(a):
    from safetensors.numpy import load_file

    mapping = json.load(open(os.path.join(a.graph, "weights.json")))
    params = load_file(os.path.join(a.model, "model.safetensors"))
    fill_from(os.path.join(a.graph, "graph.onnx"), mapping, params, a.out)
    if a.reference:
        check(a.out, a.model, a.reference)
    print(a.out)


def check(path, model_dir, reference):
    """Cosine of the filled model's vectors (mean pooled, normalised; each text alone and all in
    one padded batch) to sentence-transformers' reference vectors; exits below 0.9999."""
    import numpy as np
    import onnxruntime as ort

    items = json.load(open(reference))["items"]
    encode, _ = ort_encoder(ort.InferenceSession(path, providers=["CPUExecutionProvider"]), model_dir)

    texts = [r["text"] for r in items]
    want = np.array([r["embedding"] for r in items], dtype=np.float32)
    for how, got in [("each alone", np.vstack([encode([t]) for t in texts])), ("one batch", encode(texts))]:
        cos = (got * want).sum(1)
        print(f"{len(texts)} reference texts, {how}: cosine min {cos.min():.6f}, mean {cos.mean():.6f}")
        if cos.min() < 0.9999:
            sys.exit("the filled model does not reproduce the reference vectors")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("--config", required=True)
    e.add_argument("--out", required=True)
    f = sub.add_parser("fill")
    f.add_argument("--graph", required=True)
    f.add_argument("--model", required=True)
    f.add_argument("--out", required=True)
    f.add_argument("--reference", help="sentence-transformers' vectors to check against "
                   "(embed/tests/fixtures/minilm/reference_public.json)")
    a = ap.parse_args()
    export(a) if a.cmd == "export" else fill(a)


if __name__ == "__main__":
    main()
