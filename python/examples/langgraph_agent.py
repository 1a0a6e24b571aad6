"""A LangGraph agent whose long-term memory is memloop, through LangMem's memory tools.

No API key: the chat model is LangChain's scripted fake (it asks for the tool calls an LLM
would); the tools, the agent loop and the memory are real. Run:

    python examples/langgraph_agent.py [STORE_DIR]
"""

import sys
import tempfile

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.prebuilt import create_react_agent
from langmem import create_manage_memory_tool, create_search_memory_tool

from memloop.integrations.langgraph import MemloopStore


class ScriptedModel(GenericFakeChatModel):
    """Answers with the next scripted message; tools are bound as a real model binds them."""

    def bind_tools(self, tools, **kwargs):
        return self


def call(name, args, id):
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": id}])


def main(store_dir):
    # namespace ("memories", user_id): user_at=1 makes the user a memloop scope.
    store = MemloopStore(store_dir, user_at=1)
    namespace = ("memories", "{user_id}")
    tools = [create_manage_memory_tool(namespace=namespace), create_search_memory_tool(namespace=namespace)]
    model = ScriptedModel(
        messages=iter(
            [
                call("manage_memory", {"content": "Alice drinks green tea every morning", "action": "create"}, "1"),
                AIMessage(content="Noted: you drink green tea."),
                call("search_memory", {"query": "what does she drink?"}, "2"),
                AIMessage(content="You drink green tea every morning."),
            ]
        )
    )
    agent = create_react_agent(model, tools, store=store)
    alice = {"configurable": {"user_id": "alice"}}
    agent.invoke({"messages": [{"role": "user", "content": "I drink green tea every morning."}]}, alice)
    reply = agent.invoke({"messages": [{"role": "user", "content": "What do I drink?"}]}, alice)
    print("search_memory returned:", reply["messages"][-2].content)
    print("agent:", reply["messages"][-1].content)
    for item in store.search(("memories", "alice"), query="tea"):
        print("alice's memory:", item.value["content"])
    print("bob's memories:", store.search(("memories", "bob"), query="tea"))
    store.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="memloop-langgraph-"))
