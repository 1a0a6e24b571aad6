"""A memloop change stream loaded into LanceDB (`lancedb` and `pyarrow` from PyPI): a real store
of a few thousand memories (the real model, through the `memloop` command), exported to
Parquet, searched in LanceDB with the same top-10 as an exact search over memloop's vectors;
then a `--since` delta with updates and deletes applied (merge-insert on `id`, deletes by `op`)
and matched again."""

import json
import os
import pathlib
import subprocess

import lancedb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

BIN = os.environ.get("MEMLOOP_BIN", str(pathlib.Path(__file__).resolve().parents[3] / "target" / "debug" / "memloop"))

SUBJECTS = ["the harbor crane", "a violin maker", "the night train", "our build server",
            "the orchid house", "a glacier survey", "the city library", "a reactor valve",
            "the canyon trail", "a quartz clock", "the tundra station", "a meadow farm"]
VERBS = ["was repaired on", "opened again on", "failed twice on", "was painted on",
         "was measured on", "moved north on", "was sold on", "was inspected on"]


def memloop(store, *args, stdin=None):
    run = subprocess.run([BIN, "--store", str(store), *args], input=stdin, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return run.stdout


def texts(n):
    return [f"{SUBJECTS[i % 12]} {VERBS[(i // 12) % 8]} day {i} of the season, ticket {i * 7919 % 10007}"
            for i in range(n)]


def exact_top10(table, queries):
    """Exact search over the exported vectors (the stored unit vectors, bit for bit)."""
    ids = np.array(table.column("id").to_pylist(), dtype=np.uint64)
    vectors = np.stack(table.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32)
    scores = queries @ vectors.T
    return [list(ids[np.argsort(-row, kind="stable")[:10]]) for row in scores]


def lance_top10(lance, queries):
    out = []
    for q in queries:
        hits = lance.search(q).metric("dot").limit(10).to_arrow()
        out.append(list(np.array(hits.column("id").to_pylist(), dtype=np.uint64)))
    return out


def agree(a, b):
    """Same top-10 sets (ties at the boundary may order differently)."""
    return all(set(x) == set(y) for x, y in zip(a, b))


def test_a_change_stream_loads_into_lancedb_and_a_delta_keeps_it_in_step(tmp_path):
    store = tmp_path / "store"
    lines = "".join(json.dumps({"text": t}) + "\n" for t in texts(3000))
    memloop(store, "ingest", "-", stdin=lines)
    full = tmp_path / "full.parquet"
    report = json.loads(memloop(store, "export", "--format", "parquet", str(full)))
    assert report["upserts"] == 3000 and report["deletes"] == 0
    table = pq.read_table(full)
    meta = {k.decode(): v.decode() for k, v in table.schema.metadata.items()}
    assert meta["memloop.model"].startswith("all-MiniLM-L6-v2") and meta["memloop.dim"] == "384"

    db = lancedb.connect(str(tmp_path / "lance"))
    lance = db.create_table("memories", data=table)
    questions = ["which train failed", "when was the library opened", "clock ticket 5",
                 "harbor crane repairs", "the farm was sold", "glacier measurements north"]
    query_lines = "".join(json.dumps(q) + "\n" for q in questions)
    queries = np.array([json.loads(line) for line in
                        memloop(store, "embed", "--query", stdin=query_lines).splitlines()],
                       dtype=np.float32)
    assert agree(lance_top10(lance, queries), exact_top10(table, queries))
    # memloop's own recall finds the same best memory, unless the question asks when: then
    # memories that say when are boosted (explained), and the best by vector is still among
    # the ten; or unless a newer value of the same statement took its place (these texts
    # differ only in their day and ticket: the one remembered last ranks first, explained).
    for q, want in zip(questions, exact_top10(table, queries)):
        hits = json.loads(memloop(store, "recall", q, "--k", "10", "--json", "--explain"))
        got = hits["hits"]
        if q.startswith("when"):
            boosted = got[0]["explain"]["time"] or {}
            assert boosted.get("cue") == "asks when; it says when" or got[0]["explain"]["newest_first"], got[0]
            assert int(want[0]) in [int(h["id"]) for h in got], q
        elif int(got[0]["id"]) != int(want[0]):
            took = got[0]["explain"]["newest_first"]
            assert took == {"place_of": int(want[0]), "newer": True}, (q, got[0])
        else:
            assert got[0]["explain"]["newest_first"] is None, q

    # Changes: 20 forgotten, 2 new; the recalls above updated their hits (access time,
    # reinforcement), which the delta carries too.
    ids = [int(i) for i in table.column("id").to_pylist()]
    for i in ids[:20]:
        memloop(store, "forget", str(i))
    for t in ["the harbor crane was replaced on day 9000", "a new violin was sold on day 9001"]:
        memloop(store, "remember", t)
    delta = tmp_path / "delta.parquet"
    d = json.loads(memloop(store, "export", "--format", "parquet", "--since",
                           str(report["through"]), str(delta)))
    assert d["deletes"] == 20 and d["upserts"] >= 2 and d["since"] == report["through"]
    changes = pq.read_table(delta)
    assert {"the harbor crane was replaced on day 9000", "a new violin was sold on day 9001"} <= \
        set(changes.column("text").to_pylist())
    upserts = changes.filter(pa.compute.equal(changes.column("op"), "upsert"))
    deletes = changes.filter(pa.compute.equal(changes.column("op"), "delete"))
    (lance.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
     .execute(upserts))
    gone = ", ".join(str(i) for i in deletes.column("id").to_pylist())
    lance.delete(f"id IN ({gone})")
    assert lance.count_rows() == 3000 - 20 + 2

    # The mirror now equals a fresh full export.
    again = tmp_path / "again.parquet"
    memloop(store, "export", "--format", "parquet", str(again))
    now = pq.read_table(again)
    assert sorted(now.column("id").to_pylist()) == sorted(lance.to_arrow().column("id").to_pylist())
    assert agree(lance_top10(lance, queries), exact_top10(now, queries))
