"""memloop: on-device long-term memory for LLM agents.

A :class:`Memory` is a directory: memories are embedded locally (all-MiniLM-L6-v2 by default),
stored durably, recalled through an HNSW index, forgotten when they stop mattering, and
assembled into contexts that fit a token budget. This package calls the memloop C library
through ctypes; one :class:`Memory` may be used from many threads.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import json
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Optional, Sequence, Union

from . import _native
from ._native import LIB

__all__ = [
    "Memory",
    "Item",
    "Hit",
    "Block",
    "Context",
    "Remembered",
    "MemloopError",
    "InvalidArgumentError",
    "NotFoundError",
    "LockedError",
    "ModelMismatchError",
    "CorruptError",
    "UnsupportedVersionError",
    "StorageIOError",
    "StoreError",
    "VectorIndexError",
    "EmbedError",
    "CallbackError",
    "PanicError",
    "__version__",
]

__version__: str = LIB.memloop_version().decode()


class MemloopError(Exception):
    """An error reported by the memloop library; ``code`` is its status code."""

    code: int = -1

    def __init__(self, message: str, code: Optional[int] = None):
        super().__init__(message)
        if code is not None:
            self.code = code


class InvalidArgumentError(MemloopError, ValueError):
    """A wrong argument: empty text, a bad value, an unknown field, a closed store."""

    code = 1


class NotFoundError(MemloopError, LookupError):
    """No memory has the given id."""

    code = 2


class LockedError(MemloopError):
    """Another process holds the store open."""

    code = 3


class ModelMismatchError(MemloopError):
    """The store was built with another embedding model."""

    code = 4


class CorruptError(MemloopError):
    """A file of the store is corrupt."""

    code = 5


class UnsupportedVersionError(MemloopError):
    """A file was written by a newer memloop."""

    code = 6


class StorageIOError(MemloopError, OSError):
    """An I/O operation failed."""

    code = 7


class StoreError(MemloopError):
    """The embedded database failed."""

    code = 8


class VectorIndexError(MemloopError):
    """The vector index failed."""

    code = 9


class EmbedError(MemloopError):
    """The embedding model failed or could not be loaded."""

    code = 10


class CallbackError(MemloopError):
    """A reranker, refiner, summarizer or token counter failed; ``__cause__`` is its exception."""

    code = 11


class PanicError(MemloopError):
    """memloop hit an internal bug; stored data is unharmed and the store stays usable."""

    code = 12


_ERRORS = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        NotFoundError,
        LockedError,
        ModelMismatchError,
        CorruptError,
        UnsupportedVersionError,
        StorageIOError,
        StoreError,
        VectorIndexError,
        EmbedError,
        CallbackError,
        PanicError,
    )
}


@dataclass(frozen=True)
class Item:
    """A stored memory. ``data`` holds every field the library reported."""

    id: int
    kind: str
    text: str
    namespace: str
    tags: list
    importance: float
    tier: str
    pinned: bool
    count: int
    concise: Optional[str]
    brief: Optional[str]
    subject: Optional[str]
    created: int
    updated: int
    data: dict = field(repr=False, compare=False)

    @classmethod
    def _from(cls, d: Mapping[str, Any]) -> "Item":
        return cls(
            id=d["id"],
            kind=d["kind"],
            text=d["text"],
            namespace=d["namespace"],
            tags=list(d["tags"]),
            importance=d["importance"],
            tier=d["tier"],
            pinned=d["pinned"],
            count=d["count"],
            concise=d.get("concise"),
            brief=d.get("brief"),
            subject=d.get("subject"),
            created=d["created"],
            updated=d["updated"],
            data=dict(d),
        )


class Hit:
    """A recalled memory: its score (cosine similarity, or the reranker's), rank and why.

    ``item`` (the whole stored memory) is built on first access: most callers only read the
    text and the score.
    """

    __slots__ = ("id", "score", "rank", "text", "kind", "tier", "explain", "_item")

    def __init__(self, id: int, score: float, rank: int, text: str, kind: str, tier: str,
                 item: Union[Item, Mapping[str, Any]], explain: dict):
        self.id = id
        self.score = score
        self.rank = rank
        self.text = text
        self.kind = kind
        self.tier = tier
        self.explain = explain
        self._item = item

    @property
    def item(self) -> Item:
        """The stored memory."""
        if not isinstance(self._item, Item):
            self._item = Item._from(self._item)
        return self._item

    @classmethod
    def _from(cls, d: Mapping[str, Any]) -> "Hit":
        return cls(d["id"], d["score"], d["rank"], d["text"], d["kind"], d["tier"], d["item"],
                   d["explain"])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hit):
            return NotImplemented
        return (self.id, self.score, self.rank, self.item) == (
            other.id, other.score, other.rank, other.item)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Hit(id={self.id}, score={self.score:.4f}, rank={self.rank}, "
                f"kind={self.kind!r}, tier={self.tier!r}, text={self.text!r})")


@dataclass(frozen=True)
class Block:
    """One memory in a context, at the precision it is served at."""

    label: str
    id: int
    precision: str
    text: str
    score: float


@dataclass(frozen=True)
class Context:
    """An assembled context: ``tokens`` never exceeds the budget asked for."""

    text: str
    tokens: int
    blocks: list
    dropped: list


Reranker = Callable[[str, "list[Hit]"], Sequence[float]]
Refiner = Callable[[str, "list[Hit]", int], str]
Summarizer = Callable[[str], "tuple[str, str]"]
TokenCounter = Callable[[str], int]

_SUBJECT_EVENTS = {"create": "created", "modify": "modified", "execute": "executed", "delete": "deleted"}


def _encode(value: Any) -> bytes:
    return json.dumps(value).encode()


def _millis(t: Union[int, float, _dt.datetime]) -> int:
    if isinstance(t, _dt.datetime):
        if t.tzinfo is None:
            raise InvalidArgumentError("set_time needs a timezone-aware datetime")
        return int(round(t.timestamp() * 1000))
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        raise InvalidArgumentError(f"time must be Unix seconds or a datetime, not {t!r}")
    return int(round(t * 1000))


class _Callbacks:
    """Adapts Python callables to the C callbacks; keeps them alive with the store.

    An exception in a callable is kept (per thread) and re-raised as the ``__cause__`` of the
    :class:`CallbackError` the call then fails with.
    """

    def __init__(self, reranker, refiner, summarizer, token_counter):
        self.pending = threading.local()
        self.hooks = _native.Hooks()
        self.any = any(f is not None for f in (reranker, refiner, summarizer, token_counter))
        if reranker is not None:
            self.hooks.rerank = _native.RERANK_FN(self._guard("reranker", self._rerank(reranker), 1))
        if refiner is not None:
            self.hooks.refine = _native.REFINE_FN(self._guard("refiner", self._refine(refiner), -1))
        if summarizer is not None:
            self.hooks.summarize = _native.SUMMARIZE_FN(
                self._guard("summarizer", self._summarize(summarizer), -1)
            )
        if token_counter is not None:
            self.hooks.count_tokens = _native.COUNT_TOKENS_FN(
                self._guard("token counter", self._count(token_counter), -1)
            )

    def take(self) -> Optional[BaseException]:
        exc = getattr(self.pending, "exc", None)
        self.pending.exc = None
        return exc

    def _guard(self, name: str, fn: Callable, failure: int) -> Callable:
        def call(*args):
            try:
                return fn(*args)
            except BaseException as exc:  # noqa: BLE001 - reported to the caller, not swallowed
                self.pending.exc = exc
                LIB.memloop_set_callback_error(f"{type(exc).__name__}: {exc}".encode())
                return failure

        return call

    @staticmethod
    def _hits(payload: bytes) -> "list[Hit]":
        return [Hit._from(h) for h in json.loads(payload)]

    @staticmethod
    def _write(text: str, out: int, capacity: int) -> int:
        data = text.encode()
        if len(data) <= capacity:
            ctypes.memmove(out, data, len(data))
        return len(data)

    def _rerank(self, reranker):
        def call(_user, query, candidates, scores, count):
            result = [float(s) for s in reranker(query.decode(), self._hits(candidates))]
            if len(result) != count:
                raise ValueError(f"reranker returned {len(result)} scores for {count} candidates")
            for i, s in enumerate(result):
                scores[i] = s
            return 0

        return call

    def _refine(self, refiner):
        def call(_user, query, hits, round_, out, capacity):
            text = refiner(query.decode(), self._hits(hits), round_)
            if not isinstance(text, str):
                raise TypeError(f"refiner returned {type(text).__name__}, not str")
            return self._write(text, out, capacity)

        return call

    def _summarize(self, summarizer):
        def call(_user, text, out, capacity):
            concise, brief = summarizer(text.decode())
            return self._write(json.dumps({"concise": concise, "brief": brief}), out, capacity)

        return call

    @staticmethod
    def _count(counter):
        def call(_user, text):
            n = counter(text.decode())
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ValueError(f"token counter returned {n!r}, not a count")
            return n

        return call


class Remembered(NamedTuple):
    """What :meth:`Memory.remember_explained` did: the id holding the text, ``action``
    (``"new"``, ``"merged"`` or ``"superseded"``) and the superseded version's id, if any."""

    id: int
    action: str
    previous: Optional[int]


def _new_item(text, kind="chunk", namespace=None, tags=(), importance=None, concise=None,
              brief=None, subject=None, source=None, pinned=False) -> dict:
    """The JSON item of :meth:`Memory.remember`'s arguments (typed there)."""
    item: dict = {"text": text, "kind": kind, "tags": list(tags), "pinned": pinned}
    for key, value in (
        ("namespace", namespace),
        ("importance", importance),
        ("concise", concise),
        ("brief", brief),
        ("subject", subject),
    ):
        if value is not None:
            item[key] = value
    if source is not None:
        item["source"] = {"document": source} if isinstance(source, str) else dict(source)
    return item


class Memory:
    """A memory store in directory ``path`` (created if needed).

    ``model`` is a model directory (default: the cached all-MiniLM-L6-v2, fetched by
    ``memloop model fetch`` or ``scripts/fetch-model.sh``). ``device`` is where the model runs:
    ``"cpu"`` (default), or ``"cuda"`` / ``"cuda:N"`` with a library built with the ``cuda``
    feature (otherwise :class:`InvalidArgumentError`). ``max_text_bytes`` bounds one memory's
    text (default 512 KiB; longer texts raise :class:`InvalidArgumentError`). ``clock="manual"`` makes time move
    only through :meth:`set_time` (``start`` is its first value, Unix seconds; without it the
    clock begins at the Unix epoch, so the first :meth:`set_time` puts it anywhere later). ``sync=False``
    groups writes until :meth:`close` or a checkpoint. ``reranker``, ``refiner``,
    ``summarizer`` and ``token_counter`` replace the built-in parts; they may be called from
    any thread that uses this store. ``hashing_embedder`` (a dimension) replaces the model with
    a deterministic one that knows no meaning, for tests of the plumbing.

    Use it as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        path: Union[str, "os.PathLike[str]"],
        model: Optional[Union[str, "os.PathLike[str]"]] = None,
        clock: str = "system",
        sync: bool = True,
        *,
        start: Optional[Union[int, float, _dt.datetime]] = None,
        capacity: Optional[int] = None,
        dedup_threshold: Optional[float] = 0.95,
        hashing_embedder: Optional[int] = None,
        reranker: Optional[Reranker] = None,
        refiner: Optional[Refiner] = None,
        summarizer: Optional[Summarizer] = None,
        token_counter: Optional[TokenCounter] = None,
        device: str = "cpu",
        max_text_bytes: Optional[int] = None,
    ):
        options: dict = {"clock": clock, "sync": bool(sync), "dedup_threshold": dedup_threshold}
        if model is not None:
            options["model"] = os.fspath(model)
        if device != "cpu":
            options["device"] = device
        if max_text_bytes is not None:
            options["max_text_bytes"] = max_text_bytes
        if start is not None:
            options["start_ms"] = _millis(start)
        if capacity is not None:
            options["capacity"] = capacity
        if hashing_embedder is not None:
            options["hashing_embedder"] = hashing_embedder
        self._callbacks = _Callbacks(reranker, refiner, summarizer, token_counter)
        self._lock = threading.Lock()
        self._handle: Optional[int] = None
        handle = ctypes.c_void_p()
        hooks = ctypes.byref(self._callbacks.hooks) if self._callbacks.any else None
        self._check(
            LIB.memloop_open(os.fspath(path).encode(), _encode(options), hooks, ctypes.byref(handle))
        )
        self._handle = handle.value
        self.path = os.fspath(path)

    # -- plumbing ---------------------------------------------------------------------------

    def _check(self, status: int) -> None:
        if status == 0:
            return
        message = LIB.memloop_last_error().decode(errors="replace")
        cause = self._callbacks.take()
        error = _ERRORS.get(status, MemloopError)(message, status)
        if cause is not None:
            raise error from cause
        raise error

    def _h(self) -> int:
        handle = self._handle
        if handle is None:
            raise InvalidArgumentError("the memory is closed")
        return handle

    def _json_call(self, fn, *args) -> Any:
        out = ctypes.c_void_p()
        self._check(fn(self._h(), *args, ctypes.byref(out)))
        try:
            return json.loads(ctypes.string_at(out.value))
        finally:
            LIB.memloop_free_string(out)

    # -- the API ----------------------------------------------------------------------------

    def remember(
        self,
        text: str,
        kind: str = "chunk",
        namespace: Optional[str] = None,
        tags: Iterable[str] = (),
        importance: Optional[float] = None,
        concise: Optional[str] = None,
        brief: Optional[str] = None,
        subject: Optional[str] = None,
        source: Optional[Union[str, Mapping[str, Any]]] = None,
        pinned: bool = False,
    ) -> int:
        """Remembers ``text``; returns the id that holds it: a new id, an existing one when a
        memory already says the same (exactly, or up to case, spacing and punctuation), or a
        fact's new version when a near-duplicate fact said something else
        (:meth:`remember_explained` says which)."""
        item = _new_item(text, kind, namespace, tags, importance, concise, brief, subject,
                         source, pinned)
        out = ctypes.c_uint64()
        self._check(LIB.memloop_remember(self._h(), _encode(item), ctypes.byref(out)))
        return out.value

    def remember_explained(self, text: str, *args: Any, **kwargs: Any) -> "Remembered":
        """As :meth:`remember` (the same arguments), saying what was done: ``action`` is
        ``"new"``, ``"merged"`` (into a memory that says the same) or ``"superseded"``
        (``previous``, a near-duplicate fact or triple that said something else, is kept as
        history of the new ``id``)."""
        item = _new_item(text, *args, **kwargs)
        done = self._json_call(LIB.memloop_remember_explained, _encode(item))
        return Remembered(done["id"], done["action"], done["previous"])

    def get(self, id: int) -> Optional[Item]:
        """The memory with this id, or None."""
        found = self._json_call(LIB.memloop_get, id)
        return None if found is None else Item._from(found)

    def recall(
        self,
        query: str,
        k: int = 5,
        namespace: Optional[str] = None,
        kinds: Optional[Iterable[str]] = None,
        tags: Optional[Iterable[str]] = None,
        strategy: str = "single",
    ) -> "list[Hit]":
        """The ``k`` memories closest to ``query``, best first (``strategy``: single, rerank,
        iterative). Hits are reinforced: they decay more slowly."""
        request: dict = {"query": query, "k": k, "strategy": strategy}
        if namespace is not None:
            request["namespace"] = namespace
        if kinds is not None:
            request["kinds"] = list(kinds)
        if tags is not None:
            request["tags"] = list(tags)
        return [Hit._from(h) for h in self._json_call(LIB.memloop_recall, _encode(request))]

    def context(self, query: str, budget: int, k: int = 8, strategy: str = "single") -> Context:
        """The best memories for ``query`` assembled into at most ``budget`` tokens."""
        request = {"query": query, "budget": budget, "k": k, "strategy": strategy}
        c = self._json_call(LIB.memloop_context, _encode(request))
        return Context(
            text=c["text"],
            tokens=c["tokens"],
            blocks=[Block(**b) for b in c["blocks"]],
            dropped=list(c["dropped"]),
        )

    def feedback(self, id: int, level: int) -> None:
        """How useful memory ``id`` was, 1 (misleading) to 5 (essential)."""
        if isinstance(level, bool) or not isinstance(level, int):
            raise InvalidArgumentError(f"level must be an int in 1..=5, not {level!r}")
        if not -(2**31) <= level < 2**31:
            raise InvalidArgumentError(f"level {level} is outside 1..=5")
        self._check(LIB.memloop_feedback(self._h(), id, level))

    def record_task(
        self,
        request: str,
        steps: Sequence[str],
        success: bool,
        reflection: Optional[str] = None,
    ) -> int:
        """Records a task the agent carried out; returns the task memory's id. A failed task's
        reflection is remembered too."""
        task: dict = {"request": request, "steps": list(steps), "success": bool(success)}
        if reflection is not None:
            task["reflection"] = reflection
        return self._json_call(LIB.memloop_record_task, _encode(task))["task"]

    def observe(self, subject: str, event: str, content: Optional[str] = None) -> int:
        """Records an event (created, modified, executed, deleted) about a subject such as a
        file; all of a subject's events merge into one memory, whose id is returned."""
        event = _SUBJECT_EVENTS.get(event, event)
        out = ctypes.c_uint64()
        self._check(
            LIB.memloop_observe(
                self._h(),
                subject.encode(),
                event.encode(),
                None if content is None else content.encode(),
                ctypes.byref(out),
            )
        )
        return out.value

    def forget(self, id: int) -> None:
        """Deletes memory ``id`` now, durably (NotFoundError if there is none)."""
        self._check(LIB.memloop_forget(self._h(), id))

    def sweep(self) -> dict:
        """Applies forgetting at the clock's current time; returns what moved."""
        return self._json_call(LIB.memloop_sweep)

    def set_time(self, t: Union[int, float, _dt.datetime]) -> None:
        """Sets a manual clock (Unix seconds or an aware datetime); time only moves forward."""
        self._check(LIB.memloop_set_time(self._h(), _millis(t)))

    def stats(self) -> dict:
        """Counts (memories, per tier, indexed), sequence numbers and the model."""
        return self._json_call(LIB.memloop_stats)

    def check(self) -> dict:
        """Verifies the whole store now: the index file's checksums and links (rebuilt from the
        database when they fail), every record, and that both agree. Returns ``memories``,
        ``indexed``, ``index_rebuilt`` (the reason, or ``None``) and ``problems`` (empty when
        the store is sound)."""
        return self._json_call(LIB.memloop_check)

    def checkpoint(self) -> None:
        """Saves the index and makes every write durable."""
        self._check(LIB.memloop_checkpoint(self._h()))

    def export(self, path: Union[str, "os.PathLike[str]"]) -> int:
        """Writes every memory (with its vector) to a file; returns how many."""
        out = ctypes.c_uint64()
        self._check(LIB.memloop_export(self._h(), os.fspath(path).encode(), ctypes.byref(out)))
        return out.value

    def import_(self, path: Union[str, "os.PathLike[str]"]) -> dict:
        """Imports an export file (re-embedding it if it came from another model)."""
        return self._json_call(LIB.memloop_import, os.fspath(path).encode())

    def close(self) -> None:
        """Saves and closes the store; further calls raise InvalidArgumentError. Idempotent."""
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            self._check(LIB.memloop_close(handle))

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._handle is None

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing can be raised from a finalizer
            pass

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"memloop.Memory({self.path!r}, {state})"
