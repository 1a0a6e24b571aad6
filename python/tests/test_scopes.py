"""Scopes from Python: a user's memories are theirs alone, and erasing a user is physical."""

import pytest

import memloop


def test_scoped_memories_stay_with_their_user(store):
    a = store.remember("likes green tea", kind="fact", user="ana", agent="planner")
    b = store.remember("likes green tea", kind="fact", user="bo")
    assert a != b  # equal texts of two users never merge
    item = store.get(a)
    assert (item.user, item.agent, item.session) == ("ana", "planner", None)
    ids = store.remember_batch([{"text": "ana's cat is Miso", "user": "ana", "session": "s1"},
                                {"text": "bo's cat is Tom", "user": "bo"}])
    for user in ("ana", "bo"):
        hits = store.recall("cat tea", k=10, user=user, strategy="rerank")
        assert hits and all(h.item.user == user for h in hits)
        context = store.context("cat tea", budget=100, user=user)
        assert all(store.get(b.id).user == user for b in context.blocks)
    assert [h.id for h in store.recall("cat", k=10, session="s1")] == [ids[0]]
    with pytest.raises(memloop.InvalidArgumentError, match="user is empty"):
        store.remember("x", user="")
    with pytest.raises(memloop.InvalidArgumentError):
        store.recall("x", user=5)


def test_forget_scope_erases_a_user_from_every_file(tmp_path):
    secret = "okapi-91d2-planted"
    path = tmp_path / "s"
    with memloop.Memory(path, hashing_embedder=64) as m:
        m.remember_batch([{"text": f"{secret} note {i}", "user": "ana"} for i in range(30)])
        m.remember_batch([f"public note {i}" for i in range(30)])
        m.checkpoint()
        assert any(secret.encode() in f.read_bytes() for f in path.iterdir() if f.is_file())
        report = m.forget_scope(user="ana")
        assert report["memories"] == 30 and report["scope"]["user"] == "ana"
        assert m.recall(secret, k=5, user="ana") == []
        with pytest.raises(memloop.InvalidArgumentError, match="needs a user"):
            m.forget_scope()
    assert not any(secret.encode() in f.read_bytes() for f in path.iterdir() if f.is_file())
    with memloop.Memory(path, hashing_embedder=64) as m:
        assert m.stats()["memories"] == 30


def test_per_user_capacity_and_a_scoped_sweep(tmp_path):
    with memloop.Memory(tmp_path / "s", clock="manual", start=1_000, hashing_embedder=256,
                        capacity_per_user=2) as m:
        for user in ("ana", "bo"):
            for i, imp in enumerate([0.9, 0.1, 0.5]):
                m.remember(f"{user} note {i} on topic{i}", importance=imp, user=user)
        for user in ("ana", "bo"):
            kept = sorted(h.item.importance for h in m.recall("note", k=10, user=user))
            assert kept == pytest.approx([0.5, 0.9]), user
        report = m.sweep(user="ana")
        assert set(report) >= {"demoted", "forgotten", "evicted"}
        with pytest.raises(memloop.InvalidArgumentError):
            m.sweep(user="")
