"""`MemloopStore` against LangGraph's own `InMemoryStore`, the reference implementation: the
same random operation sequences (put, delete, get, search with filters and paging, list
namespaces) give the same results; namespaces never leak; it serves a LangGraph agent and
LangMem's memory tools."""

import asyncio
import random

import pytest
from langgraph.store.memory import InMemoryStore

from memloop.integrations.langgraph import MemloopStore

LABELS = ["a", "b", "c", "users", "alice", "bob", "x-y", "ü", "*"]
KEYS = ["k1", "k2", "k3", "key with space", "ключ"]
WORDS = ["tea", "coffee", "paris", "berlin", "dog", "cat", "red", "blue"]


def random_namespace(rng):
    return tuple(rng.choice(LABELS[:-1]) for _ in range(rng.randint(1, 3)))


def random_value(rng):
    value = {"text": " ".join(rng.sample(WORDS, 2)), "n": rng.randint(0, 9)}
    if rng.random() < 0.5:
        value["tag"] = rng.choice(["red", "blue"])
    if rng.random() < 0.3:
        value["nested"] = {"level": rng.randint(0, 2)}
    return value


def random_filter(rng):
    choice = rng.randrange(6)
    if choice == 0:
        return None
    if choice == 1:
        return {"tag": rng.choice(["red", "blue"])}
    if choice == 2:
        op = rng.choice(["$gt", "$gte", "$lt", "$lte", "$eq", "$ne"])
        return {"n": {op: rng.randint(0, 9)}}
    if choice == 3:
        return {"nested": {"level": rng.randint(0, 2)}}
    if choice == 4:
        return {"n": rng.randint(0, 9), "tag": "red"}
    return {"text": rng.choice(WORDS)}


def comparable(item):
    if item is None:
        return None
    return (tuple(item.namespace), item.key, item.value)


def run_sequence(seed, tmp_path):
    rng = random.Random(seed)
    reference = InMemoryStore()
    ours = MemloopStore(tmp_path / f"s{seed}", hashing_embedder=32)
    namespaces = [random_namespace(rng) for _ in range(4)]
    try:
        for step in range(rng.randint(5, 20)):
            kind = rng.random()
            ns = rng.choice(namespaces)
            key = rng.choice(KEYS)
            if kind < 0.45:
                value = random_value(rng)
                index = rng.choice([None, False, ["text"]])
                for store in (reference, ours):
                    store.put(ns, key, value, index=index)
            elif kind < 0.55:
                for store in (reference, ours):
                    store.delete(ns, key)
            elif kind < 0.7:
                assert comparable(ours.get(ns, key)) == comparable(reference.get(ns, key)), (seed, step)
            elif kind < 0.9:
                prefix = ns[: rng.randint(0, len(ns))]
                flt = random_filter(rng)
                query = rng.choice([None, None, rng.choice(WORDS)])
                want = reference.search(prefix, filter=flt, limit=1000)
                got = ours.search(prefix, filter=flt, query=query, limit=1000)
                # Membership and values must agree; order may differ (a query ranks).
                assert sorted(map(comparable, got)) == sorted(map(comparable, want)), (seed, step, prefix, flt)
                if query is None and len(got) > 1:
                    # Paging walks the same order without loss or repeat.
                    pages = []
                    for offset in range(0, len(got), 2):
                        pages += ours.search(prefix, filter=flt, limit=2, offset=offset)
                    assert list(map(comparable, pages)) == list(map(comparable, got)), (seed, step)
            else:
                depth = rng.choice([None, 1, 2])
                prefix = rng.choice([None, ns[:1]])
                suffix = rng.choice([None, ns[-1:]])
                args = dict(prefix=prefix, suffix=suffix, max_depth=depth, limit=1000)
                # InMemoryStore keeps a namespace once written (or merely read) after its last
                # item is gone; the database stores list only namespaces holding items, as
                # memloop does: the reference's empty ones are dropped before comparing.
                for empty in [n for n, items in reference._data.items() if not items]:
                    del reference._data[empty]
                assert ours.list_namespaces(**args) == reference.list_namespaces(**args), (seed, step, args)
    finally:
        ours.close()


def test_the_same_results_as_langgraphs_in_memory_store_over_1000_random_sequences(tmp_path):
    for seed in range(1000):
        run_sequence(seed, tmp_path)


