"""Typed use of the whole API, checked by `mypy --strict` against the installed wheel's stubs
(scripts/test-python.sh): a stub that drifts from how the package is meant to be called fails
the check. Not a test module; it is never run."""

import asyncio
import datetime
from typing import Any, Dict, List, Optional, Sequence

import memloop


def rerank(query: str, candidates: List[memloop.Hit]) -> Sequence[float]:
    return [-float(c.rank) + len(query) * 0.0 for c in candidates]


def count(text: str) -> int:
    return len(text.split())


def use(path: str) -> None:
    with memloop.Memory(path, clock="manual", start=datetime.datetime.now(datetime.timezone.utc),
                        hashing_embedder=32, reranker=rerank, token_counter=count,
                        dedup_threshold=None) as m:
        a: int = m.remember("text", kind="fact", tags=["t"], importance=0.5, source="doc.md")
        done: memloop.Remembered = m.remember_explained("text", kind="fact")
        previous: Optional[int] = done.previous
        ids: List[int] = m.remember_batch(["one", {"text": "two", "kind": "fact"}])
        item: Optional[memloop.Item] = m.get(a)
        if item is not None:
            tags: List[str] = item.tags
            created: int = item.created
            data: Dict[str, object] = item.data
        hits: List[memloop.Hit] = m.recall("text", k=3, kinds=["fact"], strategy="rerank")
        scores: List[float] = [h.score for h in hits]
        context: memloop.Context = m.context("text", budget=50)
        blocks: List[memloop.Block] = context.blocks
        m.feedback(a, 5)
        task: int = m.record_task("request", ["step"], success=False, reflection="why")
        subject: int = m.observe("file.rs", "modified", "content")
        m.forget(ids[0])
        m.set_time(10**10)
        report = m.sweep()
        n: Dict[str, Any] = m.export(path + ".mlx", format="mlx")
        stats = m.stats()
        page: List[memloop.Item] = m.list(namespace="default", kinds=["fact"], limit=10, offset=0)
        vectors: List[List[float]] = m.embed_documents(["a", "b"])
        query: List[float] = m.embed_query("a")
        print(page, vectors, query)
        print(previous, tags, created, data, scores, blocks, task, subject, report, n, stats)


async def use_async(path: str) -> None:
    async with await memloop.AsyncMemory.open(path, hashing_embedder=32) as m:
        a: int = await m.remember("text", kind="fact")
        hits: List[memloop.Hit] = await m.recall("text", k=1)
        context: memloop.Context = await m.context("text", budget=20)
        item: Optional[memloop.Item] = await m.get(a)
        listed: List[memloop.Item] = await m.list(limit=5)
        print(hits, context, item, listed)


def errors() -> None:
    try:
        use("/nonexistent/dir")
    except memloop.LockedError as e:
        code: int = e.code
        print(code)
    except memloop.MemloopError as e:
        print(e)
    asyncio.run(use_async("/tmp/x"))
