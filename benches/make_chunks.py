#!/usr/bin/env python3
"""The embedding benchmarks' "200-token chunks": 256 pieces of 150 words of the State of the
Union addresses (the demo's corpus, cached by `memloop demo` in ~/.cache/memloop/corpora):
the addresses' words one after another in year order (1790-2016), a piece starting at every
256th of them; written as a JSON array for `embed-bench --sentences` and
`benches/embed_peers.py --sentences`.

    python3 benches/make_chunks.py [--corpus DIR] --out target/chunks.json
"""
import argparse
import glob
import json
import os


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    found = sorted(glob.glob(os.path.expanduser("~/.cache/memloop/corpora/sotu-*")))
    ap.add_argument("--corpus", default=found[-1] if found else None, help="the folder of addresses (one .txt each)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=256)
    ap.add_argument("--words", type=int, default=150)
    a = ap.parse_args()
    if not a.corpus:
        ap.error("no corpus: run `memloop demo` once (it fetches the addresses), or pass --corpus")
    files = sorted(glob.glob(os.path.join(a.corpus, "*.txt")))
    words = [w for f in files for w in open(f, encoding="utf-8").read().split()]
    if len(words) < a.count * a.words:
        ap.error(f"{a.corpus}: {len(words)} words, fewer than {a.count} pieces of {a.words}")
    step = (len(words) - a.words) // (a.count - 1)
    chunks = [" ".join(words[i * step:i * step + a.words]) for i in range(a.count)]
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(chunks, f, ensure_ascii=False)
    print(f"{len(chunks)} chunks of {a.words} words from {len(files)} addresses ({len(words)} words) in {a.corpus}")


if __name__ == "__main__":
    main()
