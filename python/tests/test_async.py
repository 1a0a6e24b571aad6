"""AsyncMemory: the same calls as awaitables, run off the event loop."""

import asyncio
import threading

import pytest

import memloop
from conftest import START


def run(coro):
    return asyncio.run(coro)


def test_the_async_api_round_trip(tmp_path):
    async def main():
        async with await memloop.AsyncMemory.open(
            tmp_path / "s", clock="manual", start=START, hashing_embedder=64
        ) as m:
            a = await m.remember("the cache lives in redis", kind="fact", tags=["infra"])
            assert (await m.get(a)).text == "the cache lives in redis"
            explained = await m.remember_explained("the queue is rabbitmq", kind="fact")
            assert explained.action == "new"
            ids = await m.remember_batch(["note one about tea", {"text": "note two", "tags": ["t"]}])
            assert len(ids) == 2
            hits = await m.recall("the cache lives in redis", k=2)
            assert hits[0].id == a and isinstance(hits[0], memloop.Hit)
            context = await m.context("cache", budget=40)
            assert context.tokens <= 40
            await m.feedback(a, 5)
            task = await m.record_task("deploy", ["ran it"], True)
            assert (await m.get(task)).kind == "task"
            subject = await m.observe("src/lib.rs", "create", "pub fn x() {}")
            assert (await m.get(subject)).kind == "subject"
            await m.forget(ids[0])
            assert await m.get(ids[0]) is None
            m.set_time(START + 10)
            assert (await m.sweep())["forgotten"] == 0
            assert (await m.stats())["memories"] == 5
            assert (await m.check())["problems"] == []
            await m.checkpoint()
            assert (await m.export(tmp_path / "all.mlx"))["exported"] == 5
            assert not m.closed
        assert m.closed
        async with memloop.AsyncMemory(memloop.Memory(tmp_path / "t", hashing_embedder=64)) as other:
            assert (await other.import_(tmp_path / "all.mlx"))["added"] == 5

    run(main())


def test_calls_run_off_the_event_loop_and_concurrently(tmp_path):
    """A reranker blocks until the loop, still running, releases it: the call is not on it."""
    release = threading.Event()
    loop_threads = set()

    def reranker(query, candidates):
        assert release.wait(10), "the event loop was blocked by the call"
        return [float(-c.rank) for c in candidates]

    async def main():
        loop_threads.add(threading.get_ident())
        m = await memloop.AsyncMemory.open(tmp_path / "s", hashing_embedder=32, reranker=reranker)
        await m.remember_batch([f"fruit number {i}" for i in range(10)])
        recalls = [asyncio.ensure_future(m.recall("fruit", k=3, strategy="rerank")) for _ in range(3)]
        await asyncio.sleep(0.05)  # the loop runs while the recalls wait in their threads
        assert not any(r.done() for r in recalls)
        release.set()
        results = await asyncio.gather(*recalls)
        assert all(len(r) == 3 for r in results)
        await m.close()

    run(main())


def test_errors_arrive_typed_through_await(tmp_path):
    async def main():
        m = await memloop.AsyncMemory.open(tmp_path / "s", hashing_embedder=16)
        with pytest.raises(memloop.InvalidArgumentError, match="empty"):
            await m.remember("  ")
        with pytest.raises(memloop.NotFoundError):
            await m.forget(12345)
        await m.close()
        with pytest.raises(memloop.InvalidArgumentError, match="closed"):
            await m.recall("x")
        with pytest.raises(memloop.LockedError):
            async with await memloop.AsyncMemory.open(tmp_path / "t", hashing_embedder=16):
                await memloop.AsyncMemory.open(tmp_path / "t", hashing_embedder=16)

    run(main())


def test_async_memory_opens_a_path_as_memory_does_and_refuses_other_things(tmp_path):
    async def main():
        async with memloop.AsyncMemory(tmp_path / "p", hashing_embedder=64) as m:
            a = await m.remember("opened from a path")
            assert (await m.get(a)).text == "opened from a path"
        with pytest.raises(TypeError, match="store path"):
            memloop.AsyncMemory(42)
        with pytest.raises(TypeError, match="options apply"):
            memloop.AsyncMemory(memloop.Memory(tmp_path / "q", hashing_embedder=64), clock="manual")

    run(main())


def test_the_k_limit_named_in_errors_is_the_engines(tmp_path):
    m = memloop.Memory(tmp_path / "k", hashing_embedder=64)
    m.remember("one memory")
    assert len(m.recall("memory", k=10_000)) == 1
    with pytest.raises(memloop.InvalidArgumentError, match="10000"):
        m.recall("memory", k=10_001)
    m.close()
