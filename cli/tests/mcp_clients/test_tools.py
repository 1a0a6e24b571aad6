"""Every tool of `memloop mcp` through the official MCP client, with the real model."""

import json
import pathlib
import subprocess

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from conftest import BIN, Client

TOOLS = {
    "remember",
    "update",
    "remember_conversation",
    "recall",
    "context",
    "feedback",
    "record_task",
    "observe",
    "get",
    "list",
    "forget",
    "explain_decay",
    "stats",
    "sweep",
}


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def ok(session, tool, args):
    result = await session.call_tool(tool, args)
    assert not result.is_error, f"{tool} {args}: {text_of(result)}"
    assert result.structured_content is not None, tool
    assert text_of(result), tool
    return result.structured_content


async def refused(session, tool, args, *words):
    result = await session.call_tool(tool, args)
    assert result.is_error, f"{tool} {args} should fail: {result}"
    message = text_of(result)
    for w in words:
        assert w in message, f"{tool}: {message!r} does not name {w!r}"
    return message


def test_every_tool_and_bad_arguments(store, log):
    async def main():
        async with Client(store, log) as s:
            listed = await s.list_tools()
            names = {t.name for t in listed.tools}
            assert names == TOOLS
            for t in listed.tools:
                assert t.description and len(t.description) > 30, t.name
                assert t.input_schema["type"] == "object", t.name
                # The answer's schema: the SDK checks every structured answer against it.
                assert t.output_schema and t.output_schema["type"] == "object", t.name
            recall_schema = next(t for t in listed.tools if t.name == "recall").input_schema
            assert "query" in recall_schema["properties"]
            assert "query" in recall_schema.get("required", [])

            deploy = await ok(s, "remember", {
                "text": "The deploy key lives in vault under prod/deploy",
                "kind": "fact", "tags": ["ops"], "importance": 0.9,
                "concise": "deploy key: vault prod/deploy", "brief": "vault prod/deploy",
            })
            assert isinstance(deploy["id"], int) and deploy["action"] == "new"
            tea = (await ok(s, "remember", {"text": "Alice prefers green tea in the morning",
                                            "namespace": "alice"}))["id"]
            again = await ok(s, "remember", {"text": "The deploy key lives in vault under prod/deploy",
                                             "kind": "fact", "tags": ["ops"]})
            assert again["id"] == deploy["id"] and again["action"] == "merged"
            triple = await ok(s, "remember", {"text": "Paris is the capital of France", "kind": "triple",
                                              "head": "Paris", "relation": "capital of", "tail": "France"})

            hits = (await ok(s, "recall", {"query": "where is the deploy key?", "k": 3}))["hits"]
            assert hits[0]["id"] == deploy["id"]
            assert {"id", "score", "text"} <= set(hits[0])
            explained = (await ok(s, "recall", {"query": "what does Alice drink", "k": 1,
                                                "namespace": "alice", "strategy": "rerank",
                                                "explain": True}))["hits"]
            assert explained[0]["id"] == tea and "explain" in explained[0]

            ctx = await s.call_tool("context", {"query": "deploy key", "budget": 60})
            assert not ctx.is_error and "vault" in text_of(ctx)
            assert ctx.structured_content["tokens"] <= 60

            fb = await ok(s, "feedback", {"id": deploy["id"], "level": 5})
            assert fb["count"] == 1
            task = await ok(s, "record_task", {"request": "rotate the deploy key", "outcome": "failure",
                                               "steps": ["open vault", "rotate"],
                                               "reflection": "ask for the vault token first"})
            assert isinstance(task["task"], int) and isinstance(task["reflection"], int)
            seen = await ok(s, "observe", {"subject": "src/main.rs", "event": "created",
                                           "content": "prints hello"})
            item = await ok(s, "get", {"id": deploy["id"]})
            assert item["text"].startswith("The deploy key") and item["count"] == 2
            decay = await ok(s, "explain_decay", {"id": tea})
            assert decay["id"] == tea
            listed = (await ok(s, "list", {"namespace": "alice", "limit": 5}))["memories"]
            assert [m["id"] for m in listed] == [tea]
            swept = await ok(s, "sweep", {})
            assert swept["forgotten"] == 0 and "demoted" in swept
            stats = await ok(s, "stats", {})
            assert stats["memories"] >= 5 and stats["model"].startswith("all-MiniLM-L6-v2")
            await ok(s, "forget", {"id": triple["id"]})
            await refused(s, "get", {"id": triple["id"]}, str(triple["id"]))
            assert seen["id"] != deploy["id"]

            # Bad arguments are tool errors that name what was wrong; the server keeps serving.
            await refused(s, "recall", {"query": ""}, "query")
            await refused(s, "recall", {"query": "x", "k": 0}, "k")
            await refused(s, "recall", {"query": "x", "strategy": "psychic"}, "psychic")
            await refused(s, "remember", {"text": "   "}, "empty")
            await refused(s, "remember", {"text": "x", "kind": "poem"}, "poem")
            await refused(s, "remember", {"text": "x", "importance": 3}, "importance")
            await refused(s, "remember", {"text": "x", "head": "only a head"}, "head")
            await refused(s, "remember", {}, "text")
            await refused(s, "remember", {"text": "x", "colour": "red"}, "colour")
            await refused(s, "feedback", {"id": deploy["id"], "level": 9}, "level")
            await refused(s, "feedback", {"id": 999999, "level": 3}, "999999")
            await refused(s, "record_task", {"request": "x", "outcome": "meh"}, "meh")
            await refused(s, "observe", {"subject": "a", "event": "exploded"}, "exploded")
            await refused(s, "context", {"query": "x", "mode": "poetry"}, "poetry")
            await refused(s, "get", {"id": "seven"}, "id")
            await refused(s, "list", {"limit": 0}, "limit")
            await refused(s, "sweep", {"now": 5}, "now")
            # An unknown tool is a protocol error, not a tool result.
            with pytest.raises(MCPError):
                await s.call_tool("teleport", {})
            assert (await ok(s, "stats", {}))["memories"] == stats["memories"] - 1

    anyio.run(main)


