"""The questdb module's batch requests when it encodes them itself (batch_encoding=numpy): ILP over
HTTP, `POST /write?precision=n` on one keep-alive connection of the standard library's client
(simulator/wire/http_post.py), as the official client sends them. QuestDB answers 204 when the rows
are in the tables' write-ahead logs; any other answer (400 with a JSON error naming the line, 500...)
fails the call with the status and the server's error. One request per call, never retried."""

from __future__ import annotations

from iotdb_bench.simulator.wire.http_post import HttpPoster, PostFailed

WRITE_PATH = "/write?precision=n"


class IlpWriteFailed(Exception):
    """QuestDB refused an ILP request, or it got no answer."""


class IlpOverHttp:
    def __init__(self, host: str, port: int, timeout_s: float):
        self._poster = HttpPoster(f"http://{host}:{port}", timeout_s, {"Content-Type": "text/plain; charset=utf-8"})

    def write(self, body: bytes) -> None:
        try:
            self._poster.post(WRITE_PATH, body)
        except PostFailed as error:
            raise IlpWriteFailed(f"ILP write {error}") from None

    def close(self) -> None:
        self._poster.close()
