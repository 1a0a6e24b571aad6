"""The exception tree: every failure of memloop is a :class:`MemloopError` subclass.

The extension module raises these classes (it imports them from here); ``code`` is the status
code the C ABI reports for the same failure.
"""

from typing import Optional

__all__ = [
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
    "PoisonedError",
    "BackgroundError",
    "StoreKeyError",
]


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


class PoisonedError(StoreError):
    """A commit failed and the database could not be reopened for writing yet (a full disk):
    reads go on, writes are refused until storage recovers."""

    code = 13


class BackgroundError(StoreError):
    """The background thread's last checkpoint or flush failed (raised by ``flush``)."""

    code = 14


class StoreKeyError(MemloopError):
    """The store is encrypted and its key file is missing, wrong or damaged, or a passphrase
    is wrong; nothing was written. (Not named ``KeyError``, which would shadow the built-in.)"""

    code = 15
