"""memloop as a LangChain ``VectorStore`` (and, through ``as_retriever()``, a retriever).

Each document is one pinned memloop memory (never forgotten by decay): its text is the
document's ``page_content`` (what is embedded and searched), its memloop namespace is the JSON of
``[collection, id]`` (so documents never merge and an id reads exactly one), it carries the
collection's tag (searches are a tag filter applied in the engine), and its ``concise``
precision holds the id and metadata as JSON. Adding a document under an existing id writes the
new version before it forgets the old, so a crash between them leaves two versions, of which
reads take the newest. Vectors come from memloop's own embedder, or from the LangChain
``Embeddings`` given (of any dimension), which then names the store's vector space.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from .._async import AsyncMemory
from .._native import Memory
from ._shared import OwnsMemory, PathLike, dumps, forget_older_versions, open_memory

__all__ = ["MemloopVectorStore"]

_KIND = "chunk"
_MAX_K = 10_000
_PAGE = 100_000

_Filter = Union[Dict[str, Any], Callable[[Document], bool], None]


class _MemloopEmbeddings(Embeddings):
    """The store's own embedder as LangChain ``Embeddings``."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def embed_documents(self, texts: List[str]) -> List[List[float]]:
        return self.memory.embed_documents(list(texts))

    def embed_query(self, text: str) -> List[float]:
        return self.memory.embed_query(text)


