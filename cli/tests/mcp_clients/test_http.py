"""`memloop mcp --http` driven by the official MCP Python SDK's Streamable HTTP client, with the
real model: every tool by URL, a session terminated, requests without a token, with a wrong
one and from a foreign page refused with nothing read or written, a token bound to a user
reaching no other user's memories through any tool (random tools and arguments), and an
oversized body cut off while another client goes on."""

import json
import os
import pathlib
import random
import socket
import subprocess
import time

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import BIN
from test_tools import TOOLS, ok, refused, text_of


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    """`memloop --store STORE mcp --http 127.0.0.1:PORT`, with its token."""

    def __init__(self, store, log, *extra):
        self.store = pathlib.Path(store)
        self.log = log
        log.flush()
        log_start = os.path.getsize(log.name)
        self.port = free_port()
        scheme = "https" if "--tls-cert" in extra else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}/mcp"
        self.proc = subprocess.Popen(
            [BIN, "--store", str(store), "mcp", "--http", f"127.0.0.1:{self.port}", *extra],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    break
            except OSError:
                assert self.proc.poll() is None, "the server exited"
                time.sleep(0.1)
        # The token is printed once, on stderr, when the tokens file is made; the file holds
        # only its digest.
        printed = []
        while time.time() < deadline and len(printed) != 2:
            with open(log.name, encoding="utf-8", errors="replace") as f:
                f.seek(log_start)
                printed = f.read().split("(shown once):\n", 1)
            if (self.store / "mcp-tokens").exists() and len(printed) != 2:
                break
        if len(printed) == 2 and "\n" in printed[1]:
            self.token = printed[1].split("\n", 1)[0].strip()
        else:  # the store had a tokens file already: a new store-wide token
            self.token = subprocess.run([BIN, "--store", str(self.store), "token", "rotate"],
                                        check=True, capture_output=True, text=True).stdout.strip()
        tokens = (self.store / "mcp-tokens").read_text()
        assert self.token not in tokens and "sha256:" in tokens
        assert (self.store / "mcp-tokens").stat().st_mode & 0o077 == 0

    def add_token(self, *args):
        out = subprocess.run(
            [BIN, "--store", str(self.store), "token", "add", *args],
            check=True,
            capture_output=True,
            text=True,
        )
        return out.stdout.strip()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture
def server(store, log):
    s = HttpServer(store, log)
    yield s
    s.stop()


class Session:
    """One MCP session over HTTP with `token`."""

    def __init__(self, url, token):
        self.url = url
        self.token = token

    async def __aenter__(self):
        self._http = create_mcp_http_client(headers={"Authorization": f"Bearer {self.token}"})
        self._transport = streamable_http_client(self.url, http_client=self._http)
        read, write = await self._transport.__aenter__()
        self._session = ClientSession(read, write)
        session = await self._session.__aenter__()
        await session.initialize()
        return session

    async def __aexit__(self, *exc):
        try:
            await self._session.__aexit__(*exc)
        finally:
            await self._transport.__aexit__(*exc)
            await self._http.aclose()


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def post(url, body, **headers):
    return httpx2.post(url, content=json.dumps(body), headers={**HEADERS, **headers}, timeout=30)


def test_every_tool_over_http_and_session_termination(server):
    async def main():
        async with Session(server.url, server.token) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert names == TOOLS
            a = await ok(s, "remember", {"text": "The staging database listens on port 5433.", "kind": "fact"})
            b = await ok(s, "remember", {"text": "Deploys go out on Tuesday.", "tags": ["ops"]})
            hits = await ok(s, "recall", {"query": "port 5433", "strategy": "lexical"})
            assert hits["hits"][0]["id"] == a["id"]
            ctx = await ok(s, "context", {"query": "deploys", "budget": 60})
            assert ctx["tokens"] <= 60
            await ok(s, "update", {"id": b["id"], "text": "Deploys go out on Wednesday."})
            await ok(s, "get", {"id": a["id"]})
            await ok(s, "feedback", {"id": a["id"], "level": 5})
            await ok(s, "record_task", {"request": "deploy", "steps": ["run"], "outcome": "success"})
            await ok(s, "observe", {"subject": "src/main.rs", "event": "created", "content": "fn main() {}"})
            await ok(s, "explain_decay", {"id": a["id"]})
            await ok(s, "remember_conversation", {"session": "s1", "turns": [
                {"speaker": "user", "text": "I moved to Porto.", "time": "2026-01-01T10:00:00Z"}]})
            stats = await ok(s, "stats", {})
            assert stats["memories"] >= 6
            await ok(s, "forget", {"id": a["id"]})
            await refused(s, "recall", {"query": "x", "k": 0}, "error code invalid_input")

    anyio.run(main)
    # A terminated session is gone: its id is refused afterwards.
    first = post(server.url, INIT, authorization=f"Bearer {server.token}")
    session_id = first.headers["mcp-session-id"]
    gone = httpx2.delete(server.url, headers={"authorization": f"Bearer {server.token}", "mcp-session-id": session_id})
    assert gone.status_code in (200, 202, 204)
    again = post(
        server.url,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        authorization=f"Bearer {server.token}",
        **{"mcp-session-id": session_id, "mcp-protocol-version": "2025-06-18"},
    )
    assert again.status_code == 404


def memories(server):
    async def count():
        async with Session(server.url, server.token) as s:
            return (await ok(s, "stats", {}))["memories"]

    return anyio.run(count)


def test_no_token_a_wrong_token_or_a_foreign_page_reads_and_writes_nothing(server):
    before = memories(server)
    remember = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "remember", "arguments": {"text": "planted by a stranger"}}}
    for headers in ({}, {"authorization": "Bearer " + "0" * 64}, {"authorization": server.token},
                    {"authorization": f"Basic {server.token}"}):
        for body in (INIT, remember):
            r = post(server.url, body, **headers)
            assert r.status_code == 401, (headers, r.status_code, r.text)
            assert r.headers["www-authenticate"].startswith("Bearer resource_metadata=")
            assert r.json()["error"]["code"] == -32001
    r = post(server.url, INIT, authorization=f"Bearer {server.token}", origin="http://evil.example")
    assert r.status_code == 403
    assert memories(server) == before
    meta = httpx2.get(f"http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource").json()
    assert meta["resource"] == server.url and meta["bearer_methods_supported"] == ["header"]


