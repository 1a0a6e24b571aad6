"""The whole-answer pass of the cross-door contract, for the doors tested from Python (MCP
through the official SDK, the Python package): the table's calls in order and the rule an
answer is held to, as contract/check.rs holds the Rust, CLI and C doors to it."""

import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
TABLE = json.loads((HERE / "cases.json").read_text())
ANSWERS = json.loads((HERE / "answers.json").read_text())


def whole_calls():
    """The whole-answer pass's calls, in order: the cases but `open`, then the calls."""
    return [c for c in TABLE["cases"] + TABLE["calls"] if c["op"] != "open"]


def first_difference(a, b, path=""):
    """The path of the first field where `a` and `b` differ, or None (numbers compare as
    numbers)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if (key in a) != (key in b):
                return f"{path}/{key}"
            found = first_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}/{i}")
            if found:
                return found
        return None
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
        return None if float(a) == float(b) else path
    return None if a == b else path


def problems(got):
    """Each recorded answer `got` (`{"name", "answer"}` or `{"name", "error"}`, in the order of
    [`whole_calls`]) does not match, with where it differs."""
    if len(got) != len(ANSWERS):
        return [f"{len(got)} answers, want {len(ANSWERS)}"]
    return [f"{w['name']}: differs at {path}" for g, w in zip(got, ANSWERS)
            if (path := first_difference(g, w)) is not None]
