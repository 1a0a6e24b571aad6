"""The whole Python API against the real library."""

import datetime as dt
import re

import pytest

import memloop
from conftest import START


def test_remember_get_and_merge(store):
    a = store.remember("the cache lives in redis", kind="fact", tags=["infra", "cache"],
                       importance=0.8, concise="cache: redis", brief="redis",
                       subject="cache", source="notes.md", pinned=True)
    item = store.get(a)
    assert isinstance(item, memloop.Item)
    assert (item.id, item.kind, item.text) == (a, "fact", "the cache lives in redis")
    assert item.tags == ["cache", "infra"] and item.pinned and item.subject == "cache"
    assert item.importance == pytest.approx(0.8)
    assert (item.concise, item.brief) == ("cache: redis", "redis")
    assert item.data["sources"][0]["document"] == "notes.md"
    assert item.namespace == "default" and item.tier == "working"
    # an exact duplicate merges into the same memory
    assert store.remember("the cache lives in redis", kind="fact") == a
    assert store.get(a).count == 2
    assert store.get(123456) is None


def test_recall_filters_and_strategies(store):
    ids = [store.remember(f"note number {i} about topic {i % 3}", namespace=f"ns{i % 2}",
                          kind="fact" if i % 2 else "chunk", tags=["t"] if i < 4 else [])
           for i in range(10)]
    hits = store.recall("note number 3 about topic 0", k=3)
    assert len(hits) == 3 and isinstance(hits[0], memloop.Hit)
    assert hits[0].id == ids[3] and hits[0].text == "note number 3 about topic 0"
    assert hits[0].rank == 0 and hits[0].score >= hits[1].score
    assert hits[0].item.id == hits[0].id and hits[0].tier == "working"
    assert "vector" in hits[0].explain
    assert all(h.item.namespace == "ns1" for h in store.recall("note", k=10, namespace="ns1"))
    assert all(h.kind == "chunk" for h in store.recall("note", k=10, kinds=["chunk"]))
    assert {h.id for h in store.recall("note", k=10, tags=["t"])} == set(ids[:4])
    for strategy in ("single", "rerank", "iterative"):
        assert store.recall("note number 7", k=2, strategy=strategy)[0].id == ids[7]
    with pytest.raises(memloop.InvalidArgumentError, match="unknown strategy"):
        store.recall("note", strategy="magic")


def test_context_fits_the_budget(store):
    for i in range(20):
        store.remember(f"memory {i}: " + "word " * 30)
    context = store.context("memory 3", budget=60, k=8)
    assert isinstance(context, memloop.Context)
    assert 0 < context.tokens <= 60
    assert context.blocks and all(isinstance(b, memloop.Block) for b in context.blocks)
    assert context.blocks[0].label == "Key Reference"
    assert context.blocks[0].text in context.text


def test_feedback_task_observe_forget(store):
    a = store.remember("deploy with the blue-green script")
    store.feedback(a, 5)
    assert store.get(a).importance > 0.5
    for bad in (0, 6, -1, 2**40):
        with pytest.raises(memloop.InvalidArgumentError, match="outside 1..=5"):
            store.feedback(a, bad)
    with pytest.raises(memloop.InvalidArgumentError):
        store.feedback(a, "5")
    with pytest.raises(memloop.NotFoundError):
        store.feedback(999_999, 3)

    failed = store.record_task("deploy the api", ["ran deploy.sh", "it timed out"], False,
                               reflection="raise the health-check timeout first")
    task = store.get(failed)
    assert task.kind == "task" and "deploy the api" in task.text
    assert any(h.kind == "reflection" for h in store.recall("health-check timeout", k=5))
    worked = store.record_task("deploy the api", ["raised the timeout", "ran deploy.sh"], True)
    assert worked != failed

    s = store.observe("src/main.rs", "create", "fn main() {}")
    assert store.observe("src/main.rs", "modified", "fn main() { run() }") == s
    assert store.get(s).kind == "subject"
    # The engine's one error for an unknown event, as every door gives it.
    with pytest.raises(
        memloop.InvalidArgumentError,
        match='unknown event "exploded", not one of created, modified, executed, deleted',
    ):
        store.observe("src/main.rs", "exploded")

    store.forget(a)
    assert store.get(a) is None
    with pytest.raises(memloop.NotFoundError, match="no memory with id"):
        store.forget(a)


