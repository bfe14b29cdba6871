"""The write path of HTTP modules: one keep-alive connection of the standard library's http.client.

A rich client (httpx) builds URL, header and response objects for every request: for a batch of
1000 events that was about 1 ms of client CPU per request, as much as the server's own work at some
databases (benchmarks/fast_paths.py). The body is sent as given, the answer read whole; a refused
request or one without an answer raises PostFailed with a one-line reason."""

from __future__ import annotations

import http.client
from urllib.parse import urlencode, urlsplit

# What sending on a keep-alive connection the server has closed while it was idle looks like:
# the request was not taken, sending it again on a new connection is safe.
_STALE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, http.client.RemoteDisconnected)


class PostFailed(Exception):
    pass


class HttpPoster:
    def __init__(self, url: str, timeout: float, headers: dict[str, str] | None = None):
        parts = urlsplit(url)
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or (443 if self._https else 80)
        self._base = parts.path.rstrip("/")
        self._timeout, self._headers = timeout, dict(headers or {})
        self._connection: http.client.HTTPConnection | None = None

    def post(self, path: str, body: bytes, query: dict[str, str] | None = None) -> bytes:
        target = self._base + path + ("?" + urlencode(query) if query else "")
        fresh = self._connection is None
        try:
            return self._exchange(target, body)
        except _STALE:
            if fresh:
                raise PostFailed(f"the connection to {self._host}:{self._port} was closed") from None
            return self._exchange(target, body)  # the server had closed an idle connection: once more

    def _exchange(self, target: str, body: bytes) -> bytes:
        if self._connection is None:
            kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._connection = kind(self._host, self._port, timeout=self._timeout)
        try:
            self._connection.request("POST", target, body, self._headers)
            response = self._connection.getresponse()
            answer = response.read()
        except _STALE:
            self.close()
            raise
        except TimeoutError:
            self.close()
            raise PostFailed("timed out") from None
        except (OSError, http.client.HTTPException) as error:
            self.close()
            raise PostFailed(f"failed: {error}") from None
        if response.status >= 300:
            raise PostFailed(f"failed with {response.status}: {answer[:300].decode(errors='replace')}")
        return answer

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
