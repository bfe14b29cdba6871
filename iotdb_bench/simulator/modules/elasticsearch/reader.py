"""The elasticsearch module's read side: the six queries as aggregations (per device: a composite
aggregation paged with after_key; device-downsample: a 1-minute date_histogram) and TSBS's DevOps
and IoT query types (tsbs_queries.py, tsbs_iot.py), each bounded as a whole by --query-timeout; a query file's _search
bodies (text_answers.py); scans through the scroll API; the visibility probe's _count of a marker."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, Query, ReaderRole
from iotdb_bench.simulator.modules.elasticsearch import text_answers
from iotdb_bench.simulator.modules.elasticsearch.options import MAX_PAGE, SCROLL_KEEP_ALIVE, SearchRole
from iotdb_bench.simulator.modules.elasticsearch.tsbs_iot import IotSearches
from iotdb_bench.simulator.modules.elasticsearch.tsbs_queries import CPU_INDEX, TsbsSearches, composite_buckets
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS
from iotdb_bench.simulator.queries.tsbs_iot import IOT
from iotdb_bench.simulator.workload.events import EventBatch


class SearchReader(SearchRole, ReaderRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self._deadline: float | None = None  # of the query running, with --query-timeout

    def marker_visible(self, marker: EventBatch) -> bool:
        """A _count of the marker's document: searches see it after the index's next refresh (never forced here)."""
        index, device, sequence = self.marker_key(marker)
        query = {"bool": {"filter": [{"term": {"device_id": device}}, {"term": {"sequence_number": sequence}}]}}
        return int(self.module.connection.request("POST", f"/{index}/_count", body={"query": query})[1]["count"]) > 0

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

        def run() -> Answer:
            self._deadline = time.monotonic() + self.spec.query_timeout if self.spec.query_timeout else None
            return query()

        return run

    def text_query(self, language: str, text: str) -> Query:
        """A query file's _search body on the run's indices, its answer as rows (text_answers.py)."""
        request = text_answers.body(text)
        return self._with_deadline(lambda: Answer([self._search(request)], lambda found: text_answers.rows(request, found[0])))

    def check_text(self, language: str, text: str) -> None:
        """The body's query validated, and its aggregations parsed over no document (nothing is read)."""
        request = text_answers.body(text)
        if "query" in request:
            answer = self.module.connection.request("POST", f"/{self.module.indices}/_validate/query", body={"query": request["query"]},
                                                    params={"explain": "true"})[1]
            if not answer.get("valid", False):
                raise ModuleError(next((one.get("error") for one in answer.get("explanations", []) if one.get("error")), "invalid query"))
        self.module.connection.request("POST", f"/{self.module.indices}/_search",
                                       body={**request, "query": {"match_none": {}}, "size": 0})

    def _query_request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        import httpx

        params = {"request_cache": str(self.options.request_cache).lower()} if body is not None else None
        try:
            answer = self.module.connection.request(method, path, body=body, params=params, timeout=self._remaining())
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

    def _search(self, body: dict[str, Any], indices: str | None = None) -> dict[str, Any]:
        """A search of `indices` (default: the run's)."""
        return self._query_request("POST", f"/{indices or self.module.indices}/_search", body)

    def _count_events(self) -> Answer:
        return Answer([(self._query_request("GET", f"/{self.module.indices}/_count")["count"],)])

    def _aggregation(self, aggregations: dict[str, Any], row: Callable[[dict[str, Any]], list[tuple[Any, ...]]]) -> Query:
        def run() -> Answer:
            answer = self._search({"size": 0, "track_total_hits": False, "aggs": aggregations})
            return Answer([answer.get("aggregations", {})], lambda found: row(found[0]) if found[0] else [])

        return run

    def _per_device(self, sub_aggregations: dict[str, Any], row: Callable[[dict[str, Any]], tuple[Any, ...]]) -> Query:
        """A composite aggregation over device_id, paged with after_key so every device is fetched."""

        def run() -> Answer:
            buckets = list(self._device_buckets(sub_aggregations, self.options.query_page_size))
            return Answer(buckets, lambda found: [row(bucket) for bucket in found])

        return run

    def _device_buckets(self, sub_aggregations: dict[str, Any], page: int) -> Iterator[dict[str, Any]]:
        return composite_buckets(self._search, [{"device_id": {"terms": {"field": "device_id"}}}], sub_aggregations, page)

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """TSBS's query types of the data's use case, each bounded as a whole by --query-timeout: the DevOps
        ones over the `cpu` index (tsbs_queries.py; devops data's other indices are not read), the IoT
        ones over `readings` and `diagnostics` (tsbs_iot.py)."""
        if not self.spec.tsbs:
            return {}
        if self.spec.shape == "tsbs-iot":
            iot = IotSearches(self._search, self.options.query_page_size)
            return {name: functools.partial(self._tsbs_query, functools.partial(iot.query, kind)) for name, kind in IOT.items()}
        searches = TsbsSearches(functools.partial(self._search, indices=CPU_INDEX), self.options.query_page_size)
        return {name: functools.partial(self._tsbs_query, functools.partial(searches.query, kind)) for name, kind in DEVOPS.items()}

    def _tsbs_query(self, query: Callable[[Parameters], Query], parameters: Parameters) -> Query:
        return self._with_deadline(query(parameters))

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
        self.module.connection.refresh(self.module.indices)
        return sorted(bucket["key"]["device_id"] for bucket in self._device_buckets({}, MAX_PAGE))

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        request = self.module.connection.request
        body = {"size": page_size, "query": {"term": {"device_id": device}},
                "sort": [{"timestamp": {"order": "asc"}}], "_source": ["timestamp", "temperature"]}
        params = {"scroll": SCROLL_KEEP_ALIVE, "filter_path": "_scroll_id,hits.hits._source"}
        answer = request("POST", f"/{self.module.indices}/_search", body=body, params=params)[1]
        scroll_id = answer.get("_scroll_id")
        try:
            while hits := answer.get("hits", {}).get("hits", []):
                yield np.fromiter((hit["_source"]["timestamp"] for hit in hits), dtype=np.int64, count=len(hits))
                if len(hits) < page_size:
                    return
                answer = request("POST", "/_search/scroll", body={"scroll": SCROLL_KEEP_ALIVE, "scroll_id": scroll_id},
                                 params={"filter_path": "_scroll_id,hits.hits._source"})[1]
                scroll_id = answer.get("_scroll_id", scroll_id)
        finally:
            if scroll_id:
                request("DELETE", "/_search/scroll", body={"scroll_id": [scroll_id]}, accept=(200, 404))


def _newest_row(bucket: dict[str, Any]) -> tuple[Any, ...]:
    source = bucket["newest"]["hits"]["hits"][0]["_source"]
    return bucket["key"]["device_id"], source["timestamp"], source["temperature"]
