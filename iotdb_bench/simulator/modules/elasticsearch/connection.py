"""The elasticsearch module's connection: one plain HTTP client to one of the nodes (the official
clients refuse servers of the "wrong" product or major version), its requests and their errors. The
writes go through one keep-alive connection of the standard library's client instead
(simulator/wire/http_post.py): a fraction of httpx's client CPU per request."""

from __future__ import annotations

import base64
import json
import logging
import random
import ssl
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from iotdb_bench.simulator.modules.base import ModuleError, connected
from iotdb_bench.simulator.modules.elasticsearch.options import CONNECT_TIMEOUT_S, PRODUCT, ElasticsearchOptions
from iotdb_bench.simulator.modules.elasticsearch.wording import reason
from iotdb_bench.simulator.wire.http_post import HttpPoster, PostFailed

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("elasticsearch")


class SearchServerError(Exception):
    """The server answered a request with an error."""


class SearchConnection:
    def __init__(self, options: ElasticsearchOptions):
        self.options = options
        self._http: httpx.Client | None = None
        self._poster: HttpPoster | None = None
        self._host = random.choice(options.hosts)

    def connect(self) -> None:
        import httpx

        headers = {"accept": "application/json"}
        if self.options.api_key:
            headers["authorization"] = f"ApiKey {self.options.api_key}"
        auth = (self.options.username, self.options.password or "") if self.options.username is not None else None
        self._http = httpx.Client(
            base_url=self._host, auth=auth, headers=headers, verify=self._tls(),
            timeout=httpx.Timeout(self.options.request_timeout, connect=CONNECT_TIMEOUT_S),
        )
        # GET / is not used: the ES 8 integ-test build answers 405 there.
        try:
            self.request("GET", "/_cluster/health", accept=(200, 403, 408, 503))
        except SearchServerError as error:
            raise ModuleError(f"the server at {self.address()} does not answer like {PRODUCT}: {error}") from None
        log.info("connected to %s at %s", PRODUCT, self._host)
        if auth is not None:
            headers["authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        self._poster = HttpPoster(self._host, self.options.request_timeout, {**headers, "content-type": "application/x-ndjson"},
                                  self._poster_tls())

    def _tls(self) -> ssl.SSLContext | bool:
        if self.options.ca_certs:
            return ssl.create_default_context(cafile=self.options.ca_certs)
        return self.options.verify_certs

    def _poster_tls(self) -> ssl.SSLContext | None:
        """The writes' TLS context: None verifies with the system's CAs (as verify_certs)."""
        tls = self._tls()
        if tls is False:
            tls = ssl.create_default_context()
            tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
        return tls if isinstance(tls, ssl.SSLContext) else None

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None
        if self._poster is not None:
            self._poster.close()
            self._poster = None

    def address(self) -> str:
        import httpx

        url = httpx.URL(self._host)
        return f"{url.host}:{url.port or (443 if url.scheme == 'https' else 80)}"

    def request(self, method: str, path: str, *, body: Any = None, content: bytes | None = None,
                params: dict[str, str] | None = None, accept: tuple[int, ...] = (200, 201),
                timeout: float | None = None) -> tuple[int, dict[str, Any]]:
        """One HTTP call; returns (status, parsed JSON). Unreachable server or bad credentials: ModuleError."""
        import httpx

        headers = {}
        if body is not None:
            content, headers["content-type"] = json.dumps(body).encode(), "application/json"
        elif content is not None:
            headers["content-type"] = "application/x-ndjson"
        limit = httpx.USE_CLIENT_DEFAULT if timeout is None else httpx.Timeout(timeout, connect=CONNECT_TIMEOUT_S)
        try:
            response = connected(self._http, "elasticsearch").request(method, path, content=content, params=params, headers=headers, timeout=limit)
        except (httpx.ConnectError, httpx.ConnectTimeout) as error:
            raise ModuleError(f"cannot connect to {PRODUCT} at {self.address()}: {error or type(error).__name__}") from None
        if response.status_code == 401:
            raise ModuleError(f"{PRODUCT} at {self.address()} refused the credentials (401): check username/password or api_key")
        parsed = _json(response)
        if response.status_code not in accept:
            raise SearchServerError(f"{method} {path} answered {response.status_code}: {reason(parsed, response.text)}")
        return response.status_code, parsed

    def write(self, path: str, body: bytes, params: dict[str, str], accept: tuple[int, ...],
              while_waiting: Callable[[], None] | None = None) -> tuple[int, bytes]:
        """One write request (NDJSON, or one document); returns (status, the answer undecoded: the
        writer decodes it only when it has to). Errors as `request`'s; no answer: SearchServerError."""
        try:
            status, answer = connected(self._poster, "elasticsearch").send(path, body, params, while_waiting)
        except PostFailed as error:
            if error.connecting:
                raise ModuleError(f"cannot connect to {PRODUCT} at {self.address()}: the write {error}") from None
            raise SearchServerError(f"POST {path} {error}") from None
        if status == 401:
            raise ModuleError(f"{PRODUCT} at {self.address()} refused the credentials (401): check username/password or api_key")
        if status not in accept:
            text = answer.decode(errors="replace")
            raise SearchServerError(f"POST {path} answered {status}: {reason(parsed(text), text)}")
        return status, answer

    def refresh(self, indices: str) -> None:
        """Make every acknowledged event of `indices` searchable; a missing index is the user's to fix."""
        status, answer = self.request("POST", f"/{indices}/_refresh", accept=(200, 404))
        if status == 404:
            found = answer.get("error")
            missing = found.get("index", indices) if isinstance(found, dict) else indices
            raise ModuleError(f"index {missing} does not exist in {PRODUCT} at {self.address()} (insert events first)")


def _json(response: httpx.Response) -> dict[str, Any]:
    return parsed(response.content)


def parsed(text: str | bytes) -> dict[str, Any]:
    """An answer's JSON object ({} for anything else)."""
    try:
        answer = json.loads(text)
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}
