"""Type stubs of the native extension ``memloop._native`` (re-exported by ``memloop``)."""

import datetime
import os
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union, final

from typing_extensions import Unpack

from ._fields import RememberFields

_Path = Union[str, "os.PathLike[str]"]
_Time = Union[int, float, datetime.datetime]
_Source = Union[str, Mapping[str, Any]]

_Reranker = Callable[[str, List["Hit"]], Sequence[float]]
_Refiner = Callable[[str, List["Hit"], int], str]
_Summarizer = Callable[[str], Tuple[str, str]]
_TokenCounter = Callable[[str], int]
_Extractor = Callable[[str, List[Dict[str, Any]]], Iterable[Mapping[str, Any]]]

def version() -> str:
    """The library's version."""

@final
class Item:
    """A stored memory. ``data`` holds every field as a dict."""

    @property
    def id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def tags(self) -> List[str]: ...
    @property
    def importance(self) -> float: ...
    @property
    def tier(self) -> str: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def count(self) -> int: ...
    @property
    def concise(self) -> Optional[str]: ...
    @property
    def brief(self) -> Optional[str]: ...
    @property
    def subject(self) -> Optional[str]: ...
    @property
    def created(self) -> int:
        """Creation time, ms since the Unix epoch."""
    @property
    def updated(self) -> int:
        """Last update time, ms since the Unix epoch."""
    @property
    def user(self) -> Optional[str]: ...
    @property
    def agent(self) -> Optional[str]: ...
    @property
    def session(self) -> Optional[str]: ...
    @property
    def valid_from(self) -> int:
        """When what it says became true, ms since the Unix epoch."""
    @property
    def valid_until(self) -> Optional[int]:
        """When it stopped being true (ms), or None while it holds."""
    @property
    def data(self) -> Dict[str, Any]: ...

@final
class Hit:
    """A recalled memory: its score, rank and why it surfaced."""

    @property
    def id(self) -> int: ...
    @property
    def score(self) -> float: ...
    @property
    def rank(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def tier(self) -> str: ...
    @property
    def item(self) -> Item: ...
    @property
    def explain(self) -> Dict[str, Any]: ...

@final
class Block:
    """One memory in a context, at the precision it is served at."""

    @property
    def label(self) -> str: ...
    @property
    def id(self) -> int: ...
    @property
    def precision(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def score(self) -> float: ...

@final
class Context:
    """An assembled context: ``tokens`` never exceeds the budget asked for."""

    @property
    def text(self) -> str: ...
    @property
    def tokens(self) -> int: ...
    @property
    def blocks(self) -> List[Block]: ...
    @property
    def dropped(self) -> List[int]: ...

@final
class Remembered:
    """What ``remember_explained`` did; unpacks as ``(id, action, previous)``."""

    @property
    def id(self) -> int: ...
    @property
    def action(self) -> str: ...
    @property
    def previous(self) -> Optional[int]: ...
    def __iter__(self) -> Iterator[Any]: ...

@final
class Memory:
    """A memory store in a directory; usable from many threads, and as a context manager."""

    @property
    def path(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def __new__(
        cls,
        path: _Path,
        model: Optional[_Path] = None,
        clock: Optional[str] = None,
        sync: Optional[bool] = None,
        *,
        start: Optional[_Time] = None,
        capacity: Optional[int] = None,
        capacity_per_user: Optional[int] = None,
        dedup_threshold: Optional[float] = ...,
        hashing_embedder: Optional[int] = None,
        reranker: Optional[_Reranker] = None,
        refiner: Optional[_Refiner] = None,
        summarizer: Optional[_Summarizer] = None,
        token_counter: Optional[_TokenCounter] = None,
        extractor: Optional[_Extractor] = None,
        device: Optional[str] = None,
        max_text_bytes: Optional[int] = None,
        recall_ef: Optional[int] = None,
        index_vectors: Optional[str] = None,
        embedder: Optional[Any] = None,
        precision: Optional[str] = None,
        key_file: Optional[_Path] = None,
        passphrase: Optional[str] = None,
        reranker_model: Optional[_Path] = None,
    ) -> "Memory": ...
    def remember(self, text: str, **fields: Unpack[RememberFields]) -> int: ...
    def remember_explained(self, text: str, **fields: Unpack[RememberFields]) -> Remembered: ...
    def remember_batch(self, items: Iterable[Union[str, Mapping[str, Any]]]) -> List[int]: ...
    def get(self, id: int) -> Optional[Item]: ...
    def recall(
        self,
        query: str,
        k: Optional[int] = None,
        namespace: Optional[str] = None,
        kinds: Optional[Iterable[str]] = None,
        tags: Optional[Iterable[str]] = None,
        strategy: Optional[str] = None,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        as_of: Optional[_Time] = None,
        history: Optional[bool] = None,
    ) -> List[Hit]: ...
    def context(
        self,
        query: str,
        budget: Optional[int] = None,
        k: Optional[int] = None,
        strategy: Optional[str] = None,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        as_of: Optional[_Time] = None,
        *,
        namespace: Optional[str] = None,
        kinds: Optional[Iterable[str]] = None,
        tags: Optional[Iterable[str]] = None,
        history: Optional[bool] = None,
        mode: Optional[str] = None,
        key_share: Optional[float] = None,
    ) -> Context: ...
    def feedback(self, id: int, level: int) -> None: ...
    def record_task(
        self, request: str, steps: Sequence[str], success: bool, reflection: Optional[str] = None
    ) -> int: ...
    def observe(self, subject: str, event: str, content: Optional[str] = None) -> int: ...
    def forget(self, id: int) -> None: ...
    def forget_scope(
        self, *, user: Optional[str] = None, agent: Optional[str] = None, session: Optional[str] = None
    ) -> Dict[str, Any]: ...
    def remember_conversation(
        self,
        session: str,
        turns: Iterable[Mapping[str, Any]],
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
    ) -> Dict[str, Any]: ...
    def list(
        self,
        *,
        namespace: Optional[str] = None,
        kinds: Optional[Iterable[str]] = None,
        tags: Optional[Iterable[str]] = None,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        history: Optional[bool] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[Item]: ...
    def embed_documents(self, texts: List[str]) -> List[List[float]]: ...
    def embed_query(self, text: str) -> List[float]: ...
    def conversation(
        self, session: str, *, user: Optional[str] = None, agent: Optional[str] = None
    ) -> List[Item]: ...
    def sweep(
        self, *, user: Optional[str] = None, agent: Optional[str] = None, session: Optional[str] = None
    ) -> Dict[str, Any]: ...
    def set_time(self, t: _Time) -> None: ...
    def call(self, operation: str, request: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Runs any operation of the registry with its request's fields; returns its answer
        (the same JSON every door returns)."""
        ...
    def stats(self) -> Dict[str, Any]: ...
    def check(self) -> Dict[str, Any]: ...
    def checkpoint(self) -> None: ...
    def export(
        self,
        path: _Path,
        *,
        format: Optional[str] = None,
        namespace: Optional[str] = None,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        since: Optional[int] = None,
        plaintext: bool = False,
    ) -> Dict[str, Any]: ...
    def import_(self, path: _Path, *, format: Optional[str] = None) -> Dict[str, Any]: ...
    def sync(
        self,
        remote: str,
        *,
        endpoint: Optional[str] = None,
        timeout_secs: Optional[int] = None,
        compact: bool = False,
    ) -> Dict[str, Any]: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Memory": ...
    def __exit__(self, *exc: object) -> None: ...
