"""The shared store's socket attacked (round-3 findings F4 and F12): a socket served by
another user, or for another store, gets nothing and is named; a loose store directory is
refused; the server caps its connections and the size of a request, and says so."""

import fcntl
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import anyio
import pytest

from conftest import BIN, Client

# A fake memloop server, run as another user: holds the store's lock, listens on its
# socket, and logs every byte anyone sends it.
IMPOSTOR = r"""
import fcntl, os, socket, sys
d = sys.argv[1]
open(os.path.join(d, "store.redb"), "a").close()  # looks like a store
lock = open(os.path.join(d, "LOCK"), "a+")
fcntl.flock(lock, fcntl.LOCK_EX)
path = os.path.join(d, "memloop.sock")
if os.path.exists(path):
    os.unlink(path)
s = socket.socket(socket.AF_UNIX)
s.bind(path)
os.chmod(path, 0o777)
s.listen(8)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(5)
    try:
        data = c.recv(1 << 20)
    except OSError:
        data = b""
    print("GOT", data.decode(errors="replace").replace("\n", " "), flush=True)
    c.close()
"""


def run(*args, timeout=120):
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=timeout)


def as_nobody():
    os.setgid(65534)
    os.setuid(65534)


@pytest.mark.skipif(os.geteuid() != 0, reason="acting as a second user needs root")
def test_a_socket_served_by_another_user_gets_nothing():
    base = tempfile.mkdtemp()
    os.chmod(base, 0o755)
    shared = os.path.join(base, "agentmem")
    os.mkdir(shared)
    os.chmod(shared, 0o777)
    secret = "My AWS secret key is wJalrXUtnFEMI"
    # A directory others can write is refused before anything is read or sent.
    r = run("--store", shared, "remember", secret)
    assert r.returncode != 0 and "other users can write it" in r.stderr, r.stderr
    # The system interpreter: the test's own may live where the other user cannot read.
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    fake = subprocess.Popen([python, "-c", IMPOSTOR, shared], preexec_fn=as_nobody,
                            stdout=subprocess.PIPE, text=True, cwd="/")
    try:
        assert fake.stdout.readline().strip() == "ready"
        # Even with the directory explicitly allowed, the impostor is named and gets nothing.
        started = time.monotonic()
        for args in (["remember", secret], ["recall", "how do I deploy?"]):
            r = run("--store", shared, "--allow-unsafe-directory", *args, timeout=60)
            assert r.returncode != 0, r.stdout
            assert "not by you" in r.stderr, r.stderr
        assert time.monotonic() - started < 30, "refused at once, not after a takeover wait"
    finally:
        fake.kill()
        got = fake.stdout.read()
    assert "wJalrX" not in got and "remember" not in got, got


def test_a_socket_of_another_store_is_refused(store, log, tmp_path):
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    (other / "store.redb").touch()  # looks like a store

    async def main():
        async with Client(store, log) as s:
            await s.call_tool("remember", {"text": "a memory of the first store"})
            # The other store looks held, and its socket leads to the first store's server.
            with open(other / "LOCK", "a+") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                os.symlink(store / "memloop.sock", other / "memloop.sock")
                r = await anyio.to_thread.run_sync(
                    lambda: run("--store", other, "recall", "first store", timeout=60))
            assert r.returncode != 0, r.stdout
            assert "not this store" in r.stderr, r.stderr

    anyio.run(main)


def hello(sock):
    sock.sendall(json.dumps({"v": 1, "tool": "hello", "arguments": None}).encode() + b"\n")
    return json.loads(sock.makefile().readline())


def test_connections_and_request_sizes_are_bounded(store, log):
    async def main():
        async with Client(store, log) as s:
            await s.call_tool("remember", {"text": "the harbor opens at six"})
            path = str(store / "memloop.sock")
            held = []
            try:
                for _ in range(64):
                    c = socket.socket(socket.AF_UNIX)
                    c.connect(path)
                    assert "ok" in hello(c)
                    held.append(c)
                extra = socket.socket(socket.AF_UNIX)
                extra.connect(path)
                extra.settimeout(10)
                busy = json.loads(extra.makefile().readline())
                assert "connections already" in busy["error"], busy
                extra.close()
                # The CLI, forwarding, says the server is busy (round 4, L9), not that it
                # does not share the store.
                r = subprocess.run([BIN, "--store", str(store), "stats"], capture_output=True,
                                   text=True, timeout=120)
                assert r.returncode != 0 and "refused this connection" in r.stderr, r.stderr
                assert "does not share" not in r.stderr
            finally:
                for c in held:
                    c.close()
            # A request line past the limit is answered with an error, then the peer is cut.
            big = socket.socket(socket.AF_UNIX)
            big.connect(path)
            big.settimeout(30)
            assert "ok" in hello(big)
            refused = b""
            try:
                chunk = b"x" * (1 << 20)
                for _ in range(8):
                    big.sendall(chunk)
            except OSError:
                pass
            with big.makefile("rb") as f:
                refused = f.readline()
            assert b"within" in refused and b"nothing was run" in refused, refused[:200]
            big.close()
            # Honest peers are served again once the crowd is gone.
            r = await anyio.to_thread.run_sync(
                lambda: run("--store", store, "recall", "when does the harbor open", "--json"))
            assert r.returncode == 0, r.stderr
            assert json.loads(r.stdout)["hits"][0]["text"] == "the harbor opens at six"

    anyio.run(main)


def test_unparseable_requests_get_an_error_reply(store):
    """JSON-RPC over stdio: a line that is not JSON gets -32700 with its id when it carries
    one (null otherwise), and the server keeps serving."""
    proc = subprocess.Popen([BIN, "--store", str(store), "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(line):
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    try:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}
        assert "result" in send(json.dumps(init).encode())
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        cases = [
            (b'{"jsonrpc":"2.0","id":41,"method":"tools/list"', 41),
            (b'{"jsonrpc":"2.0","id":"s-42","method":"ping","params":{"x":"\\ud800"}}', "s-42"),
            (b'{"jsonrpc":"2.0","id":43,"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}", 43),
            (b'{"jsonrpc":"2.0","id":44,"method":"ping","x":"\xff"}', 44),
            (b"plain garbage", None),
        ]
        for line, id_ in cases:
            reply = send(line)
            assert reply["id"] == id_, reply
            assert reply["error"]["code"] == -32700, reply
        pong = send(b'{"jsonrpc":"2.0","id":45,"method":"ping"}')
        assert pong == {"jsonrpc": "2.0", "id": 45, "result": {}}, pong
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
