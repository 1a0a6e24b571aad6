"""`MemloopSession` against the OpenAI Agents SDK's own `SQLiteSession`: the same random
sequences of add_items / get_items(limit) / pop_item / clear_session give item-for-item the same
results; sessions never see each other's items; what was said is recallable by meaning."""

import asyncio
import random

from agents.memory import SQLiteSession

from memloop import Memory
from memloop.integrations.openai_agents import MemloopSession


def random_item(rng):
    choice = rng.randrange(4)
    if choice == 0:
        return {"role": "user", "content": rng.choice(["hi", "hello", "what is the weather?", "hi"])}
    if choice == 1:
        return {"role": "assistant", "content": [{"type": "output_text", "text": rng.choice(["sure", "¡hola!"])}]}
    if choice == 2:
        return {"type": "function_call", "call_id": f"c{rng.randint(0, 9)}", "name": "lookup", "arguments": "{}"}
    return {"type": "function_call_output", "call_id": f"c{rng.randint(0, 9)}", "output": "42"}


def test_item_for_item_the_same_as_sqlite_session(tmp_path):
    async def main():
        memory = Memory(tmp_path / "s", hashing_embedder=32)
        for seed in range(200):
            rng = random.Random(seed)
            sid = f"session-{seed}"
            reference = SQLiteSession(sid)
            ours = MemloopSession(sid, memory=memory)
            for step in range(rng.randint(3, 15)):
                r = rng.random()
                if r < 0.4:
                    items = [random_item(rng) for _ in range(rng.randint(1, 4))]
                    await reference.add_items(items)
                    await ours.add_items(items)
                elif r < 0.7:
                    limit = rng.choice([None, 0, 1, 2, 5, -1])
                    assert await ours.get_items(limit) == await reference.get_items(limit), (seed, step, limit)
                elif r < 0.9:
                    assert await ours.pop_item() == await reference.pop_item(), (seed, step)
                else:
                    await reference.clear_session()
                    await ours.clear_session()
            assert await ours.get_items() == await reference.get_items(), seed
            reference.close()
        memory.close()

    asyncio.run(main())


def test_sessions_never_see_each_others_items_and_turns_are_recallable(tmp_path):
    async def main():
        memory = Memory(tmp_path / "s", hashing_embedder=64)
        a = MemloopSession("a", memory=memory, user="ana")
        b = MemloopSession("b", memory=memory, user="ben")
        await a.add_items([{"role": "user", "content": "my cat is called Miso"}])
        await b.add_items([{"role": "user", "content": "my dog is called Rex"}])
        assert await a.get_items() == [{"role": "user", "content": "my cat is called Miso"}]
        assert await b.get_items() == [{"role": "user", "content": "my dog is called Rex"}]
        hits = memory.recall("cat Miso", session="a", kinds=["turn"])
        assert hits and all(h.item.session == "a" for h in hits)
        await a.clear_session()
        assert await a.get_items() == []
        assert len(await b.get_items()) == 1
        memory.close()

    asyncio.run(main())
