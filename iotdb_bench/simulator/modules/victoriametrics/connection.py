"""The victoriametrics module's connection: an httpx client for every call but the timed ones (writes
and MetricsQL queries), which go through the standard library's client (simulator/wire/http_post.py);
the streamed export; each refusal a VictoriaMetricsError naming the call."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.modules.base import ModuleError, connected
from iotdb_bench.simulator.modules.victoriametrics.options import DAY_S, ENDPOINTS, FUTURE_LIMIT_S, VictoriametricsOptions
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.wire.http_post import HttpPoster, PostFailed
from iotdb_bench.simulator.workload.events import TIME_ORIGIN_MS

if TYPE_CHECKING:
    import httpx


class VictoriaMetricsError(Exception):
    """The server refused a call, or the call got no answer."""


class VmConnection:
    def __init__(self, spec: RunSpec, options: VictoriametricsOptions):
        self.spec, self.options = spec, options
        self._client: httpx.Client | None = None
        self._poster: HttpPoster | None = None

    def connect(self) -> None:
        import httpx

        self._client = httpx.Client(base_url=self.options.url, timeout=self.options.timeout)
        try:
            self._client.get("/health").raise_for_status()
        except (httpx.ConnectError, httpx.ConnectTimeout) as error:
            self.close()
            raise ModuleError(f"cannot connect to VictoriaMetrics at {self.address()}: {one_line(error)}") from None
        except httpx.HTTPError as error:
            self.close()
            raise ModuleError(f"the server at {self.address()} does not answer like VictoriaMetrics: {one_line(error)}") from None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._poster is not None:
            self._poster.close()
            self._poster = None

    def address(self) -> str:
        parts = urlsplit(self.options.url)
        return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"

    def request(self, what: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One call; a refusal or a call without answer raises VictoriaMetricsError naming `what`."""
        import httpx

        try:
            response = connected(self._client, "victoriametrics").request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise VictoriaMetricsError(f"{what} timed out") from None
        except httpx.TransportError as error:
            raise VictoriaMetricsError(f"{what} failed: {one_line(error)}") from None
        if response.status_code >= 300:
            raise VictoriaMetricsError(f"{what} failed with {response.status_code}: {one_line(response.text, limit=300)}")
        return response

    def flush(self) -> None:
        """Make the samples buffered in memory searchable."""
        self.request("flushing", "GET", "/internal/force_flush")

    def write(self, body: bytes, ingestion: Literal["import", "influx"]) -> None:
        try:
            self._timed().post(ENDPOINTS[ingestion], body, {"precision": "ms"} if ingestion == "influx" else None)
        except PostFailed as error:
            raise VictoriaMetricsError(f"write {error}") from None

    def _timed(self) -> HttpPoster:
        """The client of the timed calls (writes, queries): the standard library's, a tenth of httpx's
        client CPU per request; the other calls keep httpx."""
        if self._poster is None:
            self._poster = HttpPoster(str(self.options.url), self.options.timeout)
        return self._poster

    def export(self, selector: str, rows_per_line: int, since_ms: int = TIME_ORIGIN_MS) -> Iterator[dict[str, Any]]:
        """/api/v1/export of the series `selector` selects, streamed: one JSON line (one series' samples,
        at most `rows_per_line`, in time order) at a time; from a day before `since_ms` (the data lies
        in the past: the events' origin, or TSBS's start)."""
        import httpx

        params = {"match[]": selector, "max_rows_per_line": str(rows_per_line), **self._since(since_ms)}
        try:
            with connected(self._client, "victoriametrics").stream("GET", "/api/v1/export", params=params) as response:
                if response.status_code >= 300:
                    raise VictoriaMetricsError(f"export failed with {response.status_code}: {one_line(response.read().decode(), limit=300)}")
                for line in response.iter_lines():
                    if line:
                        yield json.loads(line)
        except httpx.TransportError as error:
            raise VictoriaMetricsError(f"export failed: {one_line(error)}") from None

    def label_values(self, label: str, selector: str, since_ms: int) -> list[str]:
        """The values of `label` in the series `selector` selects that have samples since a day before `since_ms`."""
        answer = self.request(f"listing the values of {label}", "GET", f"/api/v1/label/{label}/values",
                              params={"match[]": selector, **self._since(since_ms)})
        values: list[str] = answer.json()["data"]
        return values

    @staticmethod
    def _since(since_ms: int) -> dict[str, str]:
        """start and end parameters from a day before `since_ms` to the newest time a sample can have."""
        return {"start": str(since_ms // 1000 - DAY_S), "end": f"{time.time() + FUTURE_LIMIT_S:.0f}"}

    def instant(self, expression: str, bounded: bool = False, since_ms: int = TIME_ORIGIN_MS) -> list[dict[str, Any]]:
        """An instant MetricsQL query evaluated after the newest possible event, `{window}` in the
        expression replaced by a window reaching back a day before `since_ms` (the data lies in the past:
        the events' origin, or TSBS's start). `bounded`: one of the run's queries, which --query-timeout
        limits (counts are not)."""
        at = time.time() + FUTURE_LIMIT_S
        window_s = int(at - since_ms / 1000) + DAY_S
        params = {"query": expression.replace("{window}", f"{window_s}s"), "time": f"{at:.3f}", "nocache": "1"}
        return self.answer(params, "/api/v1/query", bounded)

    def answer(self, params: dict[str, str], path: str, bounded: bool) -> list[dict[str, Any]]:
        """The result of a MetricsQL query; `bounded`: one of the run's queries, which --query-timeout limits."""
        limit = self.spec.query_timeout if bounded and self.spec.task == "query" else 0
        if limit:  # the server stops the query; the client gives up waiting at the same time
            params["timeout"] = f"{max(1, round(limit * 1000))}ms"
        started = time.perf_counter()
        try:
            body = self._timed().get(path, params, limit or None)
        except PostFailed as error:
            raise VictoriaMetricsError(f"MetricsQL query {error}") from None
        # The client limits each wait for the socket, not the call: an answer that came in late is late all the same.
        if limit and time.perf_counter() - started > limit:
            raise VictoriaMetricsError("MetricsQL query timed out")
        answer = json.loads(body)
        if answer.get("status") != "success":
            raise VictoriaMetricsError(f"MetricsQL query failed: {one_line(answer.get('error') or answer, limit=300)}")
        result: list[dict[str, Any]] = answer["data"]["result"]
        return result
