""":class:`AsyncMemory`: the :class:`~memloop.Memory` API as awaitables.

Each call runs in a worker thread (``asyncio.to_thread``), off the event loop; the native work
releases the GIL there, so the loop keeps serving while memloop embeds, searches or writes.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from ._native import Context, Hit, Item, Memory, Remembered

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._fields import RememberFields

PathLike = Union[str, "os.PathLike[str]"]


class AsyncMemory:
    """A memory store whose methods are awaitable. Open one with ``await AsyncMemory.open(path,
    ...)`` (the same arguments as :class:`~memloop.Memory`) or wrap an open ``Memory``; use it
    as ``async with``, or ``await close()``."""

    def __init__(self, memory: Union[Memory, PathLike], **options: Any) -> None:
        """Wraps an open :class:`~memloop.Memory`, or opens the store in a path as
        ``Memory(path, **options)`` does (loading the model on this thread: in a running event
        loop prefer ``await AsyncMemory.open(path)``)."""
        if isinstance(memory, Memory):
            if options:
                raise TypeError("options apply when AsyncMemory opens a path, not to an open Memory")
            self.memory = memory
        elif isinstance(memory, (str, os.PathLike)):
            self.memory = Memory(memory, **options)
        else:
            raise TypeError(
                "AsyncMemory takes an open memloop.Memory or a store path (str or os.PathLike), "
                f"not {type(memory).__name__}"
            )
        """The synchronous store underneath (usable from threads at the same time)."""

    @classmethod
    async def open(cls, path: PathLike, **options: Any) -> "AsyncMemory":
        """Opens (creating if needed) the store in ``path`` without blocking the event loop
        while the model loads."""
        return cls(await asyncio.to_thread(Memory, path, **options))

    async def remember(self, text: str, **fields: Unpack[RememberFields]) -> int:
        """As :meth:`Memory.remember`."""
        return await asyncio.to_thread(self.memory.remember, text, **fields)

    async def remember_explained(
        self, text: str, **fields: Unpack[RememberFields]
    ) -> Remembered:
        """As :meth:`Memory.remember_explained`."""
        return await asyncio.to_thread(self.memory.remember_explained, text, **fields)

    async def remember_batch(self, items: Iterable[Union[str, Mapping[str, Any]]]) -> List[int]:
        """As :meth:`Memory.remember_batch`."""
        return await asyncio.to_thread(self.memory.remember_batch, list(items))

    async def get(self, id: int) -> Optional[Item]:
        """As :meth:`Memory.get`."""
        return await asyncio.to_thread(self.memory.get, id)

    async def recall(
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
        as_of: Any = None,
        history: Optional[bool] = None,
    ) -> List[Hit]:
        """As :meth:`Memory.recall` (the defaults are the engine's: None means "not given")."""
        return await asyncio.to_thread(
            self.memory.recall, query, k, namespace, kinds, tags, strategy, user, agent, session,
            as_of, history,
        )

    async def context(
        self,
        query: str,
        budget: Optional[int] = None,
        k: Optional[int] = None,
        strategy: Optional[str] = None,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        as_of: Any = None,
        *,
        namespace: Optional[str] = None,
        kinds: Optional[Iterable[str]] = None,
        tags: Optional[Iterable[str]] = None,
        history: Optional[bool] = None,
        mode: Optional[str] = None,
        key_share: Optional[float] = None,
    ) -> Context:
        """As :meth:`Memory.context` (the defaults are the engine's: None means "not given")."""
        return await asyncio.to_thread(
            lambda: self.memory.context(
                query, budget, k, strategy, user, agent, session, as_of,
                namespace=namespace, kinds=kinds, tags=tags, history=history, mode=mode,
                key_share=key_share,
            )
        )

    async def feedback(self, id: int, level: int) -> None:
        """As :meth:`Memory.feedback`."""
        await asyncio.to_thread(self.memory.feedback, id, level)

    async def record_task(
        self, request: str, steps: Sequence[str], success: bool, reflection: Optional[str] = None
    ) -> int:
        """As :meth:`Memory.record_task`."""
        return await asyncio.to_thread(
            self.memory.record_task, request, steps, success, reflection
        )

    async def observe(self, subject: str, event: str, content: Optional[str] = None) -> int:
        """As :meth:`Memory.observe`."""
        return await asyncio.to_thread(self.memory.observe, subject, event, content)

    async def forget(self, id: int) -> None:
        """As :meth:`Memory.forget`."""
        await asyncio.to_thread(self.memory.forget, id)

    async def forget_scope(
        self, *, user: Optional[str] = None, agent: Optional[str] = None, session: Optional[str] = None
    ) -> Dict[str, Any]:
        """As :meth:`Memory.forget_scope`."""
        return await asyncio.to_thread(
            self.memory.forget_scope, user=user, agent=agent, session=session
        )

    async def remember_conversation(
        self,
        session: str,
        turns: Iterable[Mapping[str, Any]],
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
    ) -> Dict[str, Any]:
        """As :meth:`Memory.remember_conversation`."""
        return await asyncio.to_thread(
            self.memory.remember_conversation, session, turns, user=user, agent=agent
        )

    async def list(self, **filters: Any) -> List[Item]:
        """As :meth:`Memory.list` (the same keyword arguments)."""
        return await asyncio.to_thread(self.memory.list, **filters)

    async def conversation(
        self, session: str, *, user: Optional[str] = None, agent: Optional[str] = None
    ) -> List[Item]:
        """As :meth:`Memory.conversation`."""
        return await asyncio.to_thread(self.memory.conversation, session, user=user, agent=agent)

    async def sweep(
        self, *, user: Optional[str] = None, agent: Optional[str] = None, session: Optional[str] = None
    ) -> Dict[str, Any]:
        """As :meth:`Memory.sweep`."""
        return await asyncio.to_thread(self.memory.sweep, user=user, agent=agent, session=session)

    async def call(
        self, operation: str, request: Optional[Mapping[str, Any]] = None
    ) -> Dict[str, Any]:
        """As :meth:`Memory.call`: any operation of the registry, its answer as a dict."""
        return await asyncio.to_thread(self.memory.call, operation, request)

    async def stats(self) -> Dict[str, Any]:
        """As :meth:`Memory.stats`."""
        return await asyncio.to_thread(self.memory.stats)

    async def check(self) -> Dict[str, Any]:
        """As :meth:`Memory.check`."""
        return await asyncio.to_thread(self.memory.check)

    async def checkpoint(self) -> None:
        """As :meth:`Memory.checkpoint`."""
        await asyncio.to_thread(self.memory.checkpoint)

    async def export(self, path: PathLike, **request: Any) -> Dict[str, Any]:
        """As :meth:`Memory.export` (the same keyword arguments)."""
        return await asyncio.to_thread(self.memory.export, path, **request)

    async def import_(self, path: PathLike, format: Optional[str] = None) -> Dict[str, Any]:
        """As :meth:`Memory.import_`."""
        return await asyncio.to_thread(self.memory.import_, path, format=format)

    async def sync(
        self,
        remote: str,
        *,
        endpoint: Optional[str] = None,
        timeout_secs: Optional[int] = None,
        compact: bool = False,
    ) -> Dict[str, Any]:
        """As :meth:`Memory.sync`."""
        return await asyncio.to_thread(
            self.memory.sync,
            remote,
            endpoint=endpoint,
            timeout_secs=timeout_secs,
            compact=compact,
        )

    def set_time(self, t: Any) -> None:
        """As :meth:`Memory.set_time` (instant: no need to await)."""
        self.memory.set_time(t)

    async def close(self) -> None:
        """As :meth:`Memory.close`: waits off the loop for calls in flight and the final save."""
        await asyncio.to_thread(self.memory.close)

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self.memory.closed

    async def __aenter__(self) -> "AsyncMemory":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"memloop.AsyncMemory({self.memory.path!r}, {'closed' if self.closed else 'open'})"
