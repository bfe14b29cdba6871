"""What the local HTTP fakes of services that cannot run here (ArangoDB, Azure Data Explorer) share:
a quiet request handler that sends every method to `_handle`, reply helpers, and a server in a
thread of the test process."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import SplitResult, parse_qs, urlsplit


class FakeServiceHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: Any  # the fake's shared state, set by `serving`

    def log_message(self, *args) -> None:  # keep pytest's output clean
        pass

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def do_PUT(self):
        self._handle("PUT")

    def do_DELETE(self):
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        raise NotImplementedError

    def read_request(self) -> tuple[SplitResult, dict[str, str], bytes]:
        """The URL, its query parameters (last value of each) and the raw body."""
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return url, {key: values[-1] for key, values in parse_qs(url.query).items()}, raw

    def send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_json(self, status: int, payload: Any) -> None:
        self.send(status, json.dumps(payload).encode(), {"Content-Type": "application/json; charset=utf-8"})


@contextmanager
def serving(handler: type[FakeServiceHandler], state: Any) -> Iterator[str]:
    """Serve `handler` with `state` on a free loopback port; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (handler,), {"state": state}))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
