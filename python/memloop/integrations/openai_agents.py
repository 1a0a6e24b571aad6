"""memloop as an OpenAI Agents SDK ``Session``: an agent's conversation history, kept as
memloop conversation turns, so that what was said is also recallable by meaning
(``memory.recall(..., session=session_id)``) and forgotten or erased as memloop does.

Each SDK item is one turn of the memloop conversation ``session_id`` (the memloop session
scope, with the user and agent given): its speaker is the item's ``role`` (or ``type``), its
text the item as JSON, so ``get_items`` returns every item exactly as it was added, in order,
as the SDK's ``SQLiteSession`` does.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone
from typing import Any, List, Optional, Union

from agents.memory.session import SessionABC
from agents.memory.session_settings import SessionSettings, resolve_session_limit

from .._async import AsyncMemory
from .._native import Memory
from ._shared import OwnsMemory, PathLike, dumps, open_memory

__all__ = ["MemloopSession"]


def _speaker(item: Any) -> str:
    if isinstance(item, dict):
        for field in ("role", "type"):
            value = item.get(field)
            if isinstance(value, str) and value.strip():
                return value
    return "item"


class MemloopSession(OwnsMemory, SessionABC):
    """The conversation history of one session id, in a memloop store.

    ``MemloopSession(session_id, path)`` opens (creating if needed) the store in ``path``
    (``open_options`` are :class:`memloop.Memory`'s keyword arguments);
    ``MemloopSession(session_id, memory=mem)`` works on an open ``Memory`` / ``AsyncMemory``.
    ``user`` / ``agent`` add memloop scopes to the session's turns. ``session_settings.limit``
    is the default of ``get_items(limit)``, as in the SDK.
    """

    def __init__(
        self,
        session_id: str,
        path: Optional[PathLike] = None,
        *,
        memory: Optional[Union[Memory, AsyncMemory]] = None,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        session_settings: Optional[SessionSettings] = None,
        **open_options: Any,
    ) -> None:
        if not isinstance(session_id, str) or not session_id.strip():
            raise ValueError("session_id must be a non-empty str")
        self.session_id = session_id
        self.session_settings = session_settings or SessionSettings()
        self.memory, self._owned = open_memory(path, memory, open_options)
        self._user = user
        self._agent = agent
        self._lock = asyncio.Lock()

    def _turns(self) -> List[Any]:
        """The session's turns that this session wrote: of its own scope (exactly its user and
        agent) and holding an item as it stores one. A turn another writer of the memloop store
        put in the session (another scope, or a text that is not an item's JSON) is skipped,
        never a failure: one foreign turn must not deny the whole session."""
        turns = self.memory.conversation(self.session_id, user=self._user, agent=self._agent)
        return [t for t in turns if t.user == self._user and t.agent == self._agent and self._decodes(t)]

    @staticmethod
    def _decodes(turn: Any) -> bool:
        try:
            MemloopSession._item(turn)
            return True
        except ValueError:
            return False

    @staticmethod
    def _item(turn: Any) -> Any:
        prefix = f"{turn.subject}: "
        text = turn.text[len(prefix):] if turn.text.startswith(prefix) else turn.text
        return json.loads(text)

    async def get_items(self, limit: Optional[int] = None) -> List[Any]:
        """The session's items in the order they were added; with ``limit``, the latest
        ``limit`` of them (none for 0; all for a negative limit, as SQLite's LIMIT)."""
        limit = resolve_session_limit(limit, self.session_settings)
        turns = await asyncio.to_thread(self._turns)
        if limit is not None and limit >= 0:
            turns = turns[max(0, len(turns) - limit) :] if limit else []
        return [self._item(t) for t in turns]

    async def add_items(self, items: List[Any]) -> None:
        """Appends ``items`` (JSON-serialisable SDK items) to the session, all or none."""
        if not items:
            return
        now = datetime.now(timezone.utc)
        turns = [{"speaker": _speaker(item), "text": dumps(item), "time": now} for item in items]
        async with self._lock:
            await asyncio.to_thread(
                self.memory.remember_conversation, self.session_id, turns, user=self._user, agent=self._agent
            )

    async def pop_item(self) -> Optional[Any]:
        """Removes and returns the latest item, or ``None`` when the session is empty."""
        async with self._lock:
            turns = await asyncio.to_thread(self._turns)
            if not turns:
                return None
            last = turns[-1]
            await asyncio.to_thread(self.memory.forget, last.id)
            return self._item(last)

    async def clear_session(self) -> None:
        """Erases the session: its turns and what memloop derived from them."""
        async with self._lock:
            await asyncio.to_thread(
                self.memory.forget_scope, user=self._user, agent=self._agent, session=self.session_id
            )