def test_the_cli_runs_commands_in_the_serving_process(store, log):
    """While an agent's `memloop mcp` holds the store, the CLI's commands run there."""

    async def main():
        async with Client(store, log) as s:
            made = await ok(s, "remember", {"text": "The office wifi password is on the fridge"})
            run = await anyio.to_thread.run_sync(lambda: subprocess.run(
                [BIN, "--store", str(store), "recall", "wifi password", "--k", "1", "--json"],
                capture_output=True, text=True, timeout=120))
            assert run.returncode == 0, run.stderr
            assert json.loads(run.stdout)["hits"][0]["id"] == made["id"]
            run = await anyio.to_thread.run_sync(lambda: subprocess.run(
                [BIN, "--store", str(store), "remember", "The printer is on the second floor",
                 "--json"], capture_output=True, text=True, timeout=120))
            assert run.returncode == 0, run.stderr
            printer = json.loads(run.stdout)["id"]
            hits = (await ok(s, "recall", {"query": "where is the printer", "k": 1}))["hits"]
            assert hits[0]["id"] == printer
            # A backup and a check run in the serving process too: no agent is stopped.
            backup = pathlib.Path(str(store) + "-backup.mlx")
            run = await anyio.to_thread.run_sync(lambda: subprocess.run(
                [BIN, "--store", str(store), "export", backup.name],
                capture_output=True, text=True, timeout=120, cwd=backup.parent))
            assert run.returncode == 0, run.stderr
            assert json.loads(run.stdout)["exported"] == 2 and backup.stat().st_size > 0
            run = await anyio.to_thread.run_sync(lambda: subprocess.run(
                [BIN, "--store", str(store), "check", "--json"],
                capture_output=True, text=True, timeout=120))
            assert run.returncode == 0, run.stderr
            assert json.loads(run.stdout)["memories"] == 2
            other = pathlib.Path(str(store) + "-copy")
            run = await anyio.to_thread.run_sync(lambda: subprocess.run(
                [BIN, "--store", str(other), "import", str(backup)],
                capture_output=True, text=True, timeout=120))
            assert run.returncode == 0 and json.loads(run.stdout)["added"] == 2, run.stderr
            # A command that needs the store to itself says so.
            run = await anyio.to_thread.run_sync(lambda: subprocess.run(
                [BIN, "--store", str(store), "import", str(backup)],
                capture_output=True, text=True, timeout=120))
            assert run.returncode != 0 and "locked" in run.stderr, run.stderr

    anyio.run(main)


