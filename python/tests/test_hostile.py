"""Bad input from Python is a typed MemloopError, never a TypeError from the binding layer
or a dead interpreter: None, wrong types, huge ints, closed handles, use after close."""

from pathlib import Path

import pytest

import memloop

HUGE = 2**200


def test_wrong_types_and_values_are_invalid_argument_errors(store):
    a = store.remember("a memory to poke at")
    cases = [
        lambda: store.remember(None),
        lambda: store.remember(42),
        lambda: store.remember(b"bytes"),
        lambda: store.remember("x", kind=3),
        lambda: store.remember("x", tags="one-string"),
        lambda: store.remember("x", tags=[1, 2]),
        lambda: store.remember("x", importance="high"),
        lambda: store.remember("x", importance=float("nan")),
        lambda: store.remember("x", source=12),
        lambda: store.remember("x", source={"document": 5}),
        lambda: store.get(None),
        lambda: store.get(-1),
        lambda: store.get(HUGE),
        lambda: store.get("1"),
        lambda: store.get(True),
        lambda: store.recall(None),
        lambda: store.recall("x", k=HUGE),
        lambda: store.recall("x", k=-3),
        lambda: store.recall("x", k=0),
        lambda: store.recall("x", k=1.5),
        lambda: store.recall("x", kinds=["poem"]),
        lambda: store.recall("x", kinds=5),
        lambda: store.recall("x", namespace=7),
        lambda: store.recall("x", strategy=None or "magic"),
        lambda: store.context("x", budget=-1),
        lambda: store.context("x", mode="poetry"),
        lambda: store.context("x", key_share=2),
        lambda: store.context("x", budget=HUGE),
        lambda: store.feedback(a, None),
        lambda: store.feedback(a, HUGE),
        lambda: store.feedback(HUGE, 3),
        lambda: store.forget(HUGE),
        lambda: store.forget(None),
        lambda: store.observe(None, "created"),
        lambda: store.observe("f", None),
        lambda: store.record_task(None, [], True),
        lambda: store.record_task("t", "not a list", True),
        lambda: store.record_task("t", [None], True),
        lambda: store.set_time(None),
        lambda: store.set_time(HUGE),
        lambda: store.set_time(float("inf")),
        lambda: store.set_time(True),
        lambda: store.export(None),
        lambda: store.import_(7),
        lambda: store.remember_batch(None),
        lambda: store.remember_batch([None]),
        lambda: store.remember_batch([{"text": "x", "colour": "red"}]),
        lambda: store.remember_batch([{"kind": "fact"}]),
    ]
    for i, case in enumerate(cases):
        with pytest.raises(memloop.InvalidArgumentError):
            case()
            pytest.fail(f"case {i} did not raise")
    assert store.get(a).text == "a memory to poke at"  # and the store still works
    # None is "not given" on every door: the engine's default budget (500 tokens).
    assert store.context("a memory", budget=None).tokens <= 500


def test_bad_open_arguments(tmp_path):
    for kwargs in [
        {"clock": 5},
        {"hashing_embedder": 0},
        {"hashing_embedder": HUGE},
        {"hashing_embedder": "64"},
        {"capacity": -1},
        {"start": 5},  # a start needs the manual clock
        {"clock": "manual", "start": "noon"},
        {"dedup_threshold": "high"},
        {"max_text_bytes": 10**12},
        {"index_vectors": "int4"},
        {"index_vectors": 8},
        {"precision": "int4"},
        {"precision": 8},
        {"reranker": 42},
    ]:
        with pytest.raises(memloop.InvalidArgumentError):
            memloop.Memory(tmp_path / "s", **{"hashing_embedder": 16, **kwargs})
    with pytest.raises(memloop.InvalidArgumentError):
        memloop.Memory(None)


def test_an_int8_encoder_store_recalls_follows_and_refuses_f32(tmp_path):
    with memloop.Memory(tmp_path / "s", precision="int8") as m:
        m.remember("The staging database listens on port 5433.")
        m.remember("Ana takes green tea in the afternoon.")
        assert "5433" in m.recall("which port does staging use?", k=1)[0].text
    with memloop.Memory(tmp_path / "s") as m:  # the store's own precision
        assert "5433" in m.recall("staging port", k=1)[0].text
    with pytest.raises(memloop.ModelMismatchError):
        memloop.Memory(tmp_path / "s", precision="f32")


