"""`MemloopVectorStore` through langchain-tests' standard suites, unmodified: the vector store
suite (sync and async) with the suite's own deterministic embeddings, and the retriever suite
on `as_retriever()` with memloop's own embedder."""

import itertools
import tempfile

import pytest
from langchain_core.documents import Document
from langchain_tests.integration_tests import VectorStoreIntegrationTests
from langchain_tests.integration_tests.retrievers import RetrieversIntegrationTests as RetrieverIntegrationTests

from memloop.integrations.langchain import MemloopVectorStore

_counter = itertools.count()


class TestMemloopVectorStore(VectorStoreIntegrationTests):
    @pytest.fixture()
    def vectorstore(self, tmp_path):
        store = MemloopVectorStore(path=tmp_path / f"vs{next(_counter)}", embedding=self.get_embeddings())
        try:
            yield store
        finally:
            store.close()


class _SeededRetriever:
    """A store holding a few documents, opened once for the retriever suite."""

    dir = tempfile.mkdtemp(prefix="memloop-retriever-")
    store = MemloopVectorStore(path=dir, hashing_embedder=64)
    store.add_documents(
        [Document(page_content=f"example document {i} about the example topic") for i in range(12)]
    )


def _retriever(**kwargs):
    k = kwargs.pop("k", 4)
    return _SeededRetriever.store.as_retriever(search_kwargs={"k": k})


class TestMemloopRetriever(RetrieverIntegrationTests):
    @property
    def retriever_constructor(self):
        return _retriever

    @property
    def retriever_constructor_params(self):
        return {}

    @property
    def retriever_query_example(self) -> str:
        return "example query"


def test_metadata_filter_mmr_and_the_own_embedder(tmp_path):
    with MemloopVectorStore(path=tmp_path / "own") as store:
        store.add_texts(
            ["the cat sat on the mat", "dogs chase cats", "stock markets fell", "a kitten sleeps"],
            metadatas=[{"topic": "pets"}, {"topic": "pets"}, {"topic": "money"}, {"topic": "pets"}],
            ids=["1", "2", "3", "4"],
        )
        top = store.similarity_search("a cat", k=2, filter={"topic": "pets"})
        assert [d.metadata["topic"] for d in top] == ["pets", "pets"]
        assert store.similarity_search("shares", k=1)[0].id == "3"
        assert all(d.metadata["topic"] == "money" for d in store.similarity_search("cat", k=3, filter={"topic": "money"}))
        picked = store.max_marginal_relevance_search("cat", k=2, fetch_k=4)
        assert len(picked) == 2 and len({d.id for d in picked}) == 2
        scored = store.similarity_search_with_relevance_scores("cat", k=2)
        assert all(0.0 <= s <= 1.0 for _, s in scored)
        assert [d.id for d in store.get_by_ids(["4", "nope", "1"])] == ["4", "1"]


def test_memories_it_did_not_write_are_not_taken_for_documents(tmp_path):
    with MemloopVectorStore(path=tmp_path / "v", hashing_embedder=32) as store:
        store.add_texts(["ours"], ids=["1"])
        store.memory.remember("theirs", tags=["langchain.collection:langchain"])
        assert [d.id for d in store.similarity_search("theirs", k=5)] == ["1"]
        assert [d.id for d in store.get_by_ids(["1"])] == ["1"]
