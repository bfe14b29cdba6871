"""A connection that reached something other than the collector (on Kubernetes: opened before the
Service's routing was programmed, it reaches whatever answers for an unrouted address, with 404) is
not kept: the next request opens a new one. A conductor once asked a 404-answering connection for
three minutes while the collector it sought was ready."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from iotdb_bench.simulator.collector_client import CollectorClient


def test_a_not_yet_there_answer_drops_the_kept_connection():
    connections: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real answerer would

        def setup(self) -> None:
            super().setup()
            connections.append(id(self.connection))

        def do_GET(self) -> None:
            first_connection = len(connections) == 1
            body = b"" if first_connection else b'{"ok": true}'
            self.send_response(404 if first_connection else 200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = CollectorClient(f"http://127.0.0.1:{server.server_address[1]}")
        assert client.get("/status") == (404, b"")
        assert client.get("/status") == (200, b'{"ok": true}')
        assert len(connections) == 2
    finally:
        server.shutdown()
        server.server_close()
