#!/usr/bin/env python3
"""Turns ann-bench / peers.py JSON lines into the BENCHMARKS.md table: per system, build time,
open time, RSS after open, and QPS at recall@10 = 0.95 and 0.99 (linear interpolation between
the two measured ef values that bracket the target), plus the ratio to memloop.

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


def main():
    systems = {}
    for path in sys.argv[1:]:
        for line in open(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            o = json.loads(line)
            s = systems.setdefault(o["system"], {"points": []})
            if o.get("phase") in ("build", "open"):
                s[o["phase"]] = o
            elif "ef" in o and "recall" in o:
                s["points"].append((o["recall"], o["qps"]))
    rows = []
    for name, s in systems.items():
        rows.append((name, at_recall(s["points"], 0.95), at_recall(s["points"], 0.99), s))
    base95 = next((r[1] for r in rows if r[0] == "memloop"), None)
    base99 = next((r[2] for r in rows if r[0] == "memloop"), None)
    fmt = lambda x: "—" if x is None else f"{x:,.0f}"
    ratio = lambda b, x: "—" if (b is None or x is None) else f"{b / x:.2f}x"
    print("| system | QPS @ R=0.95 | memloop / it | QPS @ R=0.99 | memloop / it | build (2 threads) | open | RSS after open | file |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, q95, q99, s in rows:
        b, o = s.get("build", {}), s.get("open", {})
        print(f"| {name} | {fmt(q95)} | {ratio(base95, q95)} | {fmt(q99)} | {ratio(base99, q99)} | "
              f"{b.get('seconds', '—')} s | {o.get('ms', '—')} ms | {o.get('rss_mb', '—')} MB | {o.get('file_mb', '—')} MB |")


if __name__ == "__main__":
    main()
