"""Validity in time from Python: a new version closes the old window; as_of finds either."""

import datetime as dt

import pytest

import memloop


def test_as_of_returns_what_held_then(tmp_path):
    with memloop.Memory(tmp_path / "s", clock="manual", start=1_000, hashing_embedder=256,
                        dedup_threshold=0.75) as m:
        old = m.remember("alice lives in the city of paris in france", kind="fact")
        m.set_time(5_000)
        new = m.remember_explained("alice lives in the city of berlin in france", kind="fact")
        assert new.previous == old
        assert (m.get(old).valid_from, m.get(old).valid_until) == (1_000_000, 5_000_000)
        assert m.get(new.id).valid_until is None
        assert [h.id for h in m.recall("where does alice live", as_of=3_000)] == [old]
        when = dt.datetime.fromtimestamp(6_000, tz=dt.timezone.utc)
        assert [h.id for h in m.recall("where does alice live", as_of=when)] == [new.id]
        assert m.recall("where does alice live", as_of=500) == []
        assert "paris" in m.context("where does alice live", budget=100, as_of=3_000).text
        job = m.remember("bob worked at the bakery", kind="fact", valid_from=2_000,
                         valid_until=4_000)
        assert m.get(job).valid_until == 4_000_000
        assert [h.id for h in m.recall("bakery", as_of=3_000, k=10) if h.id == job] == [job]
        with pytest.raises(memloop.InvalidArgumentError, match="not after"):
            m.remember("never", valid_from=10, valid_until=5)
        with pytest.raises(memloop.InvalidArgumentError, match="as_of"):
            m.recall("x", as_of="yesterday")


def test_a_newer_triple_closes_the_older_one(tmp_path):
    with memloop.Memory(tmp_path / "s", hashing_embedder=256) as m:
        porto = m.remember("Dan lives in Porto", kind="triple", head="Dan", relation="lives in",
                           tail="Porto", valid_from=dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc))
        madrid = m.remember_explained(
            "Dan lives in Madrid", kind="triple", head="Dan", relation="lives in", tail="Madrid",
            valid_from=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))
        assert (madrid.action, madrid.previous) == ("superseded", porto)
        assert m.get(porto).valid_until == m.get(madrid.id).valid_from
        assert m.get(madrid.id).data["triple"] == {"head": "Dan", "relation": "lives in",
                                                   "tail": "Madrid"}
        assert [h.id for h in m.recall("where does Dan live", strategy="lexical")] == [madrid.id]
        then = dt.datetime(2022, 6, 1, tzinfo=dt.timezone.utc)
        assert [h.id for h in m.recall("where does Dan live", strategy="lexical",
                                       as_of=then)] == [porto]
        with pytest.raises(memloop.InvalidArgumentError, match="head, relation and tail"):
            m.remember("half a triple", kind="triple", head="Dan", relation="lives in")
        batch = m.remember_batch([{"text": "Eve works at Globex", "kind": "triple",
                                   "head": "Eve", "relation": "works at", "tail": "Globex"}])
        assert m.get(batch[0]).data["triple"]["tail"] == "Globex"
