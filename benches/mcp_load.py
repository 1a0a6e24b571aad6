"""Load on `memloop mcp` through the official MCP Python SDK: C concurrent clients, each
looping recall (80 %) and remember (20 %) for D seconds, over Streamable HTTP (`--http`, one
server) or over stdio (one `memloop mcp` per client; the first serves the store, the others
forward to it). Prints one JSON line per transport: calls/s, p50 / p99 ms per kind.

With `--kill-at S` (HTTP), the server is killed with SIGKILL S seconds in; the clients count
the calls that failed, the server is started again, and every remember that was acknowledged
before the kill is looked up by id: `lost` must be 0.

    python benches/mcp_load.py --memloop target/release/memloop --clients 64 --seconds 60
    python benches/mcp_load.py --memloop target/release/memloop --transport http --kill-at 30
"""

import argparse
import contextlib
import json
import os
import pathlib
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

WORDS = ("harbor falcon quartz meadow lantern orchid canyon tundra reactor glacier violin "
         "compiler station ledger beacon").split()


def sentence(rng):
    return " ".join(rng.choice(WORDS) for _ in range(12)) + f" {rng.randrange(10**9)}."


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_http(binary, store, port, log):
    proc = subprocess.Popen([binary, "--store", store, "mcp", "--http", f"127.0.0.1:{port}",
                             "--rate-limit", "1000000"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(600):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the HTTP server did not start")


def token_of(store, binary):
    """A new store-wide token (the tokens file keeps only digests; `token rotate` prints the
    new token once and the running server takes it up)."""
    out = subprocess.run([binary, "--store", store, "token", "rotate"], check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


class Stats:
    def __init__(self):
        self.times = {"recall": [], "remember": []}
        self.failed = 0
        self.errors = []  # the first few failures, for the report
        self.acked = []  # (id, text) of acknowledged remembers


async def client_loop(open_session, seconds, seed, stats):
    rng = random.Random(seed)
    finished = False
    try:
        async with open_session() as s:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                kind = "remember" if rng.random() < 0.2 else "recall"
                args = ({"text": sentence(rng)} if kind == "remember"
                        else {"query": " ".join(rng.choice(WORDS) for _ in range(3)), "k": 5})
                t = time.perf_counter()
                try:
                    r = await s.call_tool(kind, args)
                except Exception:
                    stats.failed += 1
                    finished = True
                    return
                if r.is_error:
                    stats.failed += 1
                    stats.errors.append(" ".join(c.text for c in r.content)[:200])
                    continue
                stats.times[kind].append((time.perf_counter() - t) * 1e3)
                if kind == "remember":
                    stats.acked.append((r.structured_content["id"], args["text"]))
            finished = True
    except Exception as e:
        # A session that fails to close after its last call is not a failed call.
        if not finished:
            stats.failed += 1
            stats.errors.append(repr(e)[:200])


@contextlib.asynccontextmanager
async def http_session(url, token):
    """One MCP session over Streamable HTTP with `token`."""
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                yield s


@contextlib.asynccontextmanager
async def stdio_session(binary, store, log):
    """One MCP session with its own `memloop mcp` process."""
    params = StdioServerParameters(command=binary, args=["--store", store, "mcp"], env={**os.environ})
    async with stdio_client(params, errlog=log) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            yield s


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))] if xs else None


def report(transport, stats, seconds, extra=None):
    n = sum(len(v) for v in stats.times.values())
    out = {"transport": transport, "calls_per_s": round(n / seconds, 1), "failed": stats.failed,
           "errors": stats.errors[:3]}
    for kind, xs in stats.times.items():
        out[kind] = {"n": len(xs), "p50_ms": percentile(xs, 0.5), "p99_ms": percentile(xs, 0.99)}
    out.update(extra or {})
    print(json.dumps(out), flush=True)


def seed_store(open_session, n=300):
    async def main():
        rng = random.Random(1)
        async with open_session() as s:
            for _ in range(n):
                await s.call_tool("remember", {"text": sentence(rng)})
    anyio.run(main)


def run_http(a, log):
    store = tempfile.mkdtemp() + "/store"
    port = free_port()
    proc = start_http(a.memloop, store, port, log)
    url, token = f"http://127.0.0.1:{port}/mcp", token_of(store, a.memloop)
    opener = lambda: http_session(url, token)  # noqa: E731
    seed_store(opener)
    stats = Stats()

    async def main():
        async with anyio.create_task_group() as tg:
            for i in range(a.clients):
                tg.start_soon(client_loop, opener, a.seconds, i, stats)
            if a.kill_at:
                await anyio.sleep(a.kill_at)
                proc.send_signal(signal.SIGKILL)

    anyio.run(main)
    extra = {"clients": a.clients, "seconds": a.seconds}
    if a.kill_at:
        proc.wait()
        proc = start_http(a.memloop, store, port, log)

        async def check():
            lost = 0
            async with http_session(url, token) as s:
                for mid, text in stats.acked:
                    r = await s.call_tool("get", {"id": mid})
                    if r.is_error or r.structured_content.get("text") != text:
                        lost += 1
            return lost

        extra.update({"killed_at_s": a.kill_at, "acknowledged_writes": len(stats.acked),
                      "lost": anyio.run(check)})
    proc.terminate()
    proc.wait()
    report("http", stats, a.kill_at or a.seconds, extra)


def run_stdio(a, log):
    store = tempfile.mkdtemp() + "/store"
    opener = lambda: stdio_session(a.memloop, store, log)  # noqa: E731
    seed_store(opener)
    stats = Stats()

    async def main():
        async with anyio.create_task_group() as tg:
            for i in range(a.clients):
                tg.start_soon(client_loop, opener, a.seconds, i, stats)

    anyio.run(main)
    report("stdio", stats, a.seconds, {"clients": a.clients, "seconds": a.seconds})


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--memloop", required=True)
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--transport", choices=["http", "stdio", "both"], default="both")
    p.add_argument("--kill-at", type=float, default=None)
    a = p.parse_args()
    with open(os.devnull, "w") as log:
        if a.transport in ("http", "both"):
            run_http(a, log)
        if a.transport in ("stdio", "both") and not a.kill_at:
            run_stdio(a, log)


if __name__ == "__main__":
    sys.exit(main())
