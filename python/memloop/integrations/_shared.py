"""What the adapters share: opening the store they are given, and JSON as they store it."""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

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


def dumps(value: Any) -> str:
    """Compact JSON that keeps non-ASCII text as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