def test_manual_clock_sweep_and_stats(store):
    a = store.remember("a passing remark", importance=0.1)
    keep = store.remember("the root password is in the vault", pinned=True)
    assert store.stats()["memories"] == 2
    store.set_time(START + 3600)
    store.set_time(dt.datetime.fromtimestamp(START + 7200, tz=dt.timezone.utc))
    with pytest.raises(memloop.InvalidArgumentError, match="before"):
        store.set_time(START)
    with pytest.raises(memloop.InvalidArgumentError, match="timezone"):
        store.set_time(dt.datetime(2030, 1, 1))
    store.set_time(START + 400 * 86400)  # long after the remark decayed
    report = store.sweep()
    assert report["forgotten"] >= 1
    assert store.get(a) is None and store.get(keep) is not None
    stats = store.stats()
    assert stats["memories"] == 1 and stats["working"] + stats["long_term"] == 1


def test_system_clock_cannot_be_set(tmp_path):
    with memloop.Memory(tmp_path / "s", hashing_embedder=16) as m:
        with pytest.raises(memloop.InvalidArgumentError, match="system clock"):
            m.set_time(START)


def test_export_import_roundtrip(store, tmp_path):
    ids = [store.remember(f"exported memory {i}") for i in range(5)]
    path = tmp_path / "all.mlx"
    assert store.export(path)["exported"] == 5
    with memloop.Memory(tmp_path / "other", hashing_embedder=64) as other:
        report = other.import_(path)
        assert report["added"] == 5 and not report["reembedded"]
        assert other.get(ids[2]).text == "exported memory 2"
        assert other.recall("exported memory 4", k=1)[0].id == ids[4]


def test_close_is_idempotent_and_final(tmp_path):
    m = memloop.Memory(tmp_path / "s", hashing_embedder=16)
    m.remember("x")
    assert not m.closed
    m.close()
    m.close()
    assert m.closed
    with pytest.raises(memloop.InvalidArgumentError, match="closed"):
        m.recall("x")
    # durable: reopening finds it
    with memloop.Memory(tmp_path / "s", hashing_embedder=16) as again:
        assert again.recall("x", k=1)[0].text == "x"


def test_semantic_recall_and_context_on_the_real_model(model_store):
    hits = model_store.recall("which port does the staging db listen on?", k=2)
    assert "PostgreSQL" in hits[0].text and hits[0].score > 0.4
    hits = model_store.recall("what does Alice like?", k=1, tags=["preference"])
    assert hits[0].text.startswith("Alice")
    context = model_store.context("how do we ship to staging?", budget=40, k=4)
    assert context.tokens <= 40 and context.blocks
    # A new store takes int8 on a CPU with AVX2 (its fingerprint says so), else f32.
    assert re.match(r"all-MiniLM-L6-v2(\+int8)?(\+sentences)?:53aa5117", model_store.stats()["model"])


def test_version():
    assert memloop.__version__.count(".") == 2


def test_a_changed_fact_is_a_new_version_not_a_merge(tmp_path):
    with memloop.Memory(tmp_path / "facts") as m:  # the real model: MiniLM finds them near
        old = m.remember_explained("The staging database listens on port 5432.", kind="fact")
        assert old.action == "new" and old.previous is None
        new = m.remember_explained("The staging database listens on port 5433.", kind="fact")
        assert new.action == "superseded" and new.previous == old.id and new.id != old.id
        assert m.get(new.id).text.endswith("5433.")
        again = m.remember_explained("the staging database listens on port 5433", kind="fact")
        assert (again.id, again.action) == (new.id, "merged")
        assert isinstance(again, memloop.Remembered)


def test_check_finds_and_repairs_a_damaged_index(tmp_path):
    path = tmp_path / "s"
    with memloop.Memory(path, hashing_embedder=64) as m:
        ids = [m.remember(f"checked memory number {i} about topic {i * 7}") for i in range(50)]
        report = m.check()
        assert report["memories"] == 50 and report["problems"] == []
        assert report["index_rebuilt"] is None
    index = path / "index.mlx"
    data = bytearray(index.read_bytes())
    for i in range(1024, 3072):
        data[i] ^= 0x5A
    index.write_bytes(bytes(data))
    with memloop.Memory(path, hashing_embedder=64) as m:
        report = m.check()
        assert report["problems"] == [] and "verification" in report["index_rebuilt"]
        assert m.recall("checked memory number 17 about topic 119", k=1)[0].id == ids[17]


def test_a_manual_clock_without_start_begins_where_set_time_puts_it(tmp_path):
    m = memloop.Memory(str(tmp_path / "s"), clock="manual", hashing_embedder=32)
    try:
        m.set_time(1_000_000)
        i = m.remember("set at a million seconds")
        assert m.get(i).created == 1_000_000_000  # milliseconds
        m.set_time(2_000_000)
        with pytest.raises(memloop.InvalidArgumentError):
            m.set_time(1_500_000)  # and only forward from there
    finally:
        m.close()
