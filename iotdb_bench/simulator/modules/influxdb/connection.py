"""The influxdb module's connection: the clients of the v2 API (a second one for the queries with
--query-timeout), the 1.x query API (InfluxQL), and the wording of their errors. Writes go to the v2
write endpoint, InfluxQL statements to /query, each through one keep-alive connection of the standard
library's client (simulator/wire/http_post.py): influxdb-client's urllib3 stack cost about 0.7 ms of
client CPU per request, more than building the batch's line protocol, and httpx about 1.7 ms per query
(docs/performance.md); httpx streams the chunked raw reads."""

from __future__ import annotations

import base64
import gzip
import json
import logging
import ssl
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.modules.base import ModuleError, connected
from iotdb_bench.simulator.modules.influxdb.options import InfluxdbOptions
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.wire.http_post import HttpPoster, PostFailed

if TYPE_CHECKING:
    import httpx
    from influxdb_client.client.flux_table import TableList
    from influxdb_client.client.influxdb_client import InfluxDBClient
    from influxdb_client.client.query_api import QueryApi
    from influxdb_client.rest import ApiException

log = logging.getLogger("influxdb")


class InfluxServerError(Exception):
    """The server answered a call with an error (status None: the call did not get an answer)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class InfluxConnection:
    def __init__(self, spec: RunSpec, options: InfluxdbOptions):
        self.spec, self.options = spec, options
        self._client: InfluxDBClient | None = None
        self._query_client: InfluxDBClient | None = None
        self._poster: HttpPoster | None = None
        self._write_query = {"org": options.org, "bucket": options.bucket, "precision": "ms"}
        self._query: QueryApi | None = None
        self._reads: QueryApi | None = None
        self._influxql_poster: HttpPoster | None = None  # the 1.x query API's client (InfluxQL statements)
        self._http: httpx.Client | None = None  # the 1.x query API's streamed reads (chunked answers)
        self.v1: bool | None = options.v1_compat
        self.version: str | None = None

    @property
    def client(self) -> InfluxDBClient:
        """The v2 API's client `connect()` opened."""
        return connected(self._client, "influxdb")

    def connect(self) -> None:
        import httpx
        from influxdb_client.client.influxdb_client import InfluxDBClient

        def client(seconds: float) -> InfluxDBClient:
            return InfluxDBClient(
                url=self.options.url, token=self.options.token, org=self.options.org, timeout=max(1, round(seconds * 1000)),
                verify_ssl=self.options.verify_ssl, enable_gzip=self.options.enable_gzip,
            )

        self._client = client(self.options.timeout)
        try:
            version = self.version = self.call("GET /ping", self.client.version)
        except InfluxServerError as error:
            raise ModuleError(f"the server at {self.address()} does not answer like InfluxDB: {error}") from None
        if self.v1 is None:
            self.v1 = version.lstrip("v").startswith("1.")
        log.info("connected to InfluxDB %s at %s (%s API)", version, self.options.url, "1.x" if self.v1 else "2.x")
        self._poster = HttpPoster(self.options.url, self.options.timeout, self._write_headers(), self._tls())
        # --query-timeout bounds the queries only: they get a client of their own with that timeout.
        if self.spec.task == "query" and self.spec.query_timeout:
            self._query_client = client(self.spec.query_timeout)
        self._reads = self.client.query_api()
        self._query = self._query_client.query_api() if self._query_client else self._reads
        user, _, password = self.options.token.partition(":")
        self._http = httpx.Client(base_url=self.options.url, auth=(user, password) if password else None, verify=self.options.verify_ssl)
        headers = {"accept": "application/json"}
        if password:  # InfluxDB 1.8's user and password, as httpx sends them
            headers["authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self._influxql_poster = HttpPoster(self.options.url, self.options.timeout, headers, self._tls())

    def close(self) -> None:
        for client in (self._client, self._query_client):
            if client is not None:
                client.close()
        for poster in (self._poster, self._influxql_poster):
            if poster is not None:
                poster.close()
        if self._http is not None:
            self._http.close()
        self._client = self._query_client = self._http = None
        self._poster, self._influxql_poster, self._query, self._reads = None, None, None, None

    def address(self) -> str:
        parts = urlsplit(self.options.url)
        return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"

    def call(self, what: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a client call; an unreachable server or bad token becomes a ModuleError, a refusal an InfluxServerError."""
        from influxdb_client.rest import ApiException
        from urllib3.exceptions import ConnectTimeoutError, HTTPError, MaxRetryError, ReadTimeoutError

        try:
            return function(*args, **kwargs)
        except ApiException as error:
            if error.status == 401:
                raise ModuleError(f"InfluxDB at {self.address()} refused the token (401)") from None
            raise InfluxServerError(f"{what} failed with {error.status}: {_api_message(error)}", error.status) from None
        except (HTTPError, OSError) as error:
            cause = error.reason if isinstance(error, MaxRetryError) else error
            if isinstance(cause, ReadTimeoutError):
                raise InfluxServerError(f"{what} timed out") from None
            reason = one_line(cause).split("new connection: ")[-1]
            if isinstance(cause, ConnectTimeoutError):  # refused, unresolvable or silent host
                raise ModuleError(f"cannot connect to InfluxDB at {self.address()}: {reason}") from None
            raise InfluxServerError(f"{what} failed: {reason}") from None  # connection reset and the like

    def _write_headers(self) -> dict[str, str]:
        """influxdb-client's headers of a write."""
        headers = {"content-type": "text/plain; charset=utf-8", "accept": "application/json"}
        if self.options.token:
            headers["authorization"] = f"Token {self.options.token}"
        if self.options.enable_gzip:
            headers |= {"content-encoding": "gzip", "accept-encoding": "identity"}
        return headers

    def _tls(self) -> ssl.SSLContext | None:
        if self.options.verify_ssl:
            return None  # the system's CAs
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        return context

    def write_lines(self, lines: bytes, while_waiting: Callable[[], None] | None = None) -> None:
        """One synchronous write (it returns once the server acknowledged); errors worded as `call`'s."""
        body = gzip.compress(lines) if self.options.enable_gzip else lines
        try:
            status, answer = connected(self._poster, "influxdb").send("/api/v2/write", body, self._write_query, while_waiting)
        except PostFailed as error:
            if error.connecting:
                raise ModuleError(f"cannot connect to InfluxDB at {self.address()}: the write {error}") from None
            raise InfluxServerError(f"write {error}") from None
        if status == 401:
            raise ModuleError(f"InfluxDB at {self.address()} refused the token (401)")
        if status >= 300:
            raise InfluxServerError(f"write failed with {status}: {_answer_message(answer)}", status)

    def flux(self, query: str, bounded: bool = False) -> TableList:
        """A Flux query's tables; `bounded`: one of the run's queries, which --query-timeout limits
        (reads of markers and records are not)."""
        if not bounded:
            tables: TableList = self.call("Flux read", connected(self._reads, "influxdb").query, query, org=self.options.org)
            return tables
        started = time.perf_counter()
        tables = self.call("Flux query", connected(self._query, "influxdb").query, query, org=self.options.org)
        # urllib3 limits each wait for the socket, not the call: an answer that came in late is late all the same.
        if self._query_client is not None and time.perf_counter() - started > self.spec.query_timeout:
            raise InfluxServerError("Flux query timed out")
        return tables

    def flux_csv(self, query: str) -> Any:
        """A Flux query's plain CSV (no header, no annotations), streamed."""
        from influxdb_client.domain.dialect import Dialect

        return self.call("Flux scan", connected(self._query, "influxdb").query_csv, query, org=self.options.org, dialect=Dialect(header=False, annotations=[]))

    @property
    def database(self) -> str:
        """The 1.x database of the bucket option ("database/retention-policy" on InfluxDB 1.8)."""
        return self.options.bucket.split("/")[0]

    def influxql(self, statement: str, database: str | None = None) -> None:
        """One statement through the 1.x query API (InfluxDB 1.8 has no buckets API)."""
        self._influxql(statement, database, self.options.timeout)

    def influxql_series(self, statement: str, bounded: bool = False) -> list[dict[str, Any]]:
        """The series of a query's answer through the 1.x query API, times in epoch milliseconds;
        `bounded`: one of the run's queries, which --query-timeout limits."""
        return self.influxql_statements([statement], bounded)[0]

    def influxql_statements(self, statements: Sequence[str], bounded: bool = False) -> list[list[dict[str, Any]]]:
        """The series of each statement's answer, the statements sent in one request (as influxql_series)."""
        return _series_of(self._series_answer(statements, bounded), len(statements))

    def influxql_series_received(self, statement: str) -> Callable[[], list[dict[str, Any]]]:
        """One of the run's queries (as influxql_series, bounded): its answer received whole, decoded from
        JSON into its series when called, after the timed call (simulator/checks/answers.py)."""
        answer = self._series_answer([statement], True)
        return lambda: _series_of(answer, 1)[0]

    def _series_answer(self, statements: Sequence[str], bounded: bool) -> bytes:
        limit = self.spec.query_timeout if bounded and self.spec.task == "query" else 0
        started = time.perf_counter()
        answer = self._influxql_answer("; ".join(statements), self.database, limit or self.options.timeout, epoch="ms")
        if limit and time.perf_counter() - started > limit:  # the client limits each wait for the socket, not the call
            raise InfluxServerError("InfluxQL query timed out")
        return answer

    def influxql_rows(self, statement: str) -> int:
        """The rows of a raw query's answer, counted as the server streams them (chunked JSON, one
        object per line): what no InfluxQL aggregate counts, points that share no field."""
        import httpx

        data = {"q": statement, "db": self.database, "epoch": "ms", "chunked": "true", "chunk_size": "100000"}
        rows = 0
        try:
            with connected(self._http, "influxdb").stream("POST", "/query", data=data, timeout=self.options.timeout) as response:
                for line in response.iter_lines():
                    for result in json.loads(line).get("results", []) if line.strip() else ():
                        if "error" in result:
                            raise InfluxServerError(f"{statement} failed: {result['error']}")
                        rows += sum(len(one.get("values", [])) for one in result.get("series", []))
        except httpx.TransportError as error:
            raise InfluxServerError(f"{statement} failed: {one_line(error)}") from None
        if response.status_code != 200:
            raise InfluxServerError(f"{statement} failed with {response.status_code}")
        return rows

    def _influxql(self, statement: str, database: str | None, timeout: float, epoch: str | None = None) -> list[dict[str, Any]]:
        return _results(self._influxql_answer(statement, database, timeout, epoch))

    def _influxql_answer(self, statement: str, database: str | None, timeout: float, epoch: str | None = None) -> bytes:
        """The answer's JSON, refused when its status or a statement's result is an error (decoded only
        then: an answer without the text "error" holds no error)."""
        data = {"q": statement, **({"db": database} if database else {}), **({"epoch": epoch} if epoch else {})}
        try:
            # In the URL, as TSBS's runner sends it: the request goes out in one write (http.client writes
            # a body apart from the headers, and the server then reads twice).
            status, answer = connected(self._influxql_poster, "influxdb").send("/query", None, data, timeout=timeout)
        except PostFailed as error:
            if error.connecting:
                raise ModuleError(f"cannot connect to InfluxDB at {self.address()}: InfluxQL {error}") from None
            raise InfluxServerError(f"{statement} {error}") from None
        if status == 401:
            raise ModuleError(f"InfluxDB at {self.address()} refused the credentials (401): token must be 'user:password'")
        if status != 200 or b'"error"' in answer:
            errors = [r["error"] for r in _results(answer) if "error" in r]
            if status != 200 or errors:
                raise InfluxServerError(f"{statement} failed with {status}: {'; '.join(errors) or answer.decode(errors='replace').strip()}")
        return answer


def _series_of(answer: bytes, statements: int) -> list[list[dict[str, Any]]]:
    """The series of each statement's result in an answer of so many statements."""
    found: dict[int, list[dict[str, Any]]] = {result.get("statement_id", 0): result.get("series", []) for result in _results(answer)}
    return [found.get(index, []) for index in range(statements)]


def _results(answer: bytes) -> list[dict[str, Any]]:
    try:
        results: list[dict[str, Any]] = json.loads(answer).get("results", [])
        return results
    except (ValueError, AttributeError):
        return []


def _answer_message(answer: bytes) -> str:
    """The server's message in a refusal's JSON answer (InfluxDB 2's "message", 1.8's "error"), else its text."""
    try:
        found = json.loads(answer)
        message = found.get("message") or found.get("error")
    except (ValueError, AttributeError):
        message = None
    return message or one_line(answer.decode(errors="replace") or "no details", limit=300)


def _api_message(error: ApiException) -> str:
    try:
        return str(json.loads(error.body).get("message") or error.reason)
    except (TypeError, ValueError, AttributeError):
        return one_line(error.body or error.reason or "", limit=300)
