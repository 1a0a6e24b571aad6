"""The keyword arguments of :meth:`~memloop.Memory.remember`, as a ``TypedDict`` that type
checkers read through ``**fields: Unpack[RememberFields]``."""

import datetime
from typing import Any, Iterable, Mapping, Optional, TypedDict, Union


class RememberFields(TypedDict, total=False):
    """The keyword arguments of ``remember`` (and a ``remember_batch`` dict's keys besides
    ``text``)."""

    kind: Optional[str]
    namespace: Optional[str]
    tags: Optional[Iterable[str]]
    importance: Optional[float]
    concise: Optional[str]
    brief: Optional[str]
    subject: Optional[str]
    source: Optional[Union[str, Mapping[str, Any]]]
    pinned: Optional[bool]
    user: Optional[str]
    agent: Optional[str]
    session: Optional[str]
    valid_from: Optional[Union[int, float, datetime.datetime]]
    valid_until: Optional[Union[int, float, datetime.datetime]]
    #: For a triple (``kind="triple"``): the subject entity; give head, relation and tail
    #: together. A newer tail of the same head and relation closes the older one.
    head: Optional[str]
    #: For a triple: the relation.
    relation: Optional[str]
    #: For a triple: the object entity.
    tail: Optional[str]