def test_without_a_store_it_uses_the_users_data_directory(tmp_path, log):
    """The one-line client config: `memloop mcp` with no --store."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp import ClientSession
    import os

    data = tmp_path / "xdg-data"
    params = StdioServerParameters(command=BIN, args=["mcp"],
                                   env={**os.environ, "XDG_DATA_HOME": str(data)}, cwd=str(tmp_path))

    async def main():
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await ok(s, "remember", {"text": "kept in the default store"})
        assert (data / "memloop" / "default" / "store.redb").is_file()
        assert not (tmp_path / "memloop-store").exists()

    anyio.run(main)


def test_scopes_keep_users_apart_and_forget_erases_one(store, log):
    """Memories of one user never reach another's recall or context; `forget` with a user
    erases all of theirs, also when the CLI asks while an agent's server holds the store."""

    async def main():
        async with Client(store, log) as s:
            for user, drink in [("ana", "green tea"), ("bo", "black coffee")]:
                await ok(s, "remember", {"text": f"{user} drinks {drink} every morning",
                                         "kind": "fact", "user": user, "agent": "assistant"})
            for user in ("ana", "bo"):
                hits = (await ok(s, "recall", {"query": "what does she drink", "k": 10,
                                               "user": user}))["hits"]
                assert hits and all(h["item"]["user"] == user for h in hits), hits
                context = await ok(s, "context", {"query": "morning drink", "user": user})
                assert all(user in b["text"] for b in context["blocks"]), context
            # An id with a scope must be a memory of that scope: Bo cannot forget Ana's.
            await refused(s, "forget", {"id": 1, "user": "bo"}, "1")
            await refused(s, "get", {"id": 1, "user": "bo"}, "1")
            await refused(s, "feedback", {"id": 1, "level": 1, "user": "bo"}, "1")
            await refused(s, "explain_decay", {"id": 1, "user": "bo"}, "1")
            assert (await ok(s, "get", {"id": 1, "user": "ana"}))["text"].startswith("ana")
            await refused(s, "forget", {}, "scope")
            run = await anyio.to_thread.run_sync(lambda: subprocess.run(
                [BIN, "--store", str(store), "forget", "--user", "ana", "--json"],
                capture_output=True, text=True, timeout=120))
            assert run.returncode == 0, run.stderr
            assert json.loads(run.stdout)["memories"] == 1
            assert (await ok(s, "recall", {"query": "drink", "user": "ana"}))["hits"] == []
            erased = await ok(s, "forget", {"user": "bo"})
            assert erased["memories"] == 1 and erased["scope"]["user"] == "bo"

    anyio.run(main)


def test_a_conversation_is_remembered_with_speakers_and_dates(store, log):
    """Turns through `remember_conversation`; a question asking when finds the turn that says
    when (the time boost explained), and the context dates each turn."""

    async def main():
        async with Client(store, log) as s:
            report = await ok(s, "remember_conversation", {
                "session": "s1", "user": "ana",
                "turns": [
                    {"speaker": "Ana", "text": "I started a pottery class yesterday.",
                     "time": "2023-05-08T13:56:00Z"},
                    {"speaker": "Bo", "text": "Pottery sounds fun! Do you like the class?",
                     "time": "2023-05-08T13:57:00Z"},
                    {"speaker": "Ana", "text": "I love the pottery class, the teacher is kind.",
                     "time": "1683554280"},
                ]})
            assert report["first_turn"] == 0 and len(report["turns"]) == 3
            more = await ok(s, "remember_conversation", {
                "session": "s1", "user": "ana",
                "turns": [{"speaker": "Bo", "text": "See you soon.", "time": "1683554400"}]})
            assert more["first_turn"] == 3
            hits = (await ok(s, "recall", {"query": "When did Ana start the pottery class?",
                                           "kinds": ["turn"], "user": "ana", "k": 3,
                                           "explain": True}))["hits"]
            assert hits[0]["id"] == report["turns"][0], hits
            assert hits[0]["explain"]["time"]["cue"] == "asks when; it says when", hits[0]
            context = await ok(s, "context", {"query": "pottery class", "user": "ana"})
            lines = " ".join(b["text"] for b in context["blocks"])
            assert "[2023-05-08 13:56] Ana: I started a pottery class yesterday." in lines, lines
            await refused(s, "remember_conversation", {
                "session": "s1", "turns": [{"speaker": "Ana", "text": "hi", "time": "noon"}]},
                "turn 0", "time")
            await refused(s, "remember_conversation", {"session": "s1", "turns": []},
                          "at least one turn")

    anyio.run(main)
