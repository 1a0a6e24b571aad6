"""What the adapters share: opening the store they are given, and JSON as they store it."""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Optional, TypeVar, Union

from .._async import AsyncMemory
from .._native import Memory

PathLike = Union[str, "os.PathLike[str]"]


def open_memory(
    path: Optional[PathLike], memory: Optional[Union[Memory, AsyncMemory]], options: "dict[str, Any]"
) -> tuple[Memory, bool]:
    """The synchronous ``Memory`` an adapter works on, and whether the adapter opened it (and
    so closes it): ``memory`` when given (an ``AsyncMemory``'s underneath), else the store in
    ``path`` opened with ``options``."""
    if (path is None) == (memory is None):
        raise TypeError("give either a store path or an open Memory / AsyncMemory, not both")
    if memory is not None:
        if options:
            raise TypeError("open options apply when the adapter opens a path, not to an open Memory")
        if isinstance(memory, AsyncMemory):
            return memory.memory, False
        if isinstance(memory, Memory):
            return memory, False
        raise TypeError(f"memory must be a memloop.Memory or AsyncMemory, not {type(memory).__name__}")
    assert path is not None
    return Memory(path, **options), True


_Owner = TypeVar("_Owner", bound="OwnsMemory")


class OwnsMemory:
    """What every adapter does with the store it works on: closes it if it opened it (see
    :func:`open_memory`), as ``close()`` or at the end of a ``with`` block."""

    memory: Memory
    _owned: bool

    def close(self) -> None:
        """Closes the memloop store if this adapter opened it."""
        if self._owned:
            self.memory.close()

    def __enter__(self: _Owner) -> _Owner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def dumps(value: Any) -> str:
    """Compact JSON that keeps non-ASCII text as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_PAGE = 100_000


def forget_older_versions(memory: Memory, tag: str, kind: str, own: Callable[[Any], bool]) -> int:
    """Among the memories of ``kind`` tagged ``tag`` that are the adapter's ``own`` (its scope:
    a memory another user's writer planted with the same tag and namespace is never one),
    where two share a memloop namespace (an adapter's one item, written twice by a replace that
    a crash cut between its write of the new version and its forgetting of the old), forgets
    all but the newest. Returns how many."""
    items: list[Any] = []
    while True:
        page = memory.list(tags=[tag], kinds=[kind], limit=_PAGE, offset=len(items))
        items.extend(page)
        if len(page) < _PAGE:
            break
    newest: "dict[str, Any]" = {}
    forgotten = 0
    for item in items:
        if not own(item):
            continue
        other = newest.get(item.namespace)
        if other is None:
            newest[item.namespace] = item
            continue
        older, newer = sorted((other, item), key=lambda i: (i.updated, i.id))
        memory.forget(older.id)
        newest[item.namespace] = newer
        forgotten += 1
    return forgotten
