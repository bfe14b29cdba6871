"""Elasticsearch (7, 8, 9) and OpenSearch (1, 2, 3) through their common REST API.

The official Python clients refuse servers of the "wrong" product or major version (elasticsearch-py
9 rejects Elasticsearch 8, elasticsearch-py >= 7.14 rejects OpenSearch), so this module speaks the
REST API that all of them share through one plain HTTP client (httpx, already a dependency of the
simulator). Only APIs present in every one of them are used: index create/delete, _bulk, _doc,
_refresh, _count, _search aggregations (min, max, stats, composite, top_hits) and _stats.

Insert modes:
- single (no --batch): one index request per event (`refresh=false`): it returns once the event is
  in the translog of every active copy (fsync'ed per request with `translog_durability=request`, the
  default), so it is durable, but it becomes visible to searches only at the next refresh;
- batch: one _bulk request per batch (NDJSON, built outside the timed call); events that the server
  rejected with 429 (queue full) are retried, a bounded number of times.
Primary keys: `db` lets the server generate ids, `client` uses the event's client key as `_id` (with
the `create` operation, so a duplicate key is an error, as with a SQL primary key).

Reading back: device-downsample is a `date_histogram` (fixed_interval 1m) under a term and range
filter; scans use the scroll API (a search context paged `size` hits at a time, sorted by
timestamp). The record of expected answers is a document in an index of its own,
`iotbench_expected`, whose mapping indexes nothing.
"""

from __future__ import annotations

import json
import logging
import random
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

import numpy as np
from pydantic import Field, field_validator

from iotdb_bench.simulator.answers import Answer
from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.events import EventBatch
from iotdb_bench.simulator.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import RECORD_NAME, ModuleError, ModuleOptions, OneClassModule, Query, http_url
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import text_rows

log = logging.getLogger("elasticsearch")

PRODUCT = "Elasticsearch/OpenSearch"
TOO_MANY_REQUESTS = 429
CONNECT_TIMEOUT_S = 10.0
MAX_PAGE = 10_000  # index.max_result_window: the most hits one search (or scroll page) returns
SCROLL_KEEP_ALIVE = "2m"


