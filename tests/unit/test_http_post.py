"""The keep-alive client of the modules' timed calls (simulator/wire/http_post.py) against a real
HTTP server on loopback: a GET carries its query and the base URL's path, a refusal is one line, a
call's own timeout bounds only that call, and a connection the server closed while idle is opened
again without the call failing."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from iotdb_bench.simulator.wire.http_post import HttpPoster, PostFailed

seen: list[tuple[str, str, int]] = []  # (method, path, client port: the connection) of each request


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the databases answer

    def do_GET(self) -> None:
        seen.append(("GET", self.path, self.client_address[1]))
        if "slow" in self.path:
            time.sleep(0.5)
        if "refuse" in self.path:
            self._answer(422, b'{"status":"error",\n  "error":"cannot parse"}')
        elif "close" in self.path:  # answers, then closes the connection as an idle timeout would
            self._answer(200, b"bye")
            self.close_connection = True
        else:
            self._answer(200, self.path.encode())

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        seen.append(("POST", self.path, self.client_address[1]))
        self._answer(200, body)

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def url() -> Iterator[str]:
    seen.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/base/"
    server.shutdown()
    server.server_close()


def test_get_and_post_share_one_connection(url):
    poster = HttpPoster(url, timeout=5)
    assert poster.get("/api/v1/query", {"query": 'max(cpu{hostname="host_3"})', "time": "1.5"}) == \
        b"/base/api/v1/query?query=max%28cpu%7Bhostname%3D%22host_3%22%7D%29&time=1.5"
    assert poster.post("/query", b"q=SELECT+1") == b"q=SELECT+1"
    assert [method for method, _, _ in seen] == ["GET", "POST"] and len({connection for _, _, connection in seen}) == 1
    poster.close()


def test_a_refusal_is_one_line_with_its_status(url):
    with pytest.raises(PostFailed) as refused:
        HttpPoster(url, timeout=5).get("/refuse")
    assert refused.value.status == 422
    assert str(refused.value) == 'failed with 422: {"status":"error", "error":"cannot parse"}'


def test_a_calls_own_timeout_bounds_that_call_only(url):
    poster = HttpPoster(url, timeout=5)
    with pytest.raises(PostFailed, match=r"^timed out$"):
        poster.get("/slow", timeout=0.1)
    assert poster.get("/slow") == b"/base/slow"  # the poster's own timeout again, on a new connection


def test_a_connection_closed_while_idle_is_opened_again(url):
    poster = HttpPoster(url, timeout=5)
    assert poster.get("/close") == b"bye"
    time.sleep(0.1)  # the server has closed its end
    assert poster.get("/again") == b"/base/again"
    assert len({connection for _, _, connection in seen}) == 2
