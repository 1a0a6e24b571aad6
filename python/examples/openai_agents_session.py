"""An OpenAI Agents SDK agent whose conversation history lives in memloop.

No API key: the model is a small scripted `Model` (it answers from the history the SDK hands
it, as an LLM would see it); the Runner, the session protocol and the memory are real. Run:

    python examples/openai_agents_session.py [STORE_DIR]
"""

import asyncio
import sys
import tempfile

from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from memloop import Memory
from memloop.integrations.openai_agents import MemloopSession


class HistoryEchoModel(Model):
    """Replies with how many earlier user messages it was shown and the first of them."""

    async def get_response(self, system_instructions, input, *args, **kwargs):
        users = [i["content"] for i in input if isinstance(i, dict) and i.get("role") == "user"]
        text = f"I have seen {len(users)} messages from you; the first was {users[0]!r}."
        message = ResponseOutputMessage(
            id="msg", type="message", role="assistant", status="completed",
            content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("this example does not stream")


async def main(store_dir):
    set_tracing_disabled(True)  # no OpenAI account: traces stay local
    memory = Memory(store_dir)
    session = MemloopSession("chat-42", memory=memory, user="alice")
    agent = Agent(name="assistant", instructions="Be brief.", model=HistoryEchoModel())
    for question in ["My cat is called Miso.", "What is my cat called?"]:
        result = await Runner.run(agent, question, session=session)
        print("agent:", result.final_output)
    print("history items:", len(await session.get_items()))
    # The turns are memloop memories too: recallable by meaning, scoped to the session.
    for hit in memory.recall("pet's name", session="chat-42", kinds=["turn"], k=1):
        print("recalled:", hit.text)
    memory.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="memloop-agents-")))