class ElasticsearchOptions(ModuleOptions):
    hosts: list[str] = Field(default_factory=lambda: ["http://localhost:9200"], min_length=1,
                             description="URLs of the nodes (a list, or one comma-separated string); each process uses one")
    username: str | None = None
    password: str | None = None
    api_key: str | None = Field(None, description="encoded API key, sent as 'Authorization: ApiKey ...'")
    verify_certs: bool = True
    ca_certs: str | None = Field(None, description="PEM file of the CA that signed the server certificate")
    shards: int = Field(1, ge=1, le=1024)
    replicas: int = Field(1, ge=0, le=16)
    refresh_interval: str = Field("1s", pattern=r"^(-1|\d+(ms|s|m|h))$", description="index.refresh_interval; -1 = never")
    translog_durability: Literal["request", "async"] = Field("request", description="'request' fsyncs the translog before acknowledging")
    request_timeout: float = Field(120.0, gt=0, description="seconds one request may take (inserts, setup, count)")
    query_page_size: int = Field(10_000, ge=1, le=65_536, description="buckets per page of the per-device queries")
    request_cache: bool = Field(False, description="let repeated query runs be answered from the shard request cache")
    max_retries: int = Field(10, ge=0, description="retries of events rejected with 429 (bulk queue full)")
    key_order: Literal["device", "time"] = Field("device", description="--primary-key client: _id led by the device id, or by the timestamp")

    @field_validator("hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [host.strip() for host in value.split(",") if host.strip()]
        return value

    @field_validator("hosts")
    @classmethod
    def _http_urls(cls, hosts: list[str]) -> list[str]:
        return [http_url(host) for host in hosts]


class Rejected(Exception):
    """The server refused events because its write queue was full (429): they can be sent again."""


class SearchServerError(Exception):
    """The server answered a request with an error."""


@dataclass(frozen=True)
class BulkRequest:
    """A prepared batch: the NDJSON body, and one row per event (action and document lines) for retries."""

    rows: np.ndarray
    full_body: bytes

    def __len__(self) -> int:
        return len(self.rows)

    def body(self, positions: list[int] | None = None) -> bytes:
        return self.full_body if positions is None else text_rows.compact(self.rows[positions])


# Mapping types of each kind of column of the shapes (simulator/shapes.py); texts are keywords (not analysed).
FIELD_TYPES = {"timestamp": {"type": "date", "format": "epoch_millis"}, "device": {"type": "keyword"}, "sensor": {"type": "short"},
               "sequence": {"type": "long"}, "float": {"type": "double"}, "int16": {"type": "short"}, "int32": {"type": "integer"},
               "text": {"type": "keyword"}}


class Module(OneClassModule):
    Options = ElasticsearchOptions
    options: ElasticsearchOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, primary_keys=frozenset({PrimaryKey.db, PrimaryKey.client}), measurements=True, sensors=True, markers=True,
        drivers=("httpx",),
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._http = None
        self._host = random.choice(self.options.hosts)
        # Events the server rejected with 429 (its write queue full) are sent again, the others are not.
        self.retry = Retry(self.options.max_retries, lambda error: isinstance(error, Rejected), first_delay_s=0.01, max_delay_s=1.0)
        self._deadline: float | None = None  # of the query running, with --query-timeout
        self._with_key = spec.primary_key is PrimaryKey.client
        self._indices = ",".join(spec.table_names)

    def validate(self) -> None:
        super().validate()
        if (self.options.username is None) != (self.options.password is None):
            raise ModuleError("options 'username' and 'password' of the elasticsearch module go together")
        if self.options.key_order != "device" and self.spec.primary_key is not PrimaryKey.client:
            raise ModuleError("module 'elasticsearch': key_order orders the client's keys: it needs --primary-key client")
        if self.spec.task == "scan" and self.spec.scan_page_size > MAX_PAGE:
            raise ModuleError(f"{PRODUCT} returns at most {MAX_PAGE:,} hits per scroll page (index.max_result_window): "
                              f"use --page-size {MAX_PAGE} or less")

    def notes(self) -> list[str]:
        if self.layout.shape in ("slim", "light"):
            index = "lack of an index" if self.layout.shape == "slim" else "one secondary index"
            return [f"Elasticsearch indexes every field: --schema {self.layout.shape}'s {index} does not apply"]
        return []

    def batch_kind(self) -> str:
        return "_bulk request"

    # -- lifecycle -------------------------------------------------------------------------
    def server_address(self) -> tuple[str, int] | None:
        return self.url_address(self.options.hosts[0], 9200)

    def connect(self) -> None:
        import httpx

        headers = {"accept": "application/json"}
        if self.options.api_key:
            headers["authorization"] = f"ApiKey {self.options.api_key}"
        auth = (self.options.username, self.options.password) if self.options.username is not None else None
        self._http = httpx.Client(
            base_url=self._host, auth=auth, headers=headers, verify=self._tls(),
            timeout=httpx.Timeout(self.options.request_timeout, connect=CONNECT_TIMEOUT_S),
        )
        # GET / is not used: the ES 8 integ-test build answers 405 there.
        try:
            self._request("GET", "/_cluster/health", accept=(200, 403, 408, 503))
        except SearchServerError as error:
            raise ModuleError(f"the server at {self._address()} does not answer like {PRODUCT}: {error}") from None
        log.info("connected to %s at %s", PRODUCT, self._host)

    def _tls(self) -> ssl.SSLContext | bool:
        if self.options.ca_certs:
            return ssl.create_default_context(cafile=self.options.ca_certs)
        return self.options.verify_certs

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def _address(self) -> str:
        import httpx

        url = httpx.URL(self._host)
        return f"{url.host}:{url.port or (443 if url.scheme == 'https' else 80)}"

    def _request(self, method: str, path: str, *, body: Any = None, content: bytes | None = None,
                 params: dict[str, str] | None = None, accept: tuple[int, ...] = (200, 201),
                 timeout: float | None = None) -> tuple[int, dict]:
        """One HTTP call; returns (status, parsed JSON). Unreachable server or bad credentials: ModuleError."""
        import httpx

        headers = {}
        if body is not None:
            content, headers["content-type"] = json.dumps(body).encode(), "application/json"
        elif content is not None:
            headers["content-type"] = "application/x-ndjson"
        extra = {} if timeout is None else {"timeout": httpx.Timeout(timeout, connect=CONNECT_TIMEOUT_S)}
        try:
            response = self._http.request(method, path, content=content, params=params, headers=headers, **extra)
        except (httpx.ConnectError, httpx.ConnectTimeout) as error:
            raise ModuleError(f"cannot connect to {PRODUCT} at {self._address()}: {error or type(error).__name__}") from None
        if response.status_code == 401:
            raise ModuleError(f"{PRODUCT} at {self._address()} refused the credentials (401): check username/password or api_key")
        parsed = _json(response)
        if response.status_code not in accept:
            raise SearchServerError(f"{method} {path} answered {response.status_code}: {_reason(parsed, response.text)}")
        return response.status_code, parsed

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        for index in self.spec.table_names:
            if self.spec.clean:
                self._request("DELETE", f"/{index}", accept=(200, 404))
            status, answer = self._request("PUT", f"/{index}", body=self.index_definition(), accept=(200, 400))
            if status == 400 and _error_type(answer) != "resource_already_exists_exception":
                raise SearchServerError(f"creating index {index} failed: {_reason(answer, '')}")

    def index_definition(self) -> dict:
        properties = {column.name: FIELD_TYPES[column.kind] for column in self.layout.columns}
        if self._with_key:
            properties["id"] = {"type": "keyword"}
        settings = {
            "number_of_shards": self.options.shards,
            "number_of_replicas": self.options.replicas,
            "refresh_interval": self.options.refresh_interval,
            "translog": {"durability": self.options.translog_durability},
        }
        # Strict: a document with a field the mapping lacks (e.g. an id into an index made without
        # client keys) is rejected instead of silently changing the schema.
        return {"settings": {"index": settings}, "mappings": {"dynamic": "strict", "properties": properties}}

    def count(self) -> int:
        """Events in the run's indices, after a refresh so that every acknowledged event is counted."""
        self._refresh()
        return int(self._request("GET", f"/{self._indices}/_count")[1]["count"])

    def _refresh(self) -> None:
        status, answer = self._request("POST", f"/{self._indices}/_refresh", accept=(200, 404))
        if status == 404:
            error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
            missing = error.get("index", self._indices)
            raise ModuleError(f"index {missing} does not exist in {PRODUCT} at {self._address()} (insert events first)")

    def server_version(self) -> str | None:
        """OpenSearch names its distribution at GET /; Elasticsearch 8's test build refuses GET /, so
        the nodes' own versions are asked then (only Elasticsearch reports a build flavor)."""
        status, answer = self._request("GET", "/", accept=(200, 405))
        if status == 200 and isinstance(answer.get("version"), dict):
            version = answer["version"]
            return f"{str(version.get('distribution') or 'elasticsearch').capitalize()} {version.get('number')}"
        nodes = self._request("GET", "/_nodes/_local", params={"filter_path": "nodes.*.version,nodes.*.build_flavor"})[1]["nodes"]
        product = "Elasticsearch" if any("build_flavor" in node for node in nodes.values()) else PRODUCT
        return f"{product} {', '.join(sorted({node['version'] for node in nodes.values()}))}"

    def server_counters(self) -> dict[str, int] | None:
        """Documents indexed into the primaries of the run's indices (indexing.index_total)."""
        answer = self._request("GET", f"/{self._indices}/_stats/indexing",
                               params={"filter_path": "_all.primaries.indexing.index_total"})[1]
        return {"rows_inserted": int(answer["_all"]["primaries"]["indexing"]["index_total"])}

    def storage_bytes(self) -> int | None:
        """Store size of the run's indices, all copies (primaries and replicas)."""
        answer = self._request("GET", f"/{self._indices}/_stats/store", params={"filter_path": "_all.total.store.size_in_bytes"})[1]
        return int(answer["_all"]["total"]["store"]["size_in_bytes"])

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> BulkRequest:
        action = [text_rows.constant('{"create":{"_index":"'), text_rows.fixed(self._index_of(batch))]
        if self._with_key:
            action += [text_rows.constant('","_id":"'), text_rows.fixed(self._keys(batch))]
        action.append(text_rows.constant('"}}\n'))
        rows = text_rows.text_rows(action + self._document(batch), len(batch))
        return BulkRequest(rows, text_rows.compact(rows))

    def insert_batch(self, prepared: BulkRequest) -> None:
        pending: list[int] | None = None  # None: every event of the batch
        attempt = 0
        while True:
            status, answer = self._request(
                "POST", "/_bulk", content=prepared.body(pending), accept=(200, TOO_MANY_REQUESTS),
                params={"filter_path": "errors,items.*.status,items.*.error"},
            )
            if status == TOO_MANY_REQUESTS:
                rejected = pending if pending is not None else list(range(len(prepared)))
            elif not answer.get("errors"):
                return
            else:
                rejected = self._rejected_items(answer["items"], pending)
            time.sleep(self.retry.pause(Rejected(f"{len(rejected)} events rejected with 429 (write queue full)"), attempt))
            pending, attempt = rejected, attempt + 1

    def _rejected_items(self, items: list[dict], pending: list[int] | None) -> list[int]:
        """Positions (in the prepared batch) of the events rejected with 429; any other error is raised."""
        positions = pending if pending is not None else range(len(items))
        rejected = []
        for position, item in zip(positions, items):
            outcome = next(iter(item.values()))
            if outcome.get("status", 201) < 300:
                continue
            if outcome["status"] != TOO_MANY_REQUESTS:
                raise SearchServerError(f"bulk insert failed: {_reason(outcome, 'status ' + str(outcome['status']))}")
            rejected.append(position)
        return rejected

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, bytes]]:
        documents = text_rows.compact(text_rows.text_rows(self._document(batch), len(batch))).splitlines()
        indices = self._index_of(batch).astype("U").tolist()
        if self._with_key:
            paths = [f"/{index}/_create/{key}" for index, key in zip(indices, self._keys(batch).astype("U").tolist())]
        else:
            paths = [f"/{index}/_doc" for index in indices]
        return list(zip(paths, documents))

    def insert_single(self, item: tuple[str, bytes]) -> None:
        path, document = item

        def send() -> None:
            status, _ = self._request("POST", path, content=document, params={"refresh": "false"},
                                      accept=(200, 201, TOO_MANY_REQUESTS))
            if status == TOO_MANY_REQUESTS:
                raise Rejected("event rejected with 429 (write queue full)")

        self.retry.call(send)

    def _index_of(self, batch: EventBatch) -> np.ndarray:
        """Each event's index name; a device always goes to the same index (as EventBatch.split_by_table)."""
        names = np.array(self.spec.table_names, dtype="S")
        return names[batch.device_index % len(names)]

    def _keys(self, batch: EventBatch) -> np.ndarray:
        return batch.time_first_key if self.options.key_order == "time" else batch.client_key

    def _document(self, batch: EventBatch) -> list[np.ndarray]:
        """The text columns of each event's JSON document line."""
        columns: list[np.ndarray] = []
        for position, column in enumerate(self.layout.columns):
            columns.append(text_rows.constant(("{" if position == 0 else ",") + f'"{column.name}":'))
            columns += text_rows.value(column.kind, column.values(batch))
        if self._with_key:
            columns += [text_rows.constant(',"id":"'), text_rows.fixed(self._keys(batch)), text_rows.constant('"')]
        columns.append(text_rows.constant("}\n"))
        return columns

    # -- the record of expected answers ------------------------------------------------------
    def store_record(self, text: str) -> None:
        status, answer = self._request("PUT", f"/{RECORD_NAME}", body={
            "settings": {"index": {"number_of_shards": 1, "number_of_replicas": self.options.replicas}},
            "mappings": {"enabled": False}}, accept=(200, 400))
        if status == 400 and _error_type(answer) != "resource_already_exists_exception":
            raise SearchServerError(f"creating index {RECORD_NAME} failed: {_reason(answer, '')}")
        self._request("PUT", f"/{RECORD_NAME}/_doc/{quote(self.record_key(), safe='')}", body={"record": text},
                      params={"refresh": "true"})

    def stored_record(self) -> str | None:
        status, answer = self._request("GET", f"/{RECORD_NAME}/_doc/{quote(self.record_key(), safe='')}", accept=(200, 404))
        return answer["_source"]["record"] if status == 200 and answer.get("found") else None

    def marker_visible(self, marker: EventBatch) -> bool:
        """A _count of the marker's document: searches see it after the index's next refresh (never forced here)."""
        index, device, sequence = self.marker_key(marker)
        query = {"bool": {"filter": [{"term": {"device_id": device}}, {"term": {"sequence_number": sequence}}]}}
        return int(self._request("POST", f"/{index}/_count", body={"query": query})[1]["count"]) > 0

    # -- queries ---------------------------------------------------------------------------
    def queries(self) -> dict[str, Query]:
        stats = {"stats": {"stats": {"field": "temperature"}}}
        queries = {
            "count-events": self._count_events,
            "temperature-min-max": self._aggregation(
                {"min": {"min": {"field": "temperature"}}, "max": {"max": {"field": "temperature"}}},
                lambda found: [(found["min"]["value"], found["max"]["value"])]),
            "temperature-stats": self._aggregation(stats, lambda found: [(found["stats"]["min"], found["stats"]["avg"], found["stats"]["max"])]),
            "temperature-stats-per-device": self._per_device(stats, lambda bucket: (
                bucket["key"]["device_id"], bucket["stats"]["min"], bucket["stats"]["avg"], bucket["stats"]["max"])),
            "newest-per-device": self._per_device({
                "newest": {"top_hits": {"size": 1, "sort": [{"timestamp": {"order": "desc"}}],
                                        "_source": {"includes": ["timestamp", "temperature"]}}},
            }, _newest_row),
            "device-downsample": self._downsample,
        }
        return {name: self._with_deadline(query) for name, query in queries.items()}

    def _with_deadline(self, query: Query) -> Query:
        """--query-timeout bounds a whole query execution, all its pages included."""

        def run() -> int:
            self._deadline = time.monotonic() + self.spec.query_timeout if self.spec.query_timeout else None
            return query()

        return run

    def _query_request(self, method: str, path: str, body: dict | None = None) -> dict:
        import httpx

        params = {"request_cache": str(self.options.request_cache).lower()} if body is not None else None
        try:
            answer = self._request(method, path, body=body, params=params, timeout=self._remaining())
        except (httpx.TransportError, ModuleError):
            if self._remaining() != 0:
                raise
            answer = None  # cut off by the deadline (a tiny timeout can end in any transport error)
        if answer is None or self._remaining() == 0:
            raise TimeoutError(f"query timed out after {self.spec.query_timeout:g} s")
        return answer[1]

    def _remaining(self) -> float | None:
        """Seconds left for the running query (0 when past its deadline), None without a timeout."""
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def _search(self, body: dict) -> dict:
        return self._query_request("POST", f"/{self._indices}/_search", body)

    def _count_events(self) -> Answer:
        return Answer([(self._query_request("GET", f"/{self._indices}/_count")["count"],)])

    def _aggregation(self, aggregations: dict, row) -> Query:
        def run() -> Answer:
            answer = self._search({"size": 0, "track_total_hits": False, "aggs": aggregations})
            return Answer([answer.get("aggregations", {})], lambda found: row(found[0]) if found[0] else [])

        return run

    def _per_device(self, sub_aggregations: dict, row) -> Query:
        """A composite aggregation over device_id, paged with after_key so every device is fetched."""

        def run() -> Answer:
            buckets = list(self._device_buckets(sub_aggregations, self.options.query_page_size))
            return Answer(buckets, lambda found: [row(bucket) for bucket in found])

        return run

    def _device_buckets(self, sub_aggregations: dict, page: int) -> Iterator[dict]:
        composite: dict[str, Any] = {"size": page, "sources": [{"device_id": {"terms": {"field": "device_id"}}}]}
        while True:
            body = {"size": 0, "track_total_hits": False, "aggs": {"devices": {"composite": composite, "aggs": sub_aggregations}}}
            devices = self._search(body)["aggregations"]["devices"]
            yield from devices["buckets"]
            if len(devices["buckets"]) < composite["size"] or "after_key" not in devices:
                return
            composite["after"] = devices["after_key"]

    def _downsample(self) -> Answer:
        """device-downsample: the device's readings of the hour in 1-minute date_histogram buckets."""
        hour = {"gte": DOWNSAMPLE_START_MS, "lt": DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS}
        body = {
            "size": 0, "track_total_hits": False,
            "query": {"bool": {"filter": [{"term": {"device_id": DOWNSAMPLE_DEVICE}}, {"range": {"timestamp": hour}}]}},
            "aggs": {"minutes": {"date_histogram": {"field": "timestamp", "fixed_interval": "1m", "min_doc_count": 1},
                                 "aggs": {"stats": {"stats": {"field": "temperature"}}}}},
        }
        buckets = self._search(body).get("aggregations", {}).get("minutes", {}).get("buckets", [])
        return Answer(buckets, lambda found: [(b["key"], b["stats"]["min"], b["stats"]["avg"], b["stats"]["max"]) for b in found])

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        self._refresh()
        return sorted(bucket["key"]["device_id"] for bucket in self._device_buckets({}, MAX_PAGE))

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        body = {"size": page_size, "query": {"term": {"device_id": device}},
                "sort": [{"timestamp": {"order": "asc"}}], "_source": ["timestamp", "temperature"]}
        params = {"scroll": SCROLL_KEEP_ALIVE, "filter_path": "_scroll_id,hits.hits._source"}
        answer = self._request("POST", f"/{self._indices}/_search", body=body, params=params)[1]
        scroll_id = answer.get("_scroll_id")
        try:
            while hits := answer.get("hits", {}).get("hits", []):
                yield np.fromiter((hit["_source"]["timestamp"] for hit in hits), dtype=np.int64, count=len(hits))
                if len(hits) < page_size:
                    return
                answer = self._request("POST", "/_search/scroll", body={"scroll": SCROLL_KEEP_ALIVE, "scroll_id": scroll_id},
                                       params={"filter_path": "_scroll_id,hits.hits._source"})[1]
                scroll_id = answer.get("_scroll_id", scroll_id)
        finally:
            if scroll_id:
                self._request("DELETE", "/_search/scroll", body={"scroll_id": [scroll_id]}, accept=(200, 404))


def _newest_row(bucket: dict) -> tuple:
    source = bucket["newest"]["hits"]["hits"][0]["_source"]
    return bucket["key"]["device_id"], source["timestamp"], source["temperature"]


def _json(response) -> dict:
    try:
        parsed = response.json()
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _error_type(answer: dict) -> str:
    error = answer.get("error")
    return error.get("type", "") if isinstance(error, dict) else ""


def _reason(answer: dict, fallback: str) -> str:
    """The most telling part of an error answer: root cause type and reason."""
    error = answer.get("error")
    if isinstance(error, dict):
        cause = (error.get("root_cause") or [error])[0]
        return f"{cause.get('type', 'error')}: {cause.get('reason', '')}".strip()
    if isinstance(error, str):
        return error
    return one_line(fallback, limit=300) or "no details"