class MemloopVectorStore(OwnsMemory, VectorStore):
    """A LangChain vector store kept in a memloop store.

    ``MemloopVectorStore(path=...)`` opens (creating if needed) the store in ``path``;
    ``embedding=None`` uses memloop's own embedder, an ``Embeddings`` replaces it (the store is
    then bound to it: reopening with another is refused). ``memory=`` works on an open
    ``Memory`` / ``AsyncMemory`` instead. ``collection`` separates vector stores kept in one
    memloop store. ``open_options`` are :class:`memloop.Memory`'s keyword arguments.
    """

    def __init__(
        self,
        path: Optional[PathLike] = None,
        embedding: Optional[Embeddings] = None,
        *,
        memory: Optional[Union[Memory, AsyncMemory]] = None,
        collection: str = "langchain",
        **open_options: Any,
    ) -> None:
        if not isinstance(collection, str) or not collection:
            raise ValueError("collection must be a non-empty str")
        if embedding is not None:
            if memory is not None:
                raise TypeError("an embedding applies when the vector store opens a path, not to an open Memory")
            open_options = {**open_options, "embedder": embedding}
        self.memory, self._owned = open_memory(path, memory, open_options)
        self.collection = collection
        self._tag = "langchain.collection:" + collection
        self._embedding = embedding if embedding is not None else _MemloopEmbeddings(self.memory)
        # A crash between an add's two steps leaves two versions: the older is forgotten here
        # (among this store's own memories only: see `_own`).
        forget_older_versions(self.memory, self._tag, _KIND, self._own)

    @property
    def embeddings(self) -> Embeddings:
        """The embedder of the store's vectors."""
        return self._embedding

    # --- writing -----------------------------------------------------------------------------

    def _namespace(self, id: str) -> str:
        return "langchain:" + dumps([self.collection, id])

    @staticmethod
    def _own(item: Any) -> bool:
        """Whether ``item`` is this store's: it writes memories of no user and no agent, so a
        memory another writer of the memloop store planted in another scope (a token bound to
        a user) with the collection's tag and a document's namespace is never read, replaced
        or cleaned up as one of its documents."""
        return item.user is None and item.agent is None

    def _versions(self, id: str) -> List[Any]:
        items = self.memory.list(namespace=self._namespace(id), tags=[self._tag], kinds=[_KIND])
        return sorted(filter(self._own, items), key=lambda i: (i.updated, i.id), reverse=True)

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: Optional[List[Dict[str, Any]]] = None,
        *,
        ids: Optional[List[str]] = None,
        **kwargs: Any,
    ) -> List[str]:
        """Stores each text with its metadata under its id (a new UUID where none is given);
        an id already stored is replaced. Returns the ids."""
        texts = list(texts)
        metadatas = list(metadatas) if metadatas is not None else [{} for _ in texts]
        given: List[Optional[str]] = list(ids) if ids is not None else [None] * len(texts)
        if not (len(metadatas) == len(texts) == len(given)):
            raise ValueError("texts, metadatas and ids must be as many")
        out = []
        for text, metadata, maybe_id in zip(texts, metadatas, given):
            id = maybe_id if maybe_id else str(uuid.uuid4())
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"document {id!r} has no text: memloop stores what can be searched")
            envelope = dumps({"id": id, "metadata": metadata or {}})
            new = self.memory.remember(
                text,
                kind=_KIND,
                namespace=self._namespace(id),
                tags=[self._tag],
                concise=envelope,
                pinned=True,
            )
            for old in self._versions(id):
                if old.id != new:
                    self.memory.forget(old.id)
            out.append(id)
        return out

    def delete(self, ids: Optional[List[str]] = None, **kwargs: Any) -> Optional[bool]:
        """Forgets the documents with these ids (an unknown id is no error); with no ids,
        every document of the collection."""
        if ids is None:
            for item in self.memory.list(tags=[self._tag], kinds=[_KIND], limit=_PAGE):
                if self._own(item):
                    self.memory.forget(item.id)
            return True
        for id in ids:
            for item in self._versions(id):
                self.memory.forget(item.id)
        return True

    # --- reading -----------------------------------------------------------------------------

    @staticmethod
    def _document(item: Any) -> Optional[Document]:
        """The document a memory holds, or ``None`` for one this store did not write (another
        program's memory that happens to carry the collection's tag, or one of another scope)."""
        if not MemloopVectorStore._own(item) or not item.namespace.startswith("langchain:") or item.concise is None:
            return None
        try:
            envelope = json.loads(item.concise)
            return Document(page_content=item.text, metadata=envelope["metadata"], id=envelope["id"])
        except (ValueError, KeyError, TypeError):
            return None

    def get_by_ids(self, ids: Sequence[str], /) -> List[Document]:
        """The stored documents of these ids, in their order; unknown ids are left out."""
        out = []
        for id in ids:
            docs = [d for d in map(self._document, self._versions(id)) if d is not None]
            if docs:
                out.append(docs[0])
        return out

    def _hits(self, query: str, k: int, filter: _Filter) -> List[Tuple[Document, float, Any]]:
        """The ``k`` best documents passing ``filter``, asking the engine for more hits while
        the filter drops some."""
        if k <= 0:
            return []
        ask = min(_MAX_K, k if filter is None else max(4 * k, 20))
        while True:
            hits = self.memory.recall(query, k=ask, tags=[self._tag], kinds=[_KIND])
            out: List[Tuple[Document, float, Any]] = []
            for hit in hits:
                doc = self._document(hit.item)
                if doc is not None and (filter is None or _passes(doc, filter)):
                    out.append((doc, hit.score, hit))
                    if len(out) == k:
                        return out
            if len(hits) < ask or ask == _MAX_K:
                return out
            ask = min(_MAX_K, ask * 4)

    def similarity_search_with_score(
        self, query: str, k: int = 4, filter: _Filter = None, **kwargs: Any
    ) -> List[Tuple[Document, float]]:
        """The ``k`` documents closest to ``query`` (cosine similarity, higher is closer),
        only those whose metadata has every key of ``filter`` with its value (or for which a
        callable ``filter`` is true)."""
        return [(doc, score) for doc, score, _ in self._hits(query, k, filter)]

    def similarity_search(
        self, query: str, k: int = 4, filter: _Filter = None, **kwargs: Any
    ) -> List[Document]:
        """As :meth:`similarity_search_with_score`, without the scores."""
        return [doc for doc, _ in self.similarity_search_with_score(query, k, filter)]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        # memloop's score is a cosine similarity in [-1, 1]: mapped onto [0, 1].
        return lambda score: (score + 1.0) / 2.0

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: _Filter = None,
        **kwargs: Any,
    ) -> List[Document]:
        """``k`` documents among the ``fetch_k`` closest to ``query``, chosen for relevance
        and diversity (``lambda_mult`` 1: relevance only, 0: diversity only)."""
        candidates = self._hits(query, fetch_k, filter)
        if not candidates:
            return []
        vectors = self._embedding.embed_documents([doc.page_content for doc, _, _ in candidates])
        picked = maximal_marginal_relevance(
            _array(self._embedding.embed_query(query)), vectors, lambda_mult=lambda_mult, k=k
        )
        return [candidates[i][0] for i in picked]

    @classmethod
    def from_texts(
        cls,
        texts: List[str],
        embedding: Optional[Embeddings] = None,
        metadatas: Optional[List[Dict[str, Any]]] = None,
        *,
        ids: Optional[List[str]] = None,
        path: Optional[PathLike] = None,
        **kwargs: Any,
    ) -> "MemloopVectorStore":
        """A vector store in ``path`` (required) holding ``texts``."""
        if path is None:
            raise TypeError("from_texts needs path=: the directory of the memloop store")
        store = cls(path=path, embedding=embedding, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store


def _passes(doc: Document, filter: Union[Dict[str, Any], Callable[[Document], bool]]) -> bool:
    if callable(filter):
        return bool(filter(doc))
    return all(doc.metadata.get(k) == v for k, v in filter.items())


def _array(v: List[float]) -> Any:
    import numpy as np

    return np.array(v)