def test_a_search_never_returns_an_item_outside_its_namespace_prefix(tmp_path):
    rng = random.Random(7)
    store = MemloopStore(tmp_path / "s", hashing_embedder=32, user_at=1)
    written = {}
    for _ in range(200):
        ns = ("memories", rng.choice(["alice", "bob", "carol", "alice2"]), rng.choice(["p", "q"]))
        key = rng.choice(KEYS)
        value = random_value(rng)
        store.put(ns, key, value)
        written[(ns, key)] = value
    for _ in range(200):
        prefix = ("memories", rng.choice(["alice", "bob", "carol", "al"]))[: rng.randint(1, 2)]
        query = rng.choice([None, rng.choice(WORDS)])
        for item in store.search(prefix, query=query, limit=1000):
            assert tuple(item.namespace[: len(prefix)]) == prefix, (prefix, item)
        want = {k for k in written if k[0][: len(prefix)] == prefix}
        got = {(tuple(i.namespace), i.key) for i in store.search(prefix, limit=1000)}
        assert got == want
    # The user position is a memloop scope: the engine itself confines a read to it.
    alice = store.memory.list(user="alice", limit=1000)
    assert alice and all(i.user == "alice" for i in alice)
    store.close()


def test_ttl_hides_expired_items_and_a_read_refreshes_it(tmp_path):
    store = MemloopStore(tmp_path / "s", hashing_embedder=32, ttl={"refresh_on_read": True})
    store.put(("t",), "short", {"v": 1}, ttl=0.0001)  # 6 ms
    store.put(("t",), "long", {"v": 2}, ttl=10)
    asyncio.run(asyncio.sleep(0.05))
    assert store.get(("t",), "short") is None
    assert [i.key for i in store.search(("t",))] == ["long"]
    assert store.sweep_ttl() == 1
    assert store.get(("t",), "long").value == {"v": 2}
    store.close()


def test_async_methods_run_off_the_event_loop(tmp_path):
    store = MemloopStore(tmp_path / "s", hashing_embedder=32)

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        t = asyncio.create_task(ticker())
        for i in range(50):
            await store.aput(("a",), f"k{i}", {"text": f"item {i}"})
        found = await store.asearch(("a",), query="item 7", limit=5)
        t.cancel()
        return ticks, found

    ticks, found = asyncio.run(main())
    assert ticks > 50, "the event loop did not run while the store worked"
    assert found and all(i.namespace == ("a",) for i in found)
    store.close()


def test_a_put_replaces_and_survives_a_reopen(tmp_path):
    with MemloopStore(tmp_path / "s", hashing_embedder=32) as store:
        store.put(("a",), "k", {"text": "first"})
        first = store.get(("a",), "k")
        store.put(("a",), "k", {"text": "second"})
    with MemloopStore(tmp_path / "s", hashing_embedder=32) as store:
        item = store.get(("a",), "k")
        assert item.value == {"text": "second"}
        assert item.created_at == first.created_at
        assert len(store.search(("a",))) == 1


def test_bad_values_and_namespaces_are_refused_before_a_write(tmp_path):
    with MemloopStore(tmp_path / "s", hashing_embedder=32) as store:
        with pytest.raises(Exception):
            store.put(("a",), "k", {"x": object()})
        with pytest.raises(Exception):
            store.put(("a", ""), "k", {"x": 1})
        with pytest.raises(ValueError):
            store.search(("a",), filter={"n": {"$regex": "x"}})
        assert store.search(("a",)) == []


def test_two_versions_left_by_a_crash_mid_put_read_as_the_newest_and_are_repaired(tmp_path):
    store = MemloopStore(tmp_path / "s", hashing_embedder=32)
    store.put(("a",), "k", {"text": "old"})
    old = store.memory.list(tags=["langgraph"])[0]
    # A put's first step alone, as a crash before its second leaves it: the new version is
    # written and the old one not yet forgotten.
    store.memory.remember(
        "new", kind="document", namespace=old.namespace, tags=old.tags, pinned=True,
        concise=old.concise.replace('"old"', '"new"'),
    )
    assert len(store.memory.list(tags=["langgraph"])) == 2
    assert store.get(("a",), "k").value == {"text": "new"}
    reopened = MemloopStore(memory=store.memory)
    assert [i.value for i in reopened.search(("a",))] == [{"text": "new"}]
    assert len(store.memory.list(tags=["langgraph"])) == 1
    store.close()


def test_memories_it_did_not_write_are_not_taken_for_items(tmp_path):
    store = MemloopStore(tmp_path / "s", hashing_embedder=32)
    store.put(("a",), "k", {"text": "mine"})
    # Another program's memories with the adapter's tag and kind, but not its layout.
    store.memory.remember("theirs", kind="document", tags=["langgraph", 'langgraph.ns:["a"]'])
    store.memory.remember("theirs too", kind="document", namespace="langgraph:[", tags=["langgraph"],
                          concise="not json")
    assert [i.key for i in store.search(("a",))] == ["k"]
    assert [i.key for i in store.search(("a",), query="theirs")] == ["k"]
    assert store.list_namespaces() == [("a",)]
    assert store.sweep_ttl() == 0
    store.close()
