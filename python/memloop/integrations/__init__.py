"""memloop as the memory of agent frameworks, each an optional extra of the wheel:

- :mod:`memloop.integrations.langgraph`: ``MemloopStore``, a LangGraph ``BaseStore``
  (``pip install "memloop[langgraph]"``);
- :mod:`memloop.integrations.langchain`: ``MemloopVectorStore``, a LangChain ``VectorStore``
  (``pip install "memloop[langchain]"``);
- :mod:`memloop.integrations.openai_agents`: ``MemloopSession``, an OpenAI Agents SDK
  ``Session`` (``pip install "memloop[openai-agents]"``).

Importing this package imports no framework; each module imports its own.
"""