def test_an_int8_index_is_recorded_and_kept(tmp_path):
    with memloop.Memory(tmp_path / "s", hashing_embedder=32, index_vectors="int8") as m:
        a = m.remember("the kettle is in the second cupboard")
        m.remember("the bikes are in the shed")
    with memloop.Memory(tmp_path / "s", hashing_embedder=32) as m:
        hit = m.recall("the kettle is in the second cupboard", k=1)[0]
        assert hit.id == a
        assert abs(hit.score - 1.0) < 1e-4  # re-scored on the f32 vector: exact


def test_every_call_after_close_is_an_error(tmp_path):
    m = memloop.Memory(tmp_path / "s", hashing_embedder=16)
    a = m.remember("x")
    m.close()
    for call in [
        lambda: m.remember("y"),
        lambda: m.remember_explained("y"),
        lambda: m.remember_batch(["y"]),
        lambda: m.get(a),
        lambda: m.recall("x"),
        lambda: m.context("x", budget=10),
        lambda: m.feedback(a, 3),
        lambda: m.record_task("t", [], True),
        lambda: m.observe("f", "created"),
        lambda: m.forget(a),
        lambda: m.sweep(),
        lambda: m.set_time(1),
        lambda: m.stats(),
        lambda: m.check(),
        lambda: m.checkpoint(),
        lambda: m.export(tmp_path / "x.mlx"),
        lambda: m.import_(tmp_path / "x.mlx"),
    ]:
        with pytest.raises(memloop.InvalidArgumentError, match="closed"):
            call()
    m.close()
    assert repr(m).endswith("closed)")


def test_close_from_inside_a_callback_is_refused(tmp_path):
    holder = {}

    def reranker(query, candidates):
        with pytest.raises(memloop.InvalidArgumentError, match="inside a callback"):
            holder["m"].close()
        return [0.0] * len(candidates)

    with memloop.Memory(tmp_path / "s", hashing_embedder=16, reranker=reranker) as m:
        holder["m"] = m
        m.remember("x")
        assert m.recall("x", strategy="rerank")
        assert not m.closed


def test_a_callback_returning_nonsense_is_a_callback_error(tmp_path):
    with memloop.Memory(tmp_path / "s", hashing_embedder=16, reranker=lambda q, c: "abc") as m:
        m.remember("x")
        with pytest.raises(memloop.CallbackError) as info:
            m.recall("x", strategy="rerank")
        assert isinstance(info.value.__cause__, TypeError)
    with memloop.Memory(tmp_path / "t", hashing_embedder=16, summarizer=lambda t: None) as m:
        with pytest.raises(memloop.CallbackError, match="summarizer"):
            m.record_task("deploy", ["ran it"], True)
    with memloop.Memory(tmp_path / "u", hashing_embedder=16, refiner=lambda q, h, r: 7) as m:
        m.remember("x")
        with pytest.raises(memloop.CallbackError, match="refiner returned int"):
            m.recall("x", strategy="iterative")


def test_a_reranker_model_is_checked_at_open(tmp_path):
    # The embedder fixture of another architecture: no cross-encoder.
    nomic = Path(__file__).resolve().parents[2] / "embed/tests/fixtures/nomic-tiny"
    for model in [nomic, tmp_path / "absent"]:
        with pytest.raises(memloop.EmbedError):
            memloop.Memory(tmp_path / "s", hashing_embedder=16, reranker_model=model)
    with pytest.raises(memloop.InvalidArgumentError, match="reranker_model"):
        memloop.Memory(
            tmp_path / "s", hashing_embedder=16, reranker_model=nomic, reranker=lambda q, c: []
        )
    with pytest.raises(memloop.InvalidArgumentError):
        memloop.Memory(tmp_path / "s", hashing_embedder=16, reranker_model=5)
