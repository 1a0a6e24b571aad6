"""The cross-door contract (`contract/cases.json`) through the Python door on the default
model: each request's fields passed as keyword arguments of the same names (a time as a
datetime, Python's way of giving one), the ids read from the hits or blocks, an error from
the exception's code. The Rust API, the CLI, MCP and C run the same table."""

import datetime
import json
import sys

import memloop

from conftest import ROOT

TABLE = json.loads((ROOT / "contract" / "cases.json").read_text())
CODES = {"invalid_input": memloop.InvalidArgumentError.code, "embed": memloop.EmbedError.code}


def as_python(request):
    """The fields as keyword arguments: an RFC 3339 time as a datetime, Unix seconds as an
    int (Python's ways of giving a time)."""
    kwargs = dict(request)
    for key in ("as_of", "valid_from", "valid_until"):
        when = kwargs.get(key)
        if not isinstance(when, str):
            continue
        if when.isdigit():
            kwargs[key] = int(when)
            continue
        try:
            # Python before 3.11 reads no "Z" in fromisoformat.
            kwargs[key] = datetime.datetime.fromisoformat(when.replace("Z", "+00:00"))
        except ValueError:
            pass  # not a time: the door must refuse it
    return kwargs


def answer(memory, case, fresh):
    def open_fresh(**options):
        # A fresh store with the case's options (the test embedder in place of a model).
        memloop.Memory(fresh, hashing_embedder=256, **options).close()
        return []

    call = {
        "recall": memory.recall,
        "context": memory.context,
        "remember": memory.remember,
        "open": open_fresh,
    }
    try:
        result = call[case["op"]](**as_python(case["request"]))
    except memloop.MemloopError as e:
        return e.code
    if case["op"] == "remember":
        return [result]
    if case["op"] == "open":
        return result
    hits = result if case["op"] == "recall" else result.blocks
    return [h.id if hasattr(h, "id") else h["id"] for h in hits]


def test_python_keeps_the_contract(tmp_path):
    with memloop.Memory(tmp_path / "store") as memory:
        for i, seed in enumerate(TABLE["memories"]):
            assert memory.remember(**as_python(seed)) == i + 1
        failures = []
        for case in TABLE["cases"]:
            got = answer(memory, case, tmp_path / "opened")
            if isinstance(got, int):
                fine = CODES.get(case.get("error")) == got
            elif "ids" in case:
                fine = got == case["ids"]
            elif "ids_any_order" in case:
                fine = sorted(got) == sorted(case["ids_any_order"])
            else:
                fine = len(got) == case["count"]
            if not fine:
                failures.append(f"{case['name']}: got {got!r}, want {case}")
        assert len(TABLE["cases"]) >= 20
        assert not failures, "\n".join(failures)


sys.path.insert(0, str(ROOT / "contract"))
import whole  # noqa: E402  (contract/whole.py: the whole-answer pass, shared with the MCP tests)


CODE_NAMES = {
    memloop.InvalidArgumentError.code: "invalid_input",
    memloop.NotFoundError.code: "not_found",
}


def test_python_gives_the_registrys_whole_answers(tmp_path):
    """Every call of the whole-answer pass through `Memory.call` on a store opened with the
    table's store options: each answer is the recorded one, field for field."""
    store = TABLE["store"]
    # Python gives the manual clock's start in Unix seconds.
    assert store["start_ms"] % 1000 == 0
    options = {"hashing_embedder": store["hashing_embedder"], "clock": store["clock"],
               "start": store["start_ms"] // 1000}
    with memloop.Memory(tmp_path / "whole", **options) as memory:
        for i, seed in enumerate(TABLE["memories"]):
            assert memory.call("remember", seed)["id"] == i + 1
        got = []
        for call in whole.whole_calls():
            try:
                got.append({"name": call["name"], "answer": memory.call(call["op"], call["request"])})
            except memloop.MemloopError as e:
                got.append({"name": call["name"], "error": CODE_NAMES.get(e.code, e.code)})
    problems = whole.problems(got)
    assert not problems, "\n".join(problems)


def test_call_refuses_what_the_registry_refuses(tmp_path):
    with memloop.Memory(tmp_path / "s", hashing_embedder=16) as memory:
        for op, request in [("teleport", {}), ("recall", {"query": "q", "colour": "red"}),
                            ("list", {"limit": 0}), ("recall", "not a mapping")]:
            try:
                memory.call(op, request)
            except memloop.InvalidArgumentError:
                continue
            raise AssertionError(f"{op} {request!r} was accepted")
