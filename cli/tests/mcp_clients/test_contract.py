"""The cross-door contract (`contract/cases.json`) through the official MCP client: each
request sent as the tool's arguments as it stands in the table, the ids read from the tool's
structured content, an error from the code the tool error names. The Rust API, the CLI, C and
Python run the same table."""

import json
import re
import sys

import anyio
from mcp.shared.exceptions import MCPError

from conftest import ROOT, Client

TABLE = json.loads((ROOT / "contract" / "cases.json").read_text())
sys.path.insert(0, str(ROOT / "contract"))
import whole  # noqa: E402  (contract/whole.py: the whole-answer pass, shared with python/tests)


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def matches(case, got):
    if isinstance(got, str):
        return case.get("error") is not None and f"error code {case['error']}" in got
    if "ids" in case:
        return got == case["ids"]
    if "ids_any_order" in case:
        return sorted(got) == sorted(case["ids_any_order"])
    if "count" in case:
        return len(got) == case["count"]
    return False


def test_mcp_keeps_the_contract(store, log):
    async def main():
        async with Client(store, log) as s:
            for i, seed in enumerate(TABLE["memories"]):
                result = await s.call_tool("remember", seed)
                assert not result.is_error, text_of(result)
                assert result.structured_content["id"] == i + 1, seed
            failures = []
            for case in TABLE["cases"]:
                if case["op"] == "open":
                    # Open options are `memloop mcp`'s own flags, the CLI's global ones (which
                    # cli/tests/contract.rs runs), not a tool a client calls.
                    continue
                result = await s.call_tool(case["op"], case["request"])
                if result.is_error:
                    got = text_of(result)
                else:
                    content = result.structured_content
                    if case["op"] == "remember":
                        got = [content["id"]]
                    else:
                        hits = content["hits"] if case["op"] == "recall" else content["blocks"]
                        got = [h["id"] for h in hits]
                if not matches(case, got):
                    failures.append(f"{case['name']}: got {got!r}, want {case}")
            assert len(TABLE["cases"]) >= 20
            assert not failures, "\n".join(failures)

    anyio.run(main)


def store_flags():
    store = TABLE["store"]
    assert store["clock"] == "manual"
    return ["--hashing-embedder", str(store["hashing_embedder"]),
            "--manual-clock", str(store["start_ms"])]


def code_in(text):
    found = re.search(r"\(error code (\w+)\)", text)
    return found.group(1) if found else text


def test_mcp_gives_the_registrys_whole_answers(store, log):
    """Every call of the whole-answer pass as a tool call on a `memloop mcp` opened with the
    table's store options: the structured content is the recorded answer, field for field."""

    async def main():
        async with Client(store, log, *store_flags()) as s:
            for i, seed in enumerate(TABLE["memories"]):
                result = await s.call_tool("remember", seed)
                assert result.structured_content["id"] == i + 1, text_of(result)
            got = []
            for call in whole.whole_calls():
                try:
                    result = await s.call_tool(call["op"], call["request"])
                except MCPError as e:
                    got.append({"name": call["name"], "error": code_in(str(e))})
                    continue
                if result.is_error:
                    got.append({"name": call["name"], "error": code_in(text_of(result))})
                else:
                    got.append({"name": call["name"], "answer": result.structured_content})
            problems = whole.problems(got)
            assert not problems, "\n".join(problems)

    anyio.run(main)
