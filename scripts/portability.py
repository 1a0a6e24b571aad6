#!/usr/bin/env python3
"""Files written on one platform open on another and answer the same.

Runs the real `memloop` built for this machine (x86-64 Linux) and one built for another
platform, run through its emulator: aarch64 Linux under qemu-aarch64, or Windows under Wine.
Each in turn writes: a plain store (a new store's int8 index), stores whose index keeps f32
vectors or bf16 codes, an encrypted store (a key file), and an export of the first. The other copies
them; there `memloop check` must accept each index file as it is (no rebuild) and find no
problem, and every query must recall the same ids in the same order with the same scores, to
the bit (every f32 distance kernel sums in one order: memloop_index::simd::dot_portable).
Both machines then import the export into new stores and must recall the same there too. A
deterministic embedder stands in for the model (the test is about the files, not meaning) and
a manual clock fixes the time the ranking's decay reads.

Usage: portability.py HOST_MEMLOOP NAME COMMAND...   (COMMAND: how to run the other memloop,
e.g. `aarch64 qemu-aarch64 -L /usr/aarch64-linux-gnu target/.../memloop`, or
`windows /usr/lib/wine/wine64 target/.../memloop.exe`)
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

CLOCK = "1764000000000"
DIM = "48"
QUERIES = [
    "the staging database password rotates on mondays",
    "alice prefers green tea in the morning",
    "deploy the api with the helm chart",
    "memory 417 about topic 3",
    "a sentence that matches nothing in particular",
]
# Memories: enough for the index's graph to have several levels and its search to leave
# the exact path.
WORDS = "alpha beta gamma delta tea coffee deploy chart password monday helm api green".split()


def memories():
    for i in range(700):
        words = " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(6))
        yield {
            "text": f"memory {i} about topic {i % 11}: {words}",
            "kind": ["fact", "chunk", "summary"][i % 3],
            "tags": [f"t{i % 5}"],
        }


def run(cmd, store, args, key=None, stdin=None):
    full = cmd + ["--store", store, "--hashing-embedder", DIM, "--manual-clock", CLOCK]
    if key:
        full += ["--key-file", key]
    out = subprocess.run(
        full + args, input=stdin, capture_output=True, text=True, timeout=900
    )
    if out.returncode != 0:
        sys.exit(f"{' '.join(full + args)} failed ({out.returncode}):\n{out.stderr}")
    return out.stdout


def recalls(cmd, store, key=None):
    answers = []
    for q in QUERIES:
        hits = json.loads(run(cmd, store, ["recall", q, "--k", "10", "--json"], key))["hits"]
        answers.append([(h["id"], h["score"]) for h in hits])
    return answers


def same(what, want, got):
    for q, w, g in zip(QUERIES, want, got):
        if [i for i, _ in w] != [i for i, _ in g]:
            sys.exit(f"{what}: {q!r} recalled {[i for i, _ in g]}, wanted {[i for i, _ in w]}")
        for (i, a), (_, b) in zip(w, g):
            if a != b:
                sys.exit(f"{what}: {q!r} scored id {i} {b!r}, wanted {a!r}")
        if not w:
            sys.exit(f"{what}: {q!r} recalled nothing")


def main():
    host, other = sys.argv[1], sys.argv[2]
    machines = {"x86-64": [host], other: sys.argv[3:]}
    lines = "".join(json.dumps(m) + "\n" for m in memories())
    root = tempfile.mkdtemp(prefix="memloop-portability-")
    try:
        for writer, reader in [("x86-64", other), (other, "x86-64")]:
            w, r = machines[writer], machines[reader]
            base = os.path.join(root, f"{writer}-wrote")
            os.makedirs(base)
            key = os.path.join(base, "store.key")
            stores = {
                "plain": ([], None),
                "f32-index": (["--index-vectors", "f32"], None),
                "bf16-index": (["--index-vectors", "bf16"], None),
                "encrypted": ([], key),
            }
            for name, (extra, k) in stores.items():
                store = os.path.join(base, name)
                run(w, store, extra + ["ingest", "-"], k, stdin=lines)
                shutil.copytree(store, store + ".copy")
            # The key file travels out of band, and is installed private to its user as a key
            # must be (Wine gives the file Windows made mode 0750 on Linux, which Linux refuses).
            os.chmod(key, 0o600)
            export = os.path.join(base, "plain.mlx")
            run(w, os.path.join(base, "plain"), ["export", export])
            for name, (_, k) in stores.items():
                store = os.path.join(base, name)
                # The copy's index file and database must be believed as they are: a store
                # that rebuilt its index from the vectors would answer the same and hide it.
                checked = json.loads(run(r, store + ".copy", ["check", "--json"], k))
                if checked["index_rebuilt"] is not None or checked["problems"]:
                    sys.exit(f"{name} store written on {writer}, checked on {reader}: {checked}")
                want = recalls(w, store, k)
                got = recalls(r, store + ".copy", k)
                same(f"{name} store written on {writer}, read on {reader}", want, got)
                print(f"ok: {name} store written on {writer} recalls the same on {reader}")
            imported = {}
            for m, cmd in machines.items():
                store = os.path.join(base, f"imported-on-{m}")
                run(cmd, store, ["import", export])
                imported[m] = recalls(cmd, store)
            same(f"export written on {writer}, imported on {reader}", imported[writer], imported[reader])
            print(f"ok: an export written on {writer} imports and recalls the same on {reader}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
