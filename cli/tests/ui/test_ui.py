"""`memloop ui` driven in headless Chromium (Debian's `chromium`, through Playwright).

A store is seeded with the real default model through the CLI, `memloop ui --port 0` serves
it, and the browser loads every page (no console error), searches, pins, forgets and rates
through the forms, each checked in the store afterwards through the CLI (which forwards to the
inspector's process, as it would to `memloop mcp`). Screenshots go to target/ui-screenshots/.
"""
import http.cookiejar
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

BIN = os.environ["MEMLOOP_BIN"]
ROOT = Path(__file__).resolve().parents[3]
SHOTS = ROOT / "target" / "ui-screenshots"
CHROMIUM = os.environ.get("MEMLOOP_CHROMIUM", "/usr/bin/chromium")

MEMORIES = [
    ("Alice prefers green tea in the morning, never coffee", "alice", "fact"),
    ("The staging database password rotates every Monday at 9am", "alice", "fact"),
    ("Bob is allergic to peanuts and carries an epinephrine pen", "bob", "fact"),
    ("Carol keeps the lighthouse logbook in the blue cabinet", "carol", "chunk"),
    ("The quarterly report is due on the last Friday of March", "bob", "chunk"),
]


def cli(store, *args, check=True):
    r = subprocess.run([BIN, "--store", store, *args], capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError(f"memloop {' '.join(args)}: {r.returncode}\n{r.stderr}")
    return r


@pytest.fixture(scope="module")
def served():
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        cli(store, "init")
        ids = []
        for text, user, kind in MEMORIES:
            out = cli(store, "remember", text, "--user", user, "--kind", kind, "--json").stdout
            ids.append(json.loads(out)["id"])
        # A second version of the first, so it has history.
        out = cli(store, "update", str(ids[0]), "--text",
                  "Alice prefers green tea in the morning and oolong in the afternoon", "--json").stdout
        ids[0] = json.loads(out)["id"]
        ui = subprocess.Popen([BIN, "--store", store, "ui", "--port", "0"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        url = ui.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url, url
        try:
            yield {"store": store, "url": url, "base": url.split("/?")[0], "ids": ids}
        finally:
            ui.terminate()
            ui.wait(timeout=30)


def status_of(url, data=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_without_the_token_nothing_is_served(served):
    base = served["base"]
    for path in ["/", "/search?q=tea", f"/memory/{served['ids'][0]}", "/forgetting", "/assets/ui.js",
                 "/?token=wrong"]:
        code, body = status_of(base + path)
        assert code == 401, (path, code)
        assert b"memloop \xc2\xb7" not in body and b"tea" not in body
    code, _ = status_of(base + f"/memory/{served['ids'][1]}/forget", data=b"")
    assert code == 401
    assert cli(served["store"], "get", str(served["ids"][1]), check=False).returncode == 0


def test_a_non_loopback_bind_is_refused(served):
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([BIN, "--store", os.path.join(tmp, "s"), "ui", "--bind", "0.0.0.0", "--port", "0"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and "allow-remote" in r.stderr, r.stderr


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def open_page(browser, served):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: d.accept())
    page.goto(served["url"])
    return page, errors


def test_every_page_loads_without_a_console_error(served, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page, errors = open_page(browser, served)
    assert page.locator("#counts").inner_text().startswith("5")
    assert "alice" in page.locator("#by-user").inner_text()
    page.screenshot(path=str(SHOTS / "overview.png"), full_page=True)
    first = served["ids"][0]
    for path in ["/search?q=what+does+alice+drink+in+the+afternoon&strategy=rerank", f"/memory/{first}",
                 "/forgetting"]:
        response = page.goto(served["base"] + path)
        assert response.status == 200, path
        name = path.strip("/").split("?")[0].replace("/", "-")
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    page.goto(served["base"] + "/memory/999999")
    assert "Not done" in page.content()
    # The 404 above is the only console error a page may give (the browser reports the status).
    assert [e for e in errors if "404" not in e] == [], errors


def test_search_shows_the_top_hit_and_its_score_parts(served, browser):
    page, errors = open_page(browser, served)
    page.goto(served["base"] + "/search")
    page.fill("#search input[name=q]", "who is allergic to peanuts")
    page.select_option("#search select[name=strategy]", "rerank")
    page.click("#search button")
    top = page.locator(".hit").first
    assert "allergic to peanuts" in top.locator(".text").inner_text()
    parts = {c.get_attribute("data-part"): float(c.inner_text()) for c in top.locator("td[data-part]").all()}
    assert parts["cosine"] > 0.3 and parts["BM25"] > 0, parts
    assert top.locator(".chart svg").count() == 1
    assert "Key Reference" in page.locator("#context").inner_text()
    assert errors == []


def test_the_search_form_offers_the_engines_strategies_and_each_one_searches(served, browser):
    # The engine's list, from its own refusal of a name that is none (the CLI forwards to the
    # inspector's process).
    refused = cli(served["store"], "recall", "tea", "--strategy", "magic", check=False)
    assert refused.returncode != 0, refused.stdout
    listed = re.search(r'unknown strategy "magic" \(([^)]*)\)', refused.stderr)
    assert listed, refused.stderr
    engine = listed.group(1).split(", ")
    page, errors = open_page(browser, served)
    page.goto(served["base"] + "/search")
    offered = page.eval_on_selector_all("#search select[name=strategy] option", "os => os.map((o) => o.value)")
    assert offered == [""] + engine, (offered, refused.stderr)
    for strategy in offered:
        page.goto(served["base"] + "/search")
        page.fill("#search input[name=q]", "who is allergic to peanuts")
        page.select_option("#search select[name=strategy]", strategy)
        page.click("#search button")
        assert "Not done" not in page.content(), strategy
        assert "allergic to peanuts" in page.locator(".hit .text").all_inner_texts()[0], strategy
    assert errors == []


def test_the_retention_chart_is_explain_decays_curve(served, browser):
    page, errors = open_page(browser, served)
    mid = served["ids"][3]
    page.goto(served["base"] + f"/memory/{mid}")
    shown = json.loads(page.locator("#retention-data").inner_text())
    decay = json.loads(cli(served["store"], "decay", str(mid), "--json").stdout)
    assert len(shown["curve"]) == len(decay["curve"]) == 64
    # The same numbers (JSON's decimal round trip may move the last bit).
    for a, b in zip(shown["curve"], decay["curve"]):
        assert a["at"] == b["at"] and a["value"] == pytest.approx(b["value"], rel=1e-12)
    assert (shown["working_threshold"], shown["forget_threshold"]) == (decay["working_threshold"], decay["forget_threshold"])
    assert page.locator("#retention svg polyline").count() >= 1
    assert errors == []


def test_pin_rate_forget_and_edit_reach_the_store(served, browser):
    page, errors = open_page(browser, served)
    ids = served["ids"]
    page.goto(served["base"] + f"/memory/{ids[2]}")
    page.click("#pin button")
    assert "Pinned." in page.locator("#notice").inner_text()
    assert json.loads(cli(served["store"], "get", str(ids[2]), "--json").stdout)["pinned"] is True
    page.select_option("#rate select", "4")
    page.click("#rate button")
    assert "Rated 4" in page.locator("#notice").inner_text()
    assert "1 rating(s), mean 4.0, last 4" in page.locator("#facts").inner_text()
    page.goto(served["base"] + f"/memory/{ids[4]}")
    page.fill("#edit textarea", "The quarterly report is due on the first Friday of April")
    page.click("#edit button")
    assert "kept as its history" in page.locator("#notice").inner_text()
    assert f"memory {ids[4]}" in page.locator("#history").inner_text()
    page.goto(served["base"] + f"/memory/{ids[1]}")
    page.click("#forget button")
    assert "forgotten" in page.locator("#notice").inner_text()
    assert cli(served["store"], "get", str(ids[1]), check=False).returncode == 4
    assert errors == []


def test_it_runs_beside_an_agents_memloop_mcp():
    """With `memloop mcp` holding the store, the inspector forwards to it: its pages show the
    agent's store and its actions land there."""
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        cli(store, "init")
        mid = json.loads(cli(store, "remember", "Dana waters the ferns on Thursdays", "--json").stdout)["id"]
        mcp = subprocess.Popen([BIN, "--store", store, "mcp"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        ui = None
        try:
            # The agent's server holds the store once its socket answers.
            for _ in range(100):
                if os.path.exists(os.path.join(store, "memloop.sock")):
                    break
                time.sleep(0.1)
            ui = subprocess.Popen([BIN, "--store", store, "ui", "--port", "0"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
            url = ui.stdout.readline().strip()
            base = url.split("/?")[0]
            # A client that keeps the cookie the first page sets, as a browser does.
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
            with opener.open(url, timeout=10) as r:
                assert r.status == 200
                assert b">1</b>memories" in r.read()
            with opener.open(base + f"/memory/{mid}/pin", data=b"pinned=true", timeout=10) as r:
                assert r.status == 200 and b"Pinned." in r.read()
            # The pin went to the agent's process: ask it through MCP's own door.
            assert json.loads(cli(store, "get", str(mid), "--json").stdout)["pinned"] is True
        finally:
            if ui:
                ui.terminate()
                err = ui.communicate(timeout=30)[1]
                assert "shared by another memloop process" in err, err
            mcp.stdin.close()
            mcp.wait(timeout=30)


def test_round4_the_token_opens_nothing_for_another_user_or_another_host(served):
    """Round 4's H1 and L8: browsers send the inspector's cookie to every port of 127.0.0.1, so
    a page another local user serves there receives it. The inspector serves only its own
    user's processes on loopback (another uid is answered 403 with the token in hand), its
    cookie is named after its port, and a request naming another `Host` (DNS rebinding) is
    refused."""
    url, base = served["url"], served["base"]
    token = url.split("token=", 1)[1]
    port = base.rsplit(":", 1)[1]
    with urllib.request.urlopen(url, timeout=10) as r:
        assert r.status == 200
        cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"memloop_ui_{port}={token};") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    req = urllib.request.Request(url, headers={"Host": "evil.example"})
    code, _ = status_of_request(req)
    assert code == 421
    req = urllib.request.Request(base + "/erase", data=b"user=alice",
                                 headers={"Host": f"rebind.example:{port}", "Origin": f"http://rebind.example:{port}"})
    assert status_of_request(req)[0] == 421
    if os.geteuid() == 0 and shutil.which("setpriv") and shutil.which("curl"):
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "curl", "-s",
                            "-o", "/dev/null", "-w", "%{http_code}", f"{base}/search?q=tea&token={token}"],
                           capture_output=True, text=True, timeout=60)
        assert r.stdout == "403", (r.stdout, r.stderr)


def status_of_request(req):
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_round4_erasing_a_user_shows_its_receipt_which_verifies(served, browser, tmp_path):
    """Round 4's L13: the inspector's erase answers with the erasure's signed receipt."""
    page, errors = open_page(browser, served)
    page.fill("#erase input[name=user]", "carol")
    page.click("#erase button")
    assert "Erased 1 memories of user carol." in page.locator("#notice").inner_text()
    line = page.locator("#receipt").inner_text()
    receipt = tmp_path / "carol.json"
    receipt.write_text(line + "\n")
    r = subprocess.run([BIN, "receipt", "verify", str(receipt)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert errors == []
