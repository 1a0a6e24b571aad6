#!/usr/bin/env python3
"""The medians of `benches/embed_tiers.sh`'s JSON lines, as a Markdown table.

    python3 benches/tiers_table.py OUT.jsonl

One row per corpus and mask: memloop int8 and f32 and onnxruntime int8 and fp32, texts/s at
batch 1 / batch 32 (the median over the rounds), and memloop's ratios to the peer at the same
precision. A memloop line whose tier (`simd`) is not the mask it ran under, or a cell with no
line, is said so rather than left out silently.
"""

import json
import statistics
import sys
from collections import defaultdict


def key_of(line):
    """The system a line measured: memloop int8/f32 or onnxruntime int8/fp32."""
    system = line.get("system")
    if system == "memloop":
        return "memloop " + line.get("precision", "?")
    if system == "onnxruntime":
        return "onnxruntime fp32"
    if system == "onnxruntime int8":
        return "onnxruntime int8"
    return None


def main(path):
    cells = defaultdict(lambda: defaultdict(list))
    tiers = defaultdict(set)
    with open(path, encoding="utf-8") as f:
        for raw in f:
            raw = raw.strip()
            if not raw.startswith("{"):
                continue
            line = json.loads(raw)
            system = key_of(line)
            if system is None:
                continue
            row = (line.get("corpus", "?"), line.get("mask", "none"))
            cells[row][system].append((line["batch1_per_s"], line["batch32_per_s"]))
            if line.get("system") == "memloop":
                tiers[row].add(line.get("int8_kernel") if line.get("precision") == "int8"
                               else line.get("simd"))

    def median(row, system):
        values = cells[row].get(system)
        if not values:
            return None
        return (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))

    def pair(v):
        return "—" if v is None else f"{v[0]:.1f} / {v[1]:.1f}"

    def ratio(a, b):
        if a is None or b is None:
            return "—"
        return f"{a[0] / b[0]:.2f}x / {a[1] / b[1]:.2f}x"

    counts = sorted({len(v) for row in cells.values() for v in row.values()})
    print(f"Medians over {counts[0]}" + (f"-{counts[-1]}" if counts[-1] != counts[0] else "")
          + " run(s) a cell, texts/s, batch 1 / batch 32.\n")
    print("| corpus | mask | memloop tier | memloop int8 | onnxruntime int8 | ratio | "
          "memloop f32 | onnxruntime fp32 | ratio |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    order = {"sentences": 0, "turns": 1, "chunks": 2}
    masks = {"none": 0, "avxvnni": 1, "avx2": 2}
    for row in sorted(cells, key=lambda r: (order.get(r[0], 9), masks.get(r[1], 9), r)):
        mi, oi = median(row, "memloop int8"), median(row, "onnxruntime int8")
        mf, of = median(row, "memloop f32"), median(row, "onnxruntime fp32")
        seen = ", ".join(sorted(t for t in tiers[row] if t)) or "?"
        print(f"| {row[0]} | {row[1]} | {seen} | {pair(mi)} | {pair(oi)} | {ratio(mi, oi)} | "
              f"{pair(mf)} | {pair(of)} | {ratio(mf, of)} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
