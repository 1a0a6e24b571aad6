"""Conversations from Python: turns with speaker and time, numbered across calls, a session
summary, an extractor callable whose facts are sourced to their turn, hostile input refused."""

import datetime as dt

import pytest

import memloop

MAY_8 = int(dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.timezone.utc).timestamp())


def lives_in(session, turns):
    """Draws 'X lives in Y' from turns saying 'I live in Y'."""
    out = []
    for i, t in enumerate(turns):
        assert set(t) == {"speaker", "text", "time"}
        if "I live in " in t["text"]:
            place = t["text"].split("I live in ", 1)[1].rstrip(".")
            out.append({"turn": i, "text": f"{t['speaker']} lives in {place}", "kind": "fact"})
    return out


def test_turns_summary_and_extracted_facts(tmp_path):
    with memloop.Memory(tmp_path / "s", clock="manual", start=MAY_8 + 60, hashing_embedder=256,
                        extractor=lives_in) as m:
        report = m.remember_conversation(
            "s1",
            [
                {"speaker": "Caroline", "text": "I went to a support group yesterday.",
                 "time": MAY_8},
                {"speaker": "Melanie", "text": "I live in the city of Paris.",
                 "time": dt.datetime.fromtimestamp(MAY_8 + 30, tz=dt.timezone.utc)},
            ],
            user="ana",
        )
        assert report["first_turn"] == 0 and len(report["turns"]) == 2
        turn = m.get(report["turns"][0])
        assert (turn.kind, turn.subject, turn.user, turn.session) == (
            "turn", "Caroline", "ana", "s1")
        assert turn.text == "Caroline: I went to a support group yesterday."
        assert turn.valid_from == MAY_8 * 1000
        fact = m.get(report["extracted"][0]["id"])
        assert fact.text == "Melanie lives in the city of Paris"
        assert fact.data["sources"][0] == {"document": "session/s1", "span": (1, 2)}
        assert m.get(report["summary"]).kind == "summary"
        more = m.remember_conversation(
            "s1", [{"speaker": "Caroline", "text": "It helped.", "time": MAY_8 + 90}], user="ana")
        assert more["first_turn"] == 2
        assert [t.text for t in m.conversation("s1", user="ana")][2] == "Caroline: It helped."
        assert m.conversation("s1", user="bob") == []
        ctx = m.context("support group", budget=200, user="ana")
        assert "[2023-05-08 13:56] Caroline: I went to a support group" in ctx.text


def test_bad_turns_and_a_failing_extractor_store_nothing(tmp_path):
    def broken(session, turns):
        raise RuntimeError("model offline")

    with memloop.Memory(tmp_path / "s", hashing_embedder=64, extractor=broken) as m:
        ok = [{"speaker": "Ana", "text": "hi", "time": 1}]
        with pytest.raises(memloop.CallbackError) as err:
            m.remember_conversation("s", ok)
        assert isinstance(err.value.__cause__, RuntimeError)
        for turns in (
            [],
            "hi",
            [("Ana", "hi", 1)],
            [{"speaker": "Ana", "text": "hi"}],
            [{"speaker": "Ana", "text": "hi", "time": 1, "mood": "glad"}],
            [{"speaker": "", "text": "hi", "time": 1}],
            [{"speaker": "Ana", "text": 5, "time": 1}],
            [{"speaker": "Ana", "text": "hi", "time": "noon"}],
        ):
            with pytest.raises(memloop.InvalidArgumentError):
                m.remember_conversation("s", turns)
        with pytest.raises(memloop.InvalidArgumentError):
            m.remember_conversation("", ok)
        assert m.stats()["memories"] == 0
    with memloop.Memory(tmp_path / "t", hashing_embedder=64,
                        extractor=lambda s, t: [{"turn": 7, "text": "x"}]) as m:
        with pytest.raises(memloop.InvalidArgumentError, match="turn 7"):
            m.remember_conversation("s", [{"speaker": "Ana", "text": "hi", "time": 1}])
        assert m.stats()["memories"] == 0
    with pytest.raises(memloop.InvalidArgumentError, match="extractor must be callable"):
        memloop.Memory(tmp_path / "u", hashing_embedder=64, extractor=5)
