"""One keep-alive HTTP connection per process; an error status fails loudly."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlencode


class Http:
    def __init__(self, host: str, port: int):
        self.connection = http.client.HTTPConnection(host, port, timeout=60)

    def request(self, method: str, path: str, body: bytes | None = None, query: dict | None = None,
                headers: dict | None = None) -> bytes:
        target = path + ("?" + urlencode(query) if query else "")
        self.connection.request(method, target, body, headers or {})
        response = self.connection.getresponse()
        answer = response.read()
        if response.status >= 300:
            raise SystemExit(f"{method} {path}: {response.status} {answer[:300]!r}")
        return answer

    def json(self, method: str, path: str, query: dict | None = None):
        return json.loads(self.request(method, path, query=query))