def test_a_token_bound_to_a_user_reaches_no_other_users_memories(server):
    alice = server.add_token("--user", "alice")
    rng = random.Random(20261125)
    secret = "bob's locker code is zulu7731qx"

    async def main():
        async with Session(server.url, server.token) as admin:
            bob = await ok(admin, "remember", {"text": secret, "user": "bob", "kind": "fact"})
            unscoped = await ok(admin, "remember", {"text": "the store-wide locker code is kilo1177vv"})
        async with Session(server.url, alice) as s:
            mine = await ok(s, "remember", {"text": "alice's locker code is 4242"})
            got = await ok(s, "get", {"id": mine["id"]})
            assert got["user"] == "alice"
            await refused(s, "stats", {}, "acts as user alice")
            await refused(s, "observe", {"subject": "f", "event": "created"}, "acts as user alice")
            await refused(s, "recall", {"query": "locker", "user": "bob"}, "acts as user alice")
            ids = [bob["id"], unscoped["id"], mine["id"], 999]
            tools = ["recall", "context", "get", "update", "feedback", "forget", "explain_decay", "remember"]
            for _ in range(200):
                tool = rng.choice(tools)
                args = {
                    "recall": lambda: {"query": rng.choice(["locker code", "bob", "zulu7731qx"]), "strategy": rng.choice(["single", "lexical", "rerank"]), "history": rng.random() < 0.5},
                    "context": lambda: {"query": rng.choice(["locker code", "bob"]), "budget": rng.choice([20, 200])},
                    "get": lambda: {"id": rng.choice(ids)},
                    "update": lambda: {"id": rng.choice(ids), "text": "changed by alice"},
                    "feedback": lambda: {"id": rng.choice(ids), "level": rng.randint(1, 5)},
                    "forget": lambda: {"id": rng.choice(ids[:2] + [999])},
                    "explain_decay": lambda: {"id": rng.choice(ids)},
                    "remember": lambda: {"text": f"note {rng.random()}", "user": rng.choice([None, "alice", "bob"])},
                }[tool]()
                args = {k: v for k, v in args.items() if v is not None}
                result = await s.call_tool(tool, args)
                seen = json.dumps(result.structured_content or {}) + text_of(result)
                assert "zulu7731qx" not in seen and "kilo1177vv" not in seen, (tool, args, seen)
        async with Session(server.url, server.token) as admin:
            still = await ok(admin, "get", {"id": bob["id"]})
            assert still["text"] == secret, "bob's memory was changed through alice's token"
            other = await ok(admin, "get", {"id": unscoped["id"]})
            assert other["text"] == "the store-wide locker code is kilo1177vv"

    anyio.run(main)


def test_an_oversized_body_is_cut_off_and_others_go_on(server):
    big = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
           "params": {"name": "remember", "arguments": {"text": "x" * (8 << 20)}}}
    r = post(server.url, big, authorization=f"Bearer {server.token}")
    assert r.status_code == 413
    assert memories(server) == 0


def test_a_token_past_its_rate_is_refused_429_and_others_are_not(store, log):
    server = HttpServer(store, log, "--rate-limit", "5")
    try:
        other = server.add_token("--user", "ana")
        codes = [post(server.url, INIT, authorization=f"Bearer {server.token}").status_code for _ in range(7)]
        assert codes[:5] == [200] * 5 and codes[5:] == [429, 429], codes
        assert post(server.url, INIT, authorization=f"Bearer {other}").status_code == 200
    finally:
        server.stop()


