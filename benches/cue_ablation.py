#!/usr/bin/env python3
"""Recall's cues measured one at a time: `retrieval-bench --strategy rerank` with every cue on,
then with each cue off alone (`--cues-off NAME`), then with none, on LongMemEval-S dev, LoCoMo
dev (plain memories, and as conversations) and SciFact test. Prints the ablation table (each
figure with every cue on, and what switching one cue off changes it by) and writes every JSON
line retrieval-bench printed to --out.

    cargo build --release -p memloop-benches --bin retrieval-bench
    python3 benches/cue_ablation.py --datasets DIR --out docs/bench-data/cues-YYYY-MM-DD.jsonl

DIR holds longmemeval/, locomo/ and beir-scifact/ as the project's shared datasets lay them out;
they are read by path and never copied into the repository (LoCoMo's licence is non-commercial).
The embeddings come from
retrieval-bench's cache (the first run embeds).
"""
import argparse
import json
import os
import subprocess
import sys
import time

CUES = ["time", "preference", "quantity", "acquired", "age", "event", "newest-first"]

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def datasets(root):
    """(label, retrieval-bench arguments) for each dataset."""
    return [
        ("longmemeval", ["--longmemeval", f"{root}/longmemeval/longmemeval_s_dev.json.gz"]),
        ("locomo", ["--locomo", f"{root}/locomo/locomo_dev6.json"]),
        ("locomo-conversations", ["--locomo", f"{root}/locomo/locomo_dev6.json", "--conversations"]),
        ("scifact", ["--beir", f"{root}/beir-scifact"]),
    ]


def figures(label, lines, strategy="rerank"):
    """The figures the table shows for one dataset's run of `strategy`, by name."""
    out = {}
    for line in lines:
        if line.get("strategy") != strategy or "ingest" in line:
            continue
        if label == "longmemeval":
            kind, gran = line.get("question_type"), line.get("granularity")
            if kind == "all" and gran == "turn":
                out["recall_all@10"] = line["recall_all@10"]
                out["ndcg_any@10"] = line["ndcg_any@10"]
            elif kind == "all" and gran == "session":
                out["session recall_any@5"] = line["recall_any@5"]
            elif gran == "turn":
                out[f"type {kind}"] = line["recall_all@10"]
        elif "recall_at_10" in line and "category" not in line:
            out["R@10"] = line["recall_at_10"]
            out["nDCG@10"] = line["ndcg_at_10"]
    types = [v for k, v in out.items() if k.startswith("type ")]
    if types:
        out["lowest type"] = min(types)
    return out


def run(binary, label, args, off, log):
    cmd = [binary, *args, "--strategy", "rerank", "--json"]
    if off:
        cmd += ["--cues-off", off.replace("+", ",")]
    started = time.time()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    lines = [json.loads(l) for l in done.stdout.splitlines() if l.startswith("{")]
    for line in lines:
        line["cues_off"] = off or None
        line["run"] = label
        log.write(json.dumps(line) + "\n")
    log.flush()
    print(f"{label:22} cues off: {off or '-':13} {time.time() - started:6.0f} s", file=sys.stderr)
    return figures(label, lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default="target/release/retrieval-bench")
    p.add_argument("--datasets", required=True,
                   help="the directory holding longmemeval/, locomo/ and beir-scifact/")
    p.add_argument("--out", required=True, help="every JSON line, labelled, to this file")
    p.add_argument("--cues", default=",".join(CUES),
                   help="the cues switched off one at a time; a+b switches a and b off together")
    p.add_argument("--only", default="", help="comma-separated datasets (default: all four)")
    a = p.parse_args()
    offs = [""] + a.cues.split(",") + ["all"]
    if not os.path.isdir(a.datasets):
        sys.exit(f"no datasets directory at {a.datasets}")
    sets = [d for d in datasets(a.datasets) if not a.only or d[0] in a.only.split(",")]
    table = {}
    with open(a.out, "a") as log:
        for label, args in sets:
            for off in offs:
                table[(label, off)] = run(a.bin, label, args, off, log)
    for label, _ in sets:
        base = table[(label, "")]
        print(f"\n{label}: every cue on, and the change with one cue off")
        names = list(base)
        print("| cue off | " + " | ".join(names) + " |")
        print("|---|" + "---:|" * len(names))
        print("| (none) | " + " | ".join(f"{base[n]:.4f}" for n in names) + " |")
        for off in offs[1:]:
            row = table[(label, off)]
            cells = [f"{row.get(n, float('nan')) - base[n]:+.4f}" for n in names]
            print(f"| {off} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
