"""Fixtures: stores on the model-free hashing embedder (plumbing) and on the real model.

The suite runs against the installed wheel, never the source tree: importing memloop from
anywhere but site-packages fails every test (set MEMLOOP_TEST_SOURCE=1 to allow it).
"""

import os
import sysconfig
from pathlib import Path

import pytest

import memloop

ROOT = Path(__file__).resolve().parents[2]

if not os.environ.get("MEMLOOP_TEST_SOURCE"):
    installed = Path(sysconfig.get_paths()["purelib"]).resolve()
    assert installed in Path(memloop.__file__).resolve().parents, (
        f"memloop was imported from {memloop.__file__}, not from the installed wheel in {installed}"
    )

START = 1_700_000_000  # Unix seconds of the manual clocks


@pytest.fixture
def store(tmp_path):
    """A store with a deterministic 64-dim embedder and a manual clock."""
    with memloop.Memory(
        tmp_path / "store", clock="manual", start=START, hashing_embedder=64
    ) as memory:
        yield memory


@pytest.fixture(scope="module")
def model_store(tmp_path_factory):
    """A store on the default model (all-MiniLM-L6-v2, fetched by scripts/fetch-model.sh)."""
    path = tmp_path_factory.mktemp("model") / "store"
    with memloop.Memory(path, clock="manual", start=START) as memory:
        memory.remember("The staging database is PostgreSQL 16 on port 5433.", kind="fact")
        memory.remember("Deployments go out every Tuesday after the standup.", kind="fact")
        memory.remember("Alice prefers answers with code examples in Rust.", kind="fact",
                        tags=["preference"])
        memory.remember("The office coffee machine is broken again.", kind="chunk")
        yield memory
