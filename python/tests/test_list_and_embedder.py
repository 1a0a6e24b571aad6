"""`Memory.list` (a filtered page of memories, no ranking), `embedder=` (any object with
`embed_documents` / `embed_query` as the store's embedder) and `embed_documents` / `embed_query`."""

import pytest

import memloop


def test_list_filters_pages_and_checks(store):
    ids = [store.remember(f"note {i}", namespace="a" if i % 2 else "b", tags=["t"] if i < 6 else [])
           for i in range(10)]
    assert [i.id for i in store.list()] == ids
    assert [i.id for i in store.list(namespace="a")] == ids[1::2]
    assert [i.id for i in store.list(tags=["t"], limit=2, offset=1)] == ids[1:3]
    assert store.list(offset=100) == []
    assert [i.id for i in store.list(kinds=["chunk"], limit=3)] == ids[:3]
    store.remember("alice's", user="alice")
    assert [i.text for i in store.list(user="alice")] == ["alice's"]
    for bad in [dict(limit=0), dict(limit=100_001), dict(kinds=["gossip"]), dict(offset=-1), dict(limit="3")]:
        with pytest.raises(memloop.InvalidArgumentError):
            store.list(**bad)


class Toy:
    """A 3-dimensional embedder: counts of a, b and c (plus one)."""

    def __init__(self):
        self.calls = 0

    def embed_documents(self, texts):
        self.calls += 1
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text):
        return [text.count("a") + 1.0, text.count("b") + 1.0, text.count("c") + 1.0]


def test_an_embedder_object_is_the_stores_vector_space(tmp_path):
    toy = Toy()
    with memloop.Memory(tmp_path / "s", embedder=toy, dedup_threshold=None) as m:
        m.remember("aaaa aaaa")
        m.remember("bbbb bbbb")
        assert toy.calls >= 2
        assert m.recall("a", k=1, strategy="single")[0].text == "aaaa aaaa"
        v = m.embed_query("ab")
        assert v == [2.0, 2.0, 1.0]  # what the embedder returned
        assert len(m.embed_documents(["x", "y"])) == 2
    # The class names the vector space: another embedder, or the model, is refused.
    with pytest.raises(memloop.MemloopError):
        memloop.Memory(tmp_path / "s", hashing_embedder=3)
    with memloop.Memory(tmp_path / "s", embedder=Toy()) as m:
        assert len(m.list()) == 2


class Broken:
    def __init__(self, answer):
        self.answer = answer

    def embed_documents(self, texts):
        return [self.answer for _ in texts]

    def embed_query(self, text):
        return [1.0, 2.0]


@pytest.mark.parametrize("answer", [[1.0], [1.0, float("nan")], "xy", None])
def test_a_bad_embedding_fails_the_call_and_writes_nothing(tmp_path, answer):
    with memloop.Memory(tmp_path / "s", embedder=Broken(answer)) as m:
        with pytest.raises(memloop.CallbackError):
            m.remember("anything")
        assert m.list() == []


def test_an_embedder_without_its_methods_or_beside_a_model_is_refused(tmp_path):
    with pytest.raises(memloop.InvalidArgumentError):
        memloop.Memory(tmp_path / "s", embedder=object())
    with pytest.raises(memloop.InvalidArgumentError):
        memloop.Memory(tmp_path / "s", embedder=Toy(), hashing_embedder=8)
