"""The timed calls of HTTP modules (writes, and the queries of VictoriaMetrics and InfluxQL): one
keep-alive connection of the standard library's http.client.

A rich client (httpx, influxdb-client's urllib3 stack) builds URL, header and response objects for
every request: for a batch of 1000 events that was about 1 ms of client CPU per request, as much as
the server's own work at some databases (benchmarks/fast_paths.py), and a query through httpx cost
about 1.7 ms of client CPU per execution (docs/performance.md, "VictoriaMetrics' and InfluxDB's queries
through http.client").
The body is sent as given, the answer read whole; a request without an answer raises PostFailed with
a one-line reason, and so does a refused one through `post` and `get` (`send` hands back any status
with its answer)."""

from __future__ import annotations

import http.client
import ssl
from collections.abc import Callable
from urllib.parse import urlencode, urlsplit

from iotdb_bench.simulator.errors import one_line

# What sending on a keep-alive connection the server has closed while it was idle looks like:
# the request was not taken, sending it again on a new connection is safe.
_STALE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, http.client.RemoteDisconnected)


class PostFailed(Exception):
    """`status`: the server's refusal (None: no answer); `connecting`: the connection could not be made."""

    def __init__(self, message: str, status: int | None = None, connecting: bool = False):
        super().__init__(message)
        self.status, self.connecting = status, connecting


class HttpPoster:
    """`timeout`: seconds each wait for the socket may take (a call may give its own)."""

    def __init__(self, url: str, timeout: float, headers: dict[str, str] | None = None, tls: ssl.SSLContext | None = None):
        parts = urlsplit(url)
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or (443 if self._https else 80)
        self._base = parts.path.rstrip("/")
        self._timeout, self._headers, self._tls = timeout, dict(headers or {}), tls
        self._connection: http.client.HTTPConnection | None = None
        self._socket_timeout = timeout  # the open connection's

    def post(self, path: str, body: bytes, query: dict[str, str] | None = None, timeout: float | None = None) -> bytes:
        """The answer of a request the server accepted (status < 300)."""
        return _accepted(*self.send(path, body, query, timeout=timeout))

    def get(self, path: str, query: dict[str, str] | None = None, timeout: float | None = None) -> bytes:
        """The answer of a GET the server accepted (status < 300)."""
        return _accepted(*self.send(path, None, query, method="GET", timeout=timeout))

    def send(self, path: str, body: bytes | None, query: dict[str, str] | None = None,
             while_waiting: Callable[[], None] | None = None, method: str = "POST", timeout: float | None = None) -> tuple[int, bytes]:
        """(status, answer) of any answer; `while_waiting` runs once the request is on the wire,
        before the answer is read (the server works meanwhile)."""
        target = self._base + path + ("?" + urlencode(query) if query else "")
        fresh = self._connection is None
        try:
            return self._exchange(method, target, body, while_waiting, timeout or self._timeout)
        except _STALE:
            if fresh:
                raise PostFailed(f"failed: the connection to {self._host}:{self._port} was closed") from None
            return self._exchange(method, target, body, while_waiting, timeout or self._timeout)  # the server had closed an idle connection: once more

    def _exchange(self, method: str, target: str, body: bytes | None, while_waiting: Callable[[], None] | None,
                  timeout: float) -> tuple[int, bytes]:
        if self._connection is None:
            self._connection = self._connected()
        try:
            if timeout != self._socket_timeout and self._connection.sock is not None:
                self._connection.sock.settimeout(timeout)
                self._socket_timeout = timeout
            self._connection.request(method, target, body, self._headers)
            if while_waiting is not None:
                while_waiting()
            response = self._connection.getresponse()
            return response.status, response.read()
        except _STALE:
            self.close()
            raise
        except TimeoutError:
            self.close()
            raise PostFailed("timed out") from None
        except (OSError, http.client.HTTPException) as error:
            self.close()
            raise PostFailed(f"failed: {one_line(error)}") from None

    def _connected(self) -> http.client.HTTPConnection:
        if self._https:
            connection = http.client.HTTPSConnection(self._host, self._port, timeout=self._timeout, context=self._tls)
        else:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        try:
            connection.connect()
        except OSError as error:
            connection.close()
            raise PostFailed("timed out" if isinstance(error, TimeoutError) else f"failed: {one_line(error)}", connecting=True) from None
        self._socket_timeout = self._timeout
        return connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _accepted(status: int, answer: bytes) -> bytes:
    if status >= 300:
        raise PostFailed(f"failed with {status}: {one_line(answer.decode(errors='replace'), limit=300)}", status)
    return answer
