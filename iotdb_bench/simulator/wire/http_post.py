"""The write path of HTTP modules: one keep-alive connection of the standard library's http.client.

A rich client (httpx, influxdb-client's urllib3 stack) builds URL, header and response objects for
every request: for a batch of 1000 events that was about 1 ms of client CPU per request, as much as
the server's own work at some databases (benchmarks/fast_paths.py). The body is sent as given, the
answer read whole; a request without an answer raises PostFailed with a one-line reason, and so does
a refused one through `post` (`send` hands back any status with its answer)."""

from __future__ import annotations

import http.client
import ssl
from collections.abc import Callable
from urllib.parse import urlencode, urlsplit

# What sending on a keep-alive connection the server has closed while it was idle looks like:
# the request was not taken, sending it again on a new connection is safe.
_STALE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, http.client.RemoteDisconnected)


class PostFailed(Exception):
    """`status`: the server's refusal (None: no answer); `connecting`: the connection could not be made."""

    def __init__(self, message: str, status: int | None = None, connecting: bool = False):
        super().__init__(message)
        self.status, self.connecting = status, connecting


class HttpPoster:
    def __init__(self, url: str, timeout: float, headers: dict[str, str] | None = None, tls: ssl.SSLContext | None = None):
        parts = urlsplit(url)
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or (443 if self._https else 80)
        self._base = parts.path.rstrip("/")
        self._timeout, self._headers, self._tls = timeout, dict(headers or {}), tls
        self._connection: http.client.HTTPConnection | None = None

    def post(self, path: str, body: bytes, query: dict[str, str] | None = None) -> bytes:
        """The answer of a request the server accepted (status < 300)."""
        status, answer = self.send(path, body, query)
        if status >= 300:
            raise PostFailed(f"failed with {status}: {answer[:300].decode(errors='replace')}", status)
        return answer

    def send(self, path: str, body: bytes, query: dict[str, str] | None = None,
             while_waiting: Callable[[], None] | None = None) -> tuple[int, bytes]:
        """(status, answer) of any answer; `while_waiting` runs once the request is on the wire,
        before the answer is read (the server works meanwhile)."""
        target = self._base + path + ("?" + urlencode(query) if query else "")
        fresh = self._connection is None
        try:
            return self._exchange(target, body, while_waiting)
        except _STALE:
            if fresh:
                raise PostFailed(f"the connection to {self._host}:{self._port} was closed") from None
            return self._exchange(target, body, while_waiting)  # the server had closed an idle connection: once more

    def _exchange(self, target: str, body: bytes, while_waiting: Callable[[], None] | None) -> tuple[int, bytes]:
        if self._connection is None:
            self._connection = self._connected()
        try:
            self._connection.request("POST", target, body, self._headers)
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
            raise PostFailed(f"failed: {error}") from None

    def _connected(self) -> http.client.HTTPConnection:
        if self._https:
            connection = http.client.HTTPSConnection(self._host, self._port, timeout=self._timeout, context=self._tls)
        else:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        try:
            connection.connect()
        except OSError as error:
            connection.close()
            raise PostFailed("timed out" if isinstance(error, TimeoutError) else f"failed: {error}", connecting=True) from None
        return connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
