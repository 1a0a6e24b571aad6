"""Drives `memloop mcp` with the official MCP Python SDK (`mcp` from PyPI), over stdio, with
the real default model. `MEMLOOP_BIN` names the binary (scripts/test-mcp.sh sets it)."""

import os
import pathlib

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = pathlib.Path(__file__).resolve().parents[3]
BIN = os.environ.get("MEMLOOP_BIN", str(ROOT / "target" / "debug" / "memloop"))


def server(store, *extra):
    """Parameters that start `memloop --store STORE mcp` (stderr kept out of the protocol)."""
    return StdioServerParameters(
        command=BIN,
        args=["--store", str(store), *extra, "mcp"],
        env={**os.environ},
    )


class Client:
    """One MCP client with its own `memloop mcp` process."""

    def __init__(self, store, log, *extra):
        self.params = server(store, *extra)
        self.log = log

    async def __aenter__(self):
        self._stdio = stdio_client(self.params, errlog=self.log)
        read, write = await self._stdio.__aenter__()
        self._session = ClientSession(read, write)
        self.session = await self._session.__aenter__()
        await self.session.initialize()
        return self.session

    async def __aexit__(self, *exc):
        try:
            await self._session.__aexit__(*exc)
        finally:
            await self._stdio.__aexit__(*exc)


@pytest.fixture
def store(tmp_path):
    return tmp_path / "store"


@pytest.fixture
def log(tmp_path):
    with open(tmp_path / "servers.log", "w+") as f:
        yield f


def holder_pid(store):
    """The pid of the process holding the store's lock (the serving one)."""
    text = (pathlib.Path(store) / "LOCK").read_text().strip()
    return int(text) if text else None
