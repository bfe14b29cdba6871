"""TSBS's 15 DevOps query types as Elasticsearch/OpenSearch searches over the `cpu` index (tsbs_layout.py).

Every answer is exact by construction, which a search engine's aggregations are not by default:
- per time bucket: a `date_histogram` (fixed_interval 1m or 1h, epoch-aligned, min_doc_count 1),
  every bucket from every shard; `max` per field (single-groupby, cpu-max-all);
- per host and hour (double-groupby) and per host (lastpoint): a `composite` aggregation, paged with
  after_key, never a `terms` aggregation, whose buckets are the top `size` of each shard's top
  `shard_size` and may miss or miscount terms when the index has several shards;
- means: `avg` of longs sums in double with compensated (Kahan) summation, exact for these whole
  numbers; lastpoint: a `top_hits` of size 1, newest first, under each host's bucket;
- the rows themselves (high-cpu): hits sorted by (time, hostname), paged with search_after, `size`
  at most index.max_result_window;
- groupby-orderby-limit: a composite date_histogram ordered newest first, size 5: the 5 latest
  minutes with rows before the end, as `ORDER BY minute DESC LIMIT 5`.
No search counts its hits (`track_total_hits: false`): no answer needs the total.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from iotdb_bench.simulator.checks.answers import Answer
from iotdb_bench.simulator.modules.elasticsearch.options import MAX_PAGE
from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.queries.tsbs_devops import HIGH_CPU_THRESHOLD, LATEST_MINUTES, DevopsQuery
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS

CPU_INDEX = "cpu"  # the index every DevOps type reads (tsbs-devops' other measurements are not queried)
Search = Callable[[dict[str, Any]], dict[str, Any]]  # a search request's body -> its answer


def composite_buckets(search: Search, sources: list[dict[str, Any]], sub_aggregations: dict[str, Any], page: int,
                      query: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """Every bucket of a composite aggregation, a page of `page` at a time (after_key)."""
    composite: dict[str, Any] = {"size": page, "sources": sources}
    while True:
        body = {"size": 0, "track_total_hits": False, "aggs": {"groups": {"composite": composite, "aggs": sub_aggregations}}}
        groups = search({**body, "query": query} if query else body)["aggregations"]["groups"]
        yield from groups["buckets"]
        if len(groups["buckets"]) < composite["size"] or "after_key" not in groups:
            return
        composite["after"] = groups["after_key"]


class TsbsSearches:
    def __init__(self, search: Search, page: int):
        self.search, self.page = search, page

    def query(self, kind: DevopsQuery, parameters: Parameters) -> Callable[[], Answer]:
        hosts: tuple[str, ...] = parameters["hosts"] if kind.hosts else ()
        window: Window = parameters["window"] if kind.window_ms else Window(0, 0)
        if kind.family in ("single-groupby", "cpu-max-all"):
            return lambda: self._max_per_bucket(hosts, kind.fields, window, "1m" if kind.family == "single-groupby" else "1h")
        if kind.family == "double-groupby":
            return lambda: self._mean_per_host_and_hour(kind.fields, window)
        if kind.family == "high-cpu":
            return lambda: self._high_cpu(hosts, window)
        if kind.family == "lastpoint":
            return self._last_points
        return lambda: self._latest_minutes_max(window.end_ms)

    def _max_per_bucket(self, hosts: tuple[str, ...], fields: tuple[str, ...], window: Window, interval: str) -> Answer:
        body = {"size": 0, "track_total_hits": False, "query": _filter(hosts, window),
                "aggs": {"buckets": {"date_histogram": {"field": "time", "fixed_interval": interval, "min_doc_count": 1},
                                     "aggs": {name: {"max": {"field": name}} for name in fields}}}}
        buckets = self.search(body)["aggregations"]["buckets"]["buckets"]
        return Answer(buckets, lambda found: [(bucket["key"], *(bucket[name]["value"] for name in fields)) for bucket in found])

    def _mean_per_host_and_hour(self, fields: tuple[str, ...], window: Window) -> Answer:
        sources = [{"hour": {"date_histogram": {"field": "time", "fixed_interval": "1h"}}}, {"host": {"terms": {"field": "hostname"}}}]
        buckets = list(composite_buckets(self.search, sources, {name: {"avg": {"field": name}} for name in fields}, self.page,
                                         _filter((), window)))
        return Answer(buckets, lambda found: [(bucket["key"]["hour"], bucket["key"]["host"], *(bucket[name]["value"] for name in fields))
                                              for bucket in found])

    def _high_cpu(self, hosts: tuple[str, ...], window: Window) -> Answer:
        query = _filter(hosts, window)
        query["bool"]["filter"].append({"range": {CPU_FIELDS[0]: {"gt": HIGH_CPU_THRESHOLD}}})
        size = min(self.page, MAX_PAGE)
        body: dict[str, Any] = {"size": size, "track_total_hits": False, "query": query,
                                "sort": [{"time": "asc"}, {"hostname": "asc"}], "_source": ["time", "hostname", *CPU_FIELDS]}
        hits: list[dict[str, Any]] = []
        while True:
            page = self.search(body)["hits"]["hits"]
            hits += page
            if len(page) < size:
                break
            body["search_after"] = page[-1]["sort"]
        return Answer(hits, lambda found: [(hit["_source"]["time"], hit["_source"]["hostname"], *(hit["_source"][name] for name in CPU_FIELDS))
                                           for hit in found])

    def _last_points(self) -> Answer:
        newest = {"newest": {"top_hits": {"size": 1, "sort": [{"time": {"order": "desc"}}], "_source": ["time", *CPU_FIELDS]}}}
        buckets = list(composite_buckets(self.search, [{"host": {"terms": {"field": "hostname"}}}], newest, self.page))

        def rows(found: Sequence[Any]) -> list[tuple[Any, ...]]:
            sources = [(bucket["key"]["host"], bucket["newest"]["hits"]["hits"][0]["_source"]) for bucket in found]
            return [(host, source["time"], *(source[name] for name in CPU_FIELDS)) for host, source in sources]

        return Answer(buckets, rows)

    def _latest_minutes_max(self, end_ms: int) -> Answer:
        minutes = {"size": LATEST_MINUTES, "sources": [{"minute": {"date_histogram": {"field": "time", "fixed_interval": "1m", "order": "desc"}}}]}
        body = {"size": 0, "track_total_hits": False, "query": {"range": {"time": {"lt": end_ms}}},
                "aggs": {"minutes": {"composite": minutes, "aggs": {"max": {"max": {"field": CPU_FIELDS[0]}}}}}}
        buckets = self.search(body)["aggregations"]["minutes"]["buckets"]
        return Answer(buckets, lambda found: [(bucket["key"]["minute"], bucket["max"]["value"]) for bucket in found])


def _filter(hosts: tuple[str, ...], window: Window) -> dict[str, Any]:
    """The rows of the window, of these hosts (all with none)."""
    conditions: list[dict[str, Any]] = [{"range": {"time": {"gte": window.start_ms, "lt": window.end_ms}}}]
    if hosts:
        conditions.append({"terms": {"hostname": list(hosts)}})
    return {"bool": {"filter": conditions}}
