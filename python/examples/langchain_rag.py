"""A LangChain retrieval chain over memloop: documents in a `MemloopVectorStore` (memloop's own
embedder), retrieved through `as_retriever()` into a prompt.

No API key: the chat model is LangChain's fake that repeats its prompt, so what the retriever
put into the prompt is printed. Run:

    python examples/langchain_rag.py [STORE_DIR]
"""

import sys
import tempfile

from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough

from memloop.integrations.langchain import MemloopVectorStore


def main(store_dir):
    with MemloopVectorStore(path=store_dir) as store:
        store.add_texts(
            [
                "The office closes at 6 pm on Fridays.",
                "Parking permits are renewed every January.",
                "The cafeteria serves vegetarian food on Mondays.",
            ],
            metadatas=[{"source": "hours"}, {"source": "parking"}, {"source": "food"}],
        )
        retriever = store.as_retriever(search_kwargs={"k": 1})
        prompt = ChatPromptTemplate.from_template("Context: {context}\nQuestion: {question}")
        chain = (
            {"context": retriever | (lambda docs: docs[0].page_content), "question": RunnablePassthrough()}
            | prompt
            | ParrotFakeChatModel()
        )
        print(chain.invoke("When does the office close on Friday?").content)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="memloop-langchain-"))