def test_a_non_loopback_address_needs_allow_remote(store):
    r = subprocess.run([BIN, "--store", str(store), "mcp", "--http", "0.0.0.0:7733"],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode != 0 and "--allow-remote" in r.stderr


def test_token_rotation_takes_effect_without_a_restart(server):
    old = server.token
    new = subprocess.run([BIN, "--store", str(server.store), "token", "rotate"],
                         check=True, capture_output=True, text=True).stdout.strip()
    time.sleep(0.05)
    assert post(server.url, INIT, authorization=f"Bearer {old}").status_code == 401
    assert post(server.url, INIT, authorization=f"Bearer {new}").status_code == 200


def test_a_slow_loris_is_cut_off_while_others_are_served(server):
    slow = socket.create_connection(("127.0.0.1", server.port))
    slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    started = time.time()
    slow.settimeout(1)
    closed_after = None
    while time.time() - started < 30:
        # Another client is served meanwhile.
        assert post(server.url, INIT, authorization=f"Bearer {server.token}").status_code == 200
        try:
            slow.sendall(b"X-Slow: a\r\n")
            if slow.recv(1024) in (b"",):
                closed_after = time.time() - started
                break
        except socket.timeout:
            continue
        except OSError:
            closed_after = time.time() - started
            break
    slow.close()
    assert closed_after is not None and closed_after < 20, closed_after


def test_memories_and_stats_as_resources_within_the_tokens_scope(server):
    alice = server.add_token("--user", "alice")

    async def main():
        async with Session(server.url, server.token) as s:
            bob = await ok(s, "remember", {"text": "bob's bike is blue", "user": "bob"})
            listed = await s.list_resources()
            assert [str(r.uri) for r in listed.resources] == ["memloop://stats"]
            templates = await s.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == ["memloop://memory/{id}"]
            read = await s.read_resource(f"memloop://memory/{bob['id']}")
            item = json.loads(read.contents[0].text)
            assert item["text"] == "bob's bike is blue" and read.contents[0].mime_type == "application/json"
            stats = json.loads((await s.read_resource("memloop://stats")).contents[0].text)
            assert stats["memories"] >= 1
            with pytest.raises(Exception, match="no resource"):
                await s.read_resource("memloop://nothing")
        async with Session(server.url, alice) as s:
            with pytest.raises(Exception, match="not found|no memory"):
                await s.read_resource(f"memloop://memory/{bob['id']}")
            with pytest.raises(Exception, match="acts as user alice"):
                await s.read_resource("memloop://stats")

    anyio.run(main)


def test_a_dropped_stream_is_resumed_with_last_event_id(server):
    """Streamable HTTP's resumption: a client that loses a call's SSE stream after its first
    event reconnects with `Last-Event-ID` and receives the call's result on the new stream,
    whether the result was sent before or after it reconnected; an unknown event id gets an
    empty stream, not another stream's events."""
    auth = {"authorization": f"Bearer {server.token}"}
    first = post(server.url, INIT, **auth)
    session = {**auth, "mcp-session-id": first.headers["mcp-session-id"],
               "mcp-protocol-version": "2025-06-18"}
    post(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **session)
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "remember", "arguments": {"text": "written while the stream dropped"}}}
    last = None
    with httpx2.stream("POST", server.url, content=json.dumps(call),
                       headers={**HEADERS, **session}, timeout=30) as s:
        for line in s.iter_lines():
            if line.startswith("id:"):
                last = line[3:].strip()
                break  # the connection drops here
    assert last is not None

    def resume(event_id):
        with httpx2.stream("GET", server.url, headers={**HEADERS, **session,
                                                       "last-event-id": event_id}, timeout=30) as g:
            assert g.status_code == 200
            for line in g.iter_lines():
                if line.startswith("data:") and '"id":2' in line:
                    return json.loads(line[5:])
        return None

    result = None
    deadline = time.time() + 30
    while result is None and time.time() < deadline:
        result = resume(last)  # a finite replay: poll until the result is there
        if result is None:
            time.sleep(0.2)
    assert result is not None, "the result was not replayed"
    assert result["result"]["structuredContent"]["action"] == "new"
    # An unknown event id is refused (404), not answered with another stream's events.
    with httpx2.stream("GET", server.url, headers={**HEADERS, **session,
                                                   "last-event-id": "0" * 32}, timeout=30) as g:
        assert g.status_code == 404


def test_https_with_a_certificate_and_key(store, log, tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    server = HttpServer(store, log, "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        import ssl

        trust = ssl.create_default_context(cafile=str(cert))

        async def main():
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"},
                                          verify=trust, timeout=30) as http:
                async with streamable_http_client(server.url, http_client=http) as streams:
                    async with ClientSession(streams[0], streams[1]) as s:
                        await s.initialize()
                        done = await ok(s, "remember", {"text": "sent over TLS"})
                        assert (await ok(s, "get", {"id": done["id"]}))["text"] == "sent over TLS"

        anyio.run(main)
        # Plain HTTP to the TLS port gets no MCP answer.
        with pytest.raises(httpx2.HTTPError):
            httpx2.post(server.url.replace("https", "http"), content=json.dumps(INIT),
                        headers={**HEADERS, "authorization": f"Bearer {server.token}"}, timeout=5)
        meta = httpx2.get(f"https://127.0.0.1:{server.port}/.well-known/oauth-protected-resource",
                          verify=trust).json()
        assert meta["resource"] == server.url
    finally:
        server.stop()
