#!/usr/bin/env python3
"""Turns ann-bench / peers.py JSON lines into the BENCHMARKS.md table: per system, build time,
open time, RSS after open, and QPS at recall@10 = 0.95 and 0.99 (linear interpolation between
the two measured ef values that bracket the target), plus the ratio of memloop's best vector
mode to each, RSS after the searches and file bytes per vector.

    python3 benches/summarize.py ann-rust.jsonl ann-peers.jsonl
"""
import json
import sys


def at_recall(points, target):
    points = sorted(points)  # (recall, qps)
    for (r0, q0), (r1, q1) in zip(points, points[1:]):
        if r0 <= target <= r1:
            if r1 == r0:
                return max(q0, q1)
            return q0 + (q1 - q0) * (target - r0) / (r1 - r0)
    return None


def label(o):
    """A system with its vector mode: `memloop int8`, `usearch-bf16 bf16` reads as `usearch-bf16`."""
    v = o.get("vectors", "f32")
    return o["system"] if v == "f32" or o["system"] != "memloop" else f"memloop {v}"


def main():
    systems = {}
    for path in sys.argv[1:]:
        for line in open(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            o = json.loads(line)
            s = systems.setdefault(label(o), {"points": []})
            if o.get("phase") in ("build", "open", "searched"):
                s[o["phase"]] = o
            elif "ef" in o and "recall" in o:
                s["points"].append((o["recall"], o["qps"]))
    rows = []
    for name, s in systems.items():
        rows.append((name, at_recall(s["points"], 0.95), at_recall(s["points"], 0.99), s))
    # memloop's best mode at each target is the one compared with every system.
    ours = [r for r in rows if r[0].startswith("memloop")]
    base95 = max((r[1] for r in ours if r[1] is not None), default=None)
    base99 = max((r[2] for r in ours if r[2] is not None), default=None)
    fmt = lambda x: "—" if x is None else f"{x:,.0f}"
    ratio = lambda b, x: "—" if (b is None or x is None) else f"{b / x:.2f}x"
    print("| system | QPS @ R=0.95 | best memloop / it | QPS @ R=0.99 | best memloop / it | build (2 threads) "
          "| open | RSS after open | RSS after searches | file | bytes / vector |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, q95, q99, s in rows:
        b, o, se = s.get("build", {}), s.get("open", {}), s.get("searched", {})
        per = "—"
        if "file_mb" in o and b.get("n"):
            per = f"{o['file_mb'] * 2**20 / b['n']:,.0f}"
        print(f"| {name} | {fmt(q95)} | {ratio(base95, q95)} | {fmt(q99)} | {ratio(base99, q99)} | "
              f"{b.get('seconds', '—')} s | {o.get('ms', '—')} ms | {o.get('rss_mb', '—')} MB | "
              f"{se.get('rss_mb', '—')} MB ({se.get('searches', '?')} searches) | {o.get('file_mb', '—')} MB | {per} |")
    print()
    print("Raw points (recall@10 / QPS):")
    for name, _, _, s in rows:
        print(f"- {name}: " + ", ".join(f"{r:.4f} / {q:,.0f}" for r, q in sorted(s["points"])))


if __name__ == "__main__":
    main()
