#!/usr/bin/env python3
"""A mixed-length corpus of conversation turns for `embed-bench --sentences` and
`embed_peers.py --sentences`: LongMemEval-S turns of 5 to 300 tokens, in the order a
conversation ingest meets them (session after session, turn after turn), written as a JSON array.

    python3 benches/make_turns.py --data LONGMEMEVAL_DIR/longmemeval_s_dev.json.gz \
        --tokenizer DIR/tokenizer.json --n 256 --out target/turns.json

LONGMEMEVAL_DIR is wherever the LongMemEval data lies (MIT; not shipped with memloop, and no
test reads it). The dataset is read where it lies and never copied into the repository; only the output file
(under target/) holds the selected turns. Tokens are counted with the model's own tokenizer
(with [CLS] and [SEP]); `--n` turns are taken, evenly spread over the whole haystack of the
first questions, so short chat turns and long pasted documents both appear.
"""
import argparse
import gzip
import json


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="longmemeval_s_dev.json.gz (or .json)")
    p.add_argument("--tokenizer", required=True, help="the model's tokenizer.json")
    p.add_argument("--n", type=int, default=256)
    p.add_argument("--min-tokens", type=int, default=5)
    p.add_argument("--max-tokens", type=int, default=300)
    p.add_argument("--out", required=True)
    a = p.parse_args()

    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(a.tokenizer)
    tok.no_truncation()
    tok.no_padding()
    opener = gzip.open if a.data.endswith(".gz") else open
    with opener(a.data, "rt", encoding="utf-8") as f:
        questions = json.load(f)
    turns = []
    for q in questions[:20]:
        for session in q["haystack_sessions"]:
            for turn in session:
                text = turn["content"].strip()
                if text:
                    turns.append(text)
    lengths = [len(e.ids) for e in tok.encode_batch(turns)]
    kept = [(t, n) for t, n in zip(turns, lengths) if a.min_tokens <= n <= a.max_tokens]
    if len(kept) < a.n:
        raise SystemExit(f"only {len(kept)} turns of {a.min_tokens}-{a.max_tokens} tokens")
    step = len(kept) / a.n
    chosen = [kept[int(i * step)] for i in range(a.n)]
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump([t for t, _ in chosen], f, ensure_ascii=False)
    counts = sorted(n for _, n in chosen)
    print(
        f"{a.n} turns from {len(kept)} of {len(turns)}: tokens min {counts[0]}, "
        f"median {counts[len(counts) // 2]}, mean {sum(counts) / len(counts):.1f}, max {counts[-1]}"
    )


if __name__ == "__main__":
    main()
