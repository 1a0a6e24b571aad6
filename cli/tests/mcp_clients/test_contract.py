"""The cross-door contract (`contract/cases.json`) through the official MCP client: each
request sent as the tool's arguments as it stands in the table, the ids read from the tool's
structured content, an error from the code the tool error names. The Rust API, the CLI, C and
Python run the same table."""

import json

import anyio

from conftest import ROOT, Client

TABLE = json.loads((ROOT / "contract" / "cases.json").read_text())


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
