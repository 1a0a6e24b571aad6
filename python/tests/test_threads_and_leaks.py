"""One store from many threads, and no growth of memory over many open/recall/close cycles."""

import gc
import threading

import memloop


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def test_one_store_from_many_threads(tmp_path):
    # Near-duplicate merging off: the hashing embedder finds "memory 2" and "memory 20" alike.
    store = memloop.Memory(tmp_path / "s", hashing_embedder=64, dedup_threshold=None)
    errors = []

    def worker(t):
        try:
            for i in range(25):
                mid = store.remember(f"thread {t} memory {i}", namespace=f"t{t}")
                assert store.get(mid).namespace == f"t{t}"
                hits = store.recall(f"thread {t} memory {i}", k=1, namespace=f"t{t}")
                assert hits[0].id == mid
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert store.stats()["memories"] == 200
    store.close()


def test_closing_while_other_threads_call_is_safe(tmp_path):
    m = memloop.Memory(tmp_path / "s", hashing_embedder=32)
    for i in range(50):
        m.remember(f"memory {i}")
    outcomes = []

    def reader():
        for _ in range(200):
            try:
                m.recall("memory", k=3)
                outcomes.append("ok")
            except memloop.InvalidArgumentError:
                outcomes.append("closed")
                return

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    m.close()
    for t in threads:
        t.join()
    assert "closed" in outcomes or len(outcomes) == 800


def test_memory_stays_bounded_over_many_cycles(tmp_path):
    def cycle(i):
        with memloop.Memory(tmp_path / f"s{i % 3}", hashing_embedder=32) as m:
            m.remember(f"memory of cycle {i}")
            for _ in range(20):
                m.recall("memory of cycle", k=5)
                m.context("memory", budget=30)

    for i in range(30):  # warm up: allocator pools, thread-locals, page cache
        cycle(i)
    gc.collect()
    before = rss_kib()
    for i in range(30, 230):
        cycle(i)
    gc.collect()
    grown = rss_kib() - before
    # 200 cycles of open + 40 calls + close; a leak of even one recall result per call
    # (~1 KiB) would add ~8 MiB.
    assert grown < 4 * 1024, f"RSS grew by {grown} KiB"


def test_close_waits_for_a_call_in_flight_without_holding_the_gil(tmp_path):
    entered, release = threading.Event(), threading.Event()

    def reranker(query, candidates):
        entered.set()
        assert release.wait(10), "close held the GIL while it waited"
        return [0.0] * len(candidates)

    m = memloop.Memory(tmp_path / "s", hashing_embedder=16, reranker=reranker)
    m.remember("x")
    results = []
    recall = threading.Thread(target=lambda: results.append(m.recall("x", strategy="rerank")))
    recall.start()
    assert entered.wait(10)
    closer = threading.Thread(target=m.close)
    closer.start()
    closer.join(0.1)
    assert closer.is_alive()  # waiting for the recall in flight
    release.set()  # this thread runs meanwhile: the wait released the GIL
    recall.join(10)
    closer.join(10)
    assert not closer.is_alive() and m.closed and len(results[0]) == 1
