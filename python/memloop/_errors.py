"""The exception tree: every failure of memloop is a :class:`MemloopError` subclass.

The extension module raises these classes (it imports them from here); ``code`` is the status
code the C ABI reports for the same failure.
"""

from typing import Optional


class MemloopError(Exception):
    """An error reported by the memloop library; ``code`` is its status code."""

    code: int = -1

    def __init__(self, message: str, code: Optional[int] = None):
        super().__init__(message)
        if code is not None:
            self.code = code


# generated from the engine's error table (engine/src/error_code.rs) by `MEMLOOP_REGENERATE=1 cargo test -p memloop --test integration door_errors`: edit the table, not this


class InvalidInputError(MemloopError, ValueError):
    """A wrong argument: empty text, a bad value, an unknown field or operation, a closed store; nothing changed."""

    code = 1


class NotFoundError(MemloopError, LookupError):
    """No memory has the given id (in the caller's scope)."""

    code = 2


class LockedError(MemloopError):
    """Another process holds the store open."""

    code = 3


class ModelMismatchError(MemloopError):
    """The store was built with another embedding model."""

    code = 4


class CorruptError(MemloopError):
    """A file of the store is damaged: refused before it was believed."""

    code = 5


class UnsupportedVersionError(MemloopError):
    """A file was written by a newer memloop."""

    code = 6


class StorageIOError(MemloopError, OSError):
    """The file system refused a read or a write."""

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
    """A caller's callback (a reranker, refiner, summarizer or token counter) failed; the cause is its error."""

    code = 11


class PanicError(MemloopError):
    """memloop hit an internal bug, reported instead of crashing: stored data is unharmed and the store stays usable."""

    code = 12


class PoisonedError(StoreError):
    """A commit failed and the database could not be reopened for writing yet (a full disk): reads go on, writes are refused until storage recovers."""

    code = 13


class BackgroundError(StoreError):
    """The background thread's last checkpoint or flush failed."""

    code = 14


class StoreKeyError(MemloopError):
    """The store is encrypted and its key file is missing, wrong or damaged, or a passphrase is wrong; nothing was written."""

    code = 15


__all__ = [
    "MemloopError",
    "InvalidInputError",
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
# end of generated


#: The name :class:`InvalidInputError` had before every door took its classes from one table
#: (kept, the same class: ``except memloop.InvalidArgumentError`` goes on working).
InvalidArgumentError = InvalidInputError
__all__ += ["InvalidArgumentError"]
