"""memloop: on-device long-term memory for LLM agents.

A :class:`Memory` is a directory: memories are embedded locally (all-MiniLM-L6-v2 by default),
stored durably, recalled through an HNSW index, forgotten when they stop mattering, and
assembled into contexts that fit a token budget. The engine runs in this package's native
extension (no JSON, no subprocess); long work releases the GIL, so one :class:`Memory` serves
many threads in parallel. :class:`AsyncMemory` offers the same calls as awaitables.
"""

from ._errors import (
    CallbackError,
    CorruptError,
    EmbedError,
    InvalidArgumentError,
    InvalidInputError,
    LockedError,
    MemloopError,
    ModelMismatchError,
    NotFoundError,
    PanicError,
    PoisonedError,
    BackgroundError,
    StoreKeyError,
    StorageIOError,
    StoreError,
    UnsupportedVersionError,
    VectorIndexError,
)
from ._native import Block, Context, Hit, Item, Memory, Remembered, version as _version
from ._async import AsyncMemory
from ._fields import RememberFields

__all__ = [
    "Memory",
    "AsyncMemory",
    "Item",
    "Hit",
    "Block",
    "Context",
    "Remembered",
    "RememberFields",
    "MemloopError",
    "InvalidInputError",
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
    "PoisonedError",
    "BackgroundError",
    "StoreKeyError",
    "__version__",
]

__version__: str = _version()
