"""Python callables as reranker, refiner, summarizer and token counter."""

import threading

import pytest

import memloop


def open_store(tmp_path, **hooks):
    return memloop.Memory(tmp_path / "s", clock="manual", start=1_700_000_000,
                          hashing_embedder=64, **hooks)


def fill(m):
    return [m.remember(f"{name} is a fruit of colour {colour}")
            for name, colour in [("apple", "red"), ("banana", "yellow"), ("cherry", "red"),
                                 ("lime", "green"), ("plum", "purple")]]


def test_a_reranker_orders_the_candidates(tmp_path):
    seen = []

    def by_length(query, candidates):
        seen.append((query, [c.id for c in candidates]))
        return [-len(c.text) for c in candidates]  # shortest first

    with open_store(tmp_path, reranker=by_length) as m:
        fill(m)
        hits = m.recall("fruit", k=3, strategy="rerank")
        assert seen and seen[0][0] == "fruit"
        assert [len(h.text) for h in hits] == sorted(len(h.text) for h in hits)
        # single retrieval does not call it
        calls = len(seen)
        m.recall("fruit", k=3)
        assert len(seen) == calls


def test_a_raising_callback_becomes_a_callback_error_with_its_cause(tmp_path):
    def broken(query, candidates):
        raise RuntimeError("reranker offline")

    with open_store(tmp_path, reranker=broken) as m:
        fill(m)
        with pytest.raises(memloop.CallbackError, match="reranker offline") as info:
            m.recall("fruit", strategy="rerank")
        assert isinstance(info.value.__cause__, RuntimeError)
        # the store is still fine
        assert m.recall("fruit", k=1)


def test_wrong_results_from_callbacks_are_errors(tmp_path):
    with open_store(tmp_path, reranker=lambda q, c: [1.0]) as m:
        fill(m)
        with pytest.raises(memloop.CallbackError, match="1 scores for"):
            m.recall("fruit", k=3, strategy="rerank")
    with open_store(tmp_path, reranker=lambda q, c: [float("nan")] * len(c)) as m:
        with pytest.raises(memloop.CallbackError, match="finite"):
            m.recall("fruit", k=3, strategy="rerank")
    with open_store(tmp_path, token_counter=lambda text: -3) as m:
        with pytest.raises(memloop.CallbackError, match="token counter"):
            m.context("fruit", budget=50)


def test_a_refiner_rewrites_iterative_queries(tmp_path):
    rounds = []

    def refine(query, hits, round_):
        rounds.append((query, round_, len(hits)))
        return "plum purple"

    with open_store(tmp_path, refiner=refine) as m:
        ids = fill(m)
        hits = m.recall("something", k=2, strategy="iterative")
        assert rounds and rounds[0][0] == "something" and rounds[0][1] == 0
        assert ids[4] in [h.id for h in hits]


def test_a_summarizer_makes_task_precisions(tmp_path):
    long_reply = "x" * 10_000  # larger than the first buffer: the library asks again

    def summarize(text):
        return ("CONCISE " + long_reply, "BRIEF")

    with open_store(tmp_path, summarizer=summarize) as m:
        task = m.get(m.record_task("deploy the api", ["ran it"], True))
        assert task.concise == "CONCISE " + long_reply and task.brief == "BRIEF"


def test_a_token_counter_governs_the_budget(tmp_path):
    counted = []

    def words(text):
        counted.append(text)
        return len(text.split())

    with open_store(tmp_path, token_counter=words) as m:
        fill(m)
        context = m.context("fruit", budget=20)
        assert counted and context.tokens == len(context.text.split()) <= 20


def test_callbacks_from_several_threads(tmp_path):
    calls = []
    lock = threading.Lock()

    def rerank(query, candidates):
        with lock:
            calls.append(query)
        return [float(-c.rank) for c in candidates]

    with open_store(tmp_path, reranker=rerank) as m:
        fill(m)
        errors = []

        def worker(i):
            try:
                for _ in range(10):
                    assert m.recall(f"fruit {i}", k=2, strategy="rerank")
            except Exception as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and len(calls) == 40
