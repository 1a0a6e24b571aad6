"""memloop as a LangGraph ``BaseStore``: the long-term memory of LangGraph agents
(``create_react_agent(..., store=MemloopStore(path))``) and of LangMem's memory tools.

Each item ``(namespace, key) -> value`` is one pinned memloop memory (never forgotten by decay):

- its memloop namespace is the JSON of ``[*namespace, key]``, so two keys never merge and a
  get reads exactly one namespace;
- it carries a tag for every prefix of its namespace (``langgraph.ns:["users","alice"]`` …), so a
  search or listing under a prefix is a tag filter applied in the engine; with ``user_at=i``,
  the namespace's ``i``-th label is also the memory's memloop user, and every read whose prefix
  names that label is confined to that user by the engine;
- its text is what LangGraph would embed (the store's ``index["fields"]``, or the op's
  ``index`` list; the whole value by default), searched by memloop's hybrid retrieval (vectors
  and BM25 fused); its ``concise`` precision holds the value itself as JSON, with its creation
  time and TTL.

A put writes the new version before it forgets the old one, so a crash between them leaves two
versions, of which reads take the newest: never none. TTLs (minutes) are kept with the item;
an expired item is invisible to every read and removed by the next put or by
``sweep_ttl()``; reads refresh a TTL when asked to, as LangGraph specifies.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime, timezone
from typing import Any, Iterable, Optional, Sequence, Union

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base.embed import get_text_at_path, tokenize_path

from .._async import AsyncMemory
from .._native import Memory
from ._shared import OwnsMemory, PathLike, dumps, forget_older_versions, open_memory

__all__ = ["MemloopStore"]

_ROOT_TAG = "langgraph"
_KIND = "document"
_MAX_K = 10_000
_PAGE = 100_000


def _prefix_tag(prefix: Sequence[str]) -> str:
    return "langgraph.ns:" + dumps(list(prefix))


def _memloop_namespace(namespace: Sequence[str], key: str) -> str:
    return "langgraph:" + dumps([*namespace, key])


def _now_ms() -> int:
    return int(time.time() * 1000)


def _datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


class _Stored:
    """One stored item, decoded."""

    __slots__ = ("id", "namespace", "key", "value", "text", "created", "updated", "expires", "ttl", "indexed", "user", "agent")

    def __init__(self, item: Any) -> None:
        path = json.loads(item.namespace[len("langgraph:"):])
        envelope = json.loads(item.concise)
        self.id: int = item.id
        self.namespace: tuple[str, ...] = tuple(path[:-1])
        self.key: str = path[-1]
        self.value: "dict[str, Any]" = envelope["value"]
        self.text: str = item.text
        self.created: int = envelope["created"]
        self.updated: int = item.updated
        self.ttl: Optional[float] = envelope.get("ttl")
        self.expires: Optional[int] = envelope.get("expires")
        self.indexed: bool = envelope.get("indexed", True)
        self.user: Optional[str] = item.user
        self.agent: Optional[str] = item.agent

    def expired(self, now: int) -> bool:
        return self.expires is not None and self.expires <= now

    def item(self) -> Item:
        return Item(
            value=self.value,
            key=self.key,
            namespace=self.namespace,
            created_at=_datetime(self.created),
            updated_at=_datetime(self.updated),
        )

    def search_item(self, score: Optional[float]) -> SearchItem:
        return SearchItem(
            namespace=self.namespace,
            key=self.key,
            value=self.value,
            created_at=_datetime(self.created),
            updated_at=_datetime(self.updated),
            score=score,
        )


def _decode_item(item: Any) -> Optional[_Stored]:
    """The item an adapter memory holds, or ``None`` for none, or for a memory this adapter did
    not write (another program's memory that happens to carry the same tag and kind)."""
    if item is None or not item.namespace.startswith("langgraph:") or item.concise is None:
        return None
    try:
        return _Stored(item)
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _matches(value: Any, wanted: Any) -> bool:
    """LangGraph's filter on one value field: equality, nested dicts, lists element-wise, and
    the operators ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte`` (the comparisons on
    numbers; a value that is not one does not match)."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(wanted)
            and all(_matches(a, b) for a, b in zip(value, wanted))
        )
    return bool(value == wanted)


def _operator(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"unsupported filter operator {op!r}: use $eq, $ne, $gt, $gte, $lt or $lte")
    try:
        a, b = float(value), float(operand)
    except (TypeError, ValueError):
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _check_filter(wanted: Any) -> None:
    """Refuses an operator LangGraph does not document, whether or not any item is compared."""
    if isinstance(wanted, dict):
        for k, v in wanted.items():
            if k.startswith("$") and k not in ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte"):
                raise ValueError(f"unsupported filter operator {k!r}: use $eq, $ne, $gt, $gte, $lt or $lte")
            _check_filter(v)
    elif isinstance(wanted, (list, tuple)):
        for v in wanted:
            _check_filter(v)


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path))
    )
    if condition.match_type not in ("prefix", "suffix"):
        raise ValueError(f"unsupported match type {condition.match_type!r}")
    return all(p == "*" or n == p for n, p in pairs)


class MemloopStore(OwnsMemory, BaseStore):
    """A LangGraph store kept in a memloop store.

    ``MemloopStore(path)`` opens (creating if needed) the store in ``path`` with memloop's own
    embedder (``open_options`` are :class:`memloop.Memory`'s keyword arguments), or
    ``MemloopStore(memory=mem)`` works on an open ``Memory`` / ``AsyncMemory``. ``index``
    is LangGraph's ``IndexConfig``: its ``fields`` choose what is embedded (default the whole
    value); an ``embed`` that is a LangChain ``Embeddings`` replaces memloop's embedder when
    the store opens a path. ``ttl`` is LangGraph's ``TTLConfig``. ``user_at`` names the
    namespace label that is the memloop user (``user_at=1`` for ``("memories", user_id)``).
    Use it as a context manager, or ``close()`` it, to close a store it opened.
    """

    supports_ttl = True

    def __init__(
        self,
        path: Optional[PathLike] = None,
        *,
        memory: Optional[Union[Memory, AsyncMemory]] = None,
        index: Optional[IndexConfig] = None,
        ttl: Optional[TTLConfig] = None,
        user_at: Optional[int] = None,
        **open_options: Any,
    ) -> None:
        embed = (index or {}).get("embed")
        if embed is not None:
            if not hasattr(embed, "embed_documents"):
                raise TypeError("index['embed'] must be a LangChain Embeddings (or left out for memloop's own)")
            open_options = {**open_options, "embedder": embed}
        self.memory, self._owned = open_memory(path, memory, open_options)
        self.index_config = index
        self._fields = [(f, tokenize_path(f) if f != "$" else f) for f in ((index or {}).get("fields") or ["$"])]
        self.ttl_config = ttl
        if user_at is not None and (not isinstance(user_at, int) or user_at < 0):
            raise ValueError("user_at must be a namespace position (an int >= 0)")
        self.user_at = user_at
        # A crash between a put's two steps leaves two versions: the older is forgotten here
        # (among this store's own memories only: see `_own`).
        forget_older_versions(self.memory, _ROOT_TAG, _KIND, lambda i: self._decode(i) is not None)

    # --- reading -----------------------------------------------------------------------------

    def _own(self, s: _Stored) -> bool:
        """Whether ``s`` is in this store's scope: a memory of the user its namespace names
        (``user_at``), or of no user without ``user_at``, and of no agent. Another writer of
        the memloop store (a token bound to another user) can plant memories with this store's
        tags and namespaces; they are never read, replaced or cleaned up as its items."""
        owner = s.namespace[self.user_at] if self.user_at is not None and len(s.namespace) > self.user_at else None
        return s.user == owner and s.agent is None

    def _decode(self, item: Any) -> Optional[_Stored]:
        """The item a memory holds if it is one of this store's own (see :meth:`_own`)."""
        s = _decode_item(item)
        return s if s is not None and self._own(s) else None

    def _user(self, prefix: Sequence[str]) -> Optional[str]:
        if self.user_at is not None and len(prefix) > self.user_at:
            return prefix[self.user_at]
        return None

    def _versions(self, namespace: tuple[str, ...], key: str) -> list[_Stored]:
        """Every current version of one item, newest first (more than one only after a crash
        between a put's two steps)."""
        items = self.memory.list(
            namespace=_memloop_namespace(namespace, key),
            user=self._user(namespace),
            kinds=[_KIND],
            tags=[_ROOT_TAG],
        )
        versions = [s for s in map(self._decode, items) if s is not None]
        return sorted(versions, key=lambda s: (s.updated, s.id), reverse=True)

    def _under(self, prefix: Sequence[str]) -> list[_Stored]:
        """The live items under a namespace prefix, oldest id first."""
        tag = _prefix_tag(prefix) if prefix else _ROOT_TAG
        now = _now_ms()
        out: list[_Stored] = []
        offset = 0
        while True:
            page = self.memory.list(
                tags=[tag, _ROOT_TAG], kinds=[_KIND], user=self._user(prefix), limit=_PAGE, offset=offset
            )
            for i in page:
                s = self._decode(i)
                if s is not None and s.namespace[: len(prefix)] == tuple(prefix) and not s.expired(now):
                    out.append(s)
            if len(page) < _PAGE:
                return out
            offset += _PAGE

    def _get(self, op: GetOp) -> Optional[Item]:
        versions = [v for v in self._versions(tuple(op.namespace), op.key) if not v.expired(_now_ms())]
        if not versions:
            return None
        newest = versions[0]
        if op.refresh_ttl and newest.ttl is not None:
            newest = self._refresh(newest)
        return newest.item()

    def _search(self, op: SearchOp) -> list[SearchItem]:
        _check_filter(op.filter)
        want = op.offset + op.limit
        page: Optional[list[tuple[_Stored, Optional[float]]]] = None
        if want <= 0:
            return []
        if op.query:
            ranked = self._ranked(op, want)
            if ranked is not None:
                page = [(s, score) for s, score in ranked[op.offset : want]]
        elif not op.filter:
            page = self._page(op)
        if page is None:
            page = self._every(op)[op.offset : want]
        if op.refresh_ttl:
            page = [(self._refresh(s) if s.ttl is not None else s, score) for s, score in page]
        return [s.search_item(score) for s, score in page]

    def _passes(self, s: _Stored, op: SearchOp) -> bool:
        return not op.filter or all(_matches(s.value.get(k), v) for k, v in op.filter.items())

    def _ranked(self, op: SearchOp, want: int) -> Optional[list[tuple[_Stored, Optional[float]]]]:
        """The ``want`` best live, indexed items passing the filter for ``op.query``, best
        first, asking the engine for more hits while filters drop some; ``None`` when fewer
        exist (then unindexed items follow the ranked ones, and :meth:`_every` decides)."""
        prefix = tuple(op.namespace_prefix)
        tag = _prefix_tag(prefix) if prefix else _ROOT_TAG
        k = min(_MAX_K, max(want, 10))
        now = _now_ms()
        assert op.query is not None
        while True:
            hits = self.memory.recall(
                op.query, k=k, tags=[tag, _ROOT_TAG], kinds=[_KIND], user=self._user(prefix), strategy="rerank"
            )
            ranked: list[tuple[_Stored, Optional[float]]] = []
            for h in hits:
                s = self._decode(h.item)
                if s is not None and s.namespace[: len(prefix)] == prefix and s.indexed and not s.expired(now) and self._passes(s, op):
                    ranked.append((s, h.score))
            if len(ranked) >= want:
                return ranked
            if len(hits) < k or k == _MAX_K:
                return None
            k = min(_MAX_K, k * 4)

    def _page(self, op: SearchOp) -> Optional[list[tuple[_Stored, Optional[float]]]]:
        """A page without query or filter, read as a page from the engine; ``None`` when it
        holds an expired item (then :meth:`_every` skips those)."""
        prefix = tuple(op.namespace_prefix)
        tag = _prefix_tag(prefix) if prefix else _ROOT_TAG
        items = self.memory.list(
            tags=[tag, _ROOT_TAG], kinds=[_KIND], user=self._user(prefix), limit=op.limit, offset=op.offset
        )
        now = _now_ms()
        decoded = [self._decode(i) for i in items]
        page = [s for s in decoded if s is not None]
        if len(page) < len(decoded) or any(s.expired(now) or s.namespace[: len(prefix)] != prefix for s in page):
            return None
        return [(s, None) for s in page]

    def _every(self, op: SearchOp) -> list[tuple[_Stored, Optional[float]]]:
        """Every live item under the prefix passing the filter: ranked by ``op.query`` (the
        unindexed after, with no score), else oldest write first."""
        candidates = [s for s in self._under(op.namespace_prefix) if self._passes(s, op)]
        if not (op.query and candidates):
            return [(s, None) for s in candidates]
        by_id = {s.id: s for s in candidates if s.indexed}
        tag = _prefix_tag(op.namespace_prefix) if op.namespace_prefix else _ROOT_TAG
        hits = self.memory.recall(
            op.query,
            k=min(_MAX_K, max(1, len(by_id))),
            tags=[tag, _ROOT_TAG],
            kinds=[_KIND],
            user=self._user(op.namespace_prefix),
            strategy="rerank",
        ) if by_id else []
        ranked: list[tuple[_Stored, Optional[float]]] = [(by_id.pop(h.id), h.score) for h in hits if h.id in by_id]
        return ranked + [(s, None) for s in candidates if s.id in by_id or not s.indexed]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = {s.namespace for s in self._under(())}
        for condition in op.match_conditions or ():
            namespaces = {ns for ns in namespaces if _namespace_matches(condition, ns)}
        if op.max_depth is not None:
            namespaces = {ns[: op.max_depth] for ns in namespaces}
        return sorted(namespaces)[op.offset : op.offset + op.limit]

    # --- writing -----------------------------------------------------------------------------

    def _text(self, value: "dict[str, Any]", index: Union[None, bool, list[str]]) -> str:
        fields = (
            [(f, tokenize_path(f) if f != "$" else f) for f in index]
            if isinstance(index, list)
            else self._fields
        )
        texts: list[str] = []
        for _, path in fields:
            texts.extend(t for t in get_text_at_path(value, path) if t and t.strip())
        return "\n".join(texts) if texts else dumps(value)

    def _write(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: "dict[str, Any]",
        *,
        text: str,
        indexed: bool,
        created: int,
        ttl: Optional[float],
        replacing: list[int],
    ) -> int:
        """Writes the item's new version, then forgets the versions it replaces (so a crash
        between the two leaves two, repaired at the next open); returns the new id."""
        expires = None if ttl is None else _now_ms() + int(ttl * 60_000)
        envelope = {"value": value, "created": created, "ttl": ttl, "expires": expires, "indexed": indexed}
        tags = [_ROOT_TAG] + [_prefix_tag(namespace[:n]) for n in range(1, len(namespace) + 1)]
        id = self.memory.remember(
            text,
            kind=_KIND,
            namespace=_memloop_namespace(namespace, key),
            tags=tags,
            concise=dumps(envelope),
            pinned=True,
            user=self._user(namespace),
        )
        for old in replacing:
            if old != id:
                self.memory.forget(old)
        return id

    def _put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        versions = self._versions(namespace, op.key)
        if op.value is None:
            for v in versions:
                self.memory.forget(v.id)
            return
        value = dict(op.value)
        json.dumps(value)  # a value LangGraph could not store either fails here, before a write
        now = _now_ms()
        live = [v for v in versions if not v.expired(now)]
        created = live[0].created if live else now
        self._write(
            namespace,
            op.key,
            value,
            text=self._text(value, op.index),
            indexed=op.index is not False,
            created=created,
            ttl=op.ttl,
            replacing=[v.id for v in versions],
        )

    def _refresh(self, s: _Stored) -> _Stored:
        """The item rewritten with its TTL restarted (LangGraph's refresh on read)."""
        id = self._write(
            s.namespace, s.key, s.value, text=s.text, indexed=s.indexed, created=s.created, ttl=s.ttl,
            replacing=[s.id],
        )
        refreshed = self._decode(self.memory.get(id))
        return refreshed if refreshed is not None else s

    def sweep_ttl(self) -> int:
        """Forgets every expired item; returns how many."""
        now = _now_ms()
        gone = 0
        for i in self.memory.list(tags=[_ROOT_TAG], kinds=[_KIND], limit=_PAGE):
            s = self._decode(i)
            if s is not None and s.expired(now):
                self.memory.forget(s.id)
                gone += 1
        return gone

    # --- the BaseStore interface -------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Runs ``ops`` in order; the results line up with them."""
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            else:
                raise ValueError(f"unknown operation type: {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """As :meth:`batch`, in a worker thread: the event loop goes on meanwhile (memloop
        releases the GIL while it embeds, searches and writes)."""
        return await asyncio.to_thread(self.batch, list(ops))
