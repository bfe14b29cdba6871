"""TSBS's 13 IoT query types as Elasticsearch/OpenSearch searches over the `readings` and `diagnostics`
indices (tsbs_layout.py), with the semantics of simulator/queries/tsbs_iot.py (TSBS's TimescaleDB text,
cmd/tsbs_generate_queries/databases/timescaledb/iot.go; TSBS has no IoT queries for a search engine).

The documents carry their truck's tags, and TSBS's null tags leave one out of some of them. The
trucks' tags (TimescaleDB's `tags` table) are a composite aggregation over both indices by all eight
tags: a document without one of them is in no bucket, so each truck is its one combination (a truck
is missing only if none of its documents carries all eight; about 1% of them lack one). The rows are
then grouped by `name` alone and joined to their truck's tags on the client (simulator/queries/
tsbs_iot_documents.py), so a row whose fleet or model is null still counts for its truck, and a row
without a name (TSBS's nulled name) for none, as TSBS's SQL joins them.

Every answer is exact: composite aggregations paged with after_key, never `terms` (approximate over
several shards); per truck or per truck and epoch-aligned 10-minute period (a composite
`date_histogram` source) the rows (doc_count), and `sum` and `value_count` of one field: a mean is
compared as sum against count (a null field is no value, as SQL's avg skips it); the newest row is a
`top_hits` of size 1, newest first. What SQL does with window functions over the periods (TSBS's
lag/lead: a breakdown's turn; a session's changes: simulator/queries/tsbs_iot_periods.py) is done on
the client over the periods fetched, in time order, as are the HAVING tests and the groups by the
trucks' tags (simulator/queries/tsbs_iot_documents.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from iotdb_bench.simulator.modules.elasticsearch.tsbs_queries import composite_buckets
from iotdb_bench.simulator.queries.tsbs_iot_documents import DIAGNOSTICS, READINGS, Figures, IotOverDocuments, Selection, Trucks
from iotdb_bench.simulator.queries.tsbs_iot_periods import Period
from iotdb_bench.simulator.workload.tsbs.iot import TAGS

TAG_NAMES = tuple(name for name, _ in TAGS)
Search = Callable[[dict[str, Any], str], dict[str, Any]]  # a search request's body and its indices -> its answer


class IotSearches(IotOverDocuments):
    def __init__(self, search: Search, page: int):
        self.search, self.page = search, page

    def _buckets(self, indices: str, sources: list[dict[str, Any]], sub_aggregations: dict[str, Any],
                 query: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return list(composite_buckets(functools.partial(self._search_of, indices), sources, sub_aggregations, self.page, query))

    def _search_of(self, indices: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.search(body, indices)

    def trucks(self, fleet: str | None = None, names: Sequence[str] | None = None) -> Trucks:
        """The trucks' tags (TimescaleDB's tags table): the combinations of all eight in the documents."""
        query = {"terms": {"name": list(names)}} if names is not None else {"term": {"fleet": fleet}} if fleet is not None else None
        sources = [{name: {"terms": {"field": name}}} for name in TAG_NAMES]
        return {bucket["key"]["name"]: bucket["key"] for bucket in self._buckets(f"{READINGS},{DIAGNOSTICS}", sources, {}, query)}

    def newest(self, measurement: str, trucks: Trucks, fields: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        """Each truck's newest document of the index (these fields; a null one absent), for those that have one."""
        if not trucks:
            return {}
        newest = {"newest": {"top_hits": {"size": 1, "sort": [{"time": {"order": "desc"}}], "_source": list(fields)}}}
        buckets = self._buckets(measurement, [{"name": {"terms": {"field": "name"}}}], newest, {"terms": {"name": sorted(trucks)}})
        return {bucket["key"]["name"]: bucket["newest"]["hits"]["hits"][0]["_source"] for bucket in buckets}

    def per_truck(self, measurement: str, field: str, selection: Selection) -> dict[str, Figures]:
        buckets = self._buckets(measurement, [{"name": {"terms": {"field": "name"}}}], _sum_and_count(field), _query(selection))
        return {bucket["key"]["name"]: (bucket["doc_count"], bucket["sum"]["value"], bucket["count"]["value"]) for bucket in buckets}

    def periods(self, measurement: str, field: str, selection: Selection) -> dict[str, list[Period]]:
        sources = [{"name": {"terms": {"field": "name"}}}, {"period": {"date_histogram": {"field": "time", "fixed_interval": "10m"}}}]
        periods: dict[str, list[Period]] = {}
        for bucket in self._buckets(measurement, sources, _sum_and_count(field), _query(selection)):
            periods.setdefault(bucket["key"]["name"], []).append(
                (bucket["key"]["period"], bucket["doc_count"], bucket["sum"]["value"], bucket["count"]["value"]))
        return periods


def _query(selection: Selection) -> dict[str, Any] | None:
    """The selection's rows as a query (None: all of them)."""
    filters: list[dict[str, Any]] = []
    if selection.window is not None:
        filters.append({"range": {"time": {"gte": selection.window.start_ms, "lt": selection.window.end_ms}}})
    if selection.trucks is not None:
        filters.append({"terms": {"name": list(selection.trucks)}})
    if selection.above is not None:
        field, value = selection.above
        filters.append({"range": {field: {"gt": value}}})
    return None if not filters else filters[0] if len(filters) == 1 else {"bool": {"filter": filters}}


def _sum_and_count(field: str) -> dict[str, Any]:
    return {"sum": {"sum": {"field": field}}, "count": {"value_count": {"field": field}}}
