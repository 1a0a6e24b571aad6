"""One local origin serving memloop-wasm's files (the Chromium tests and benches/browser_bench.py).

`serve(routes)` serves each URL prefix from a folder (`.wasm` as application/wasm, nothing
outside the folders; `Service-Worker-Allowed: /` with a service worker's script) on 127.0.0.1
and returns (origin, server); `server.gone = True` makes it answer nothing from then on.
"""

import http.server
import pathlib
import threading

REPO = pathlib.Path(__file__).resolve().parents[2]


def routes(pkg):
    """The test origin's folders: the package, the test page, the example, the contract, the golden vectors."""
    return {
        "/pkg/": pathlib.Path(pkg),
        "/test/": REPO / "wasm" / "test",
        "/example/": REPO / "wasm" / "example",
        "/contract/": REPO / "contract",
        "/fixtures/": REPO / "embed" / "tests" / "fixtures" / "minilm",
    }


def serve(folders):
    """Serves `folders` ({"/prefix/": path}); returns (origin, server)."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        extensions_map = {
            **http.server.SimpleHTTPRequestHandler.extensions_map,
            ".wasm": "application/wasm",
            ".js": "text/javascript",
            ".json": "application/json",
        }

        def translate_path(self, path):
            path = path.split("?", 1)[0].split("#", 1)[0]
            for prefix, folder in folders.items():
                if path.startswith(prefix):
                    root = folder.resolve()
                    target = (root / (path[len(prefix):] or "index.html")).resolve()
                    if target == root or root in target.parents:
                        return str(target)
            return str(REPO / "nonexistent")

        def log_message(self, *args):
            pass

        def end_headers(self):
            # The example's service worker takes the whole origin as its scope (its page and
            # the package's folder, where memloop's Worker lives).
            if self.path.split("?", 1)[0].endswith("/sw.js"):
                self.send_header("Service-Worker-Allowed", "/")
            super().end_headers()

        def do_GET(self):
            # A server marked gone answers nothing, even on a connection the browser opened
            # ahead (Chromium preconnects): the test's "offline for real".
            if getattr(self.server, "gone", False):
                self.close_connection = True
                return
            super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", server
