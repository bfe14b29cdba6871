"""TSBS's 13 IoT query types as aggregation pipelines over the `readings` and `diagnostics` collections
(tsbs.py's documents), with the semantics of simulator/queries/tsbs_iot.py (TSBS's TimescaleDB text,
cmd/tsbs_generate_queries/databases/timescaledb/iot.go). TSBS has no IoT queries for MongoDB (nor IoT data:
its mongo serializer takes string tags only, and the trucks' capacities are numbers).

A document carries its truck's tags, and TSBS's null tags leave one out of some of them. The trucks' tags
(TimescaleDB's `tags` table) are the distinct `tags` documents of both collections (`$group` on the
metaField) that hold all eight: each truck is its one combination (a truck is missing only if none of its
documents carries all eight; about 1% lack one). The rows are then grouped by `tags.name` alone and joined to
their truck's tags on the client, so a row whose fleet or model is null still counts for its truck, and a row
without a name (TSBS's nulled name: its group's key has no name) for none, as TSBS's SQL joins them.

Only simple stages ($match, $sort, $group), MongoDB 5.0+'s: a truck's newest row is MongoDB's documented
"last point" pattern ($sort on name and time, newest first, then `$first` per name); per truck or per truck
and epoch-aligned 10-minute period (`$dateTrunc` with `binSize: 10`, whose bins start at MongoDB's
reference date 2000-01-01T00:00:00Z, a multiple of 10 minutes after the epoch) the rows (`$sum: 1`), and
the `$sum` and the count of one field's values (`$isNumber`: a missing field, TSBS's null, is no value, as
SQL's avg skips a null): a mean is compared as sum against count. What SQL does with window functions over
the periods (TSBS's lag/lead: a session's changes, a breakdown's turn: simulator/queries/tsbs_iot_periods.py)
is done on the client over the periods fetched, as are the HAVING tests and the groups by the trucks' tags,
inside the timed call (simulator/queries/tsbs_iot_documents.py, as for Elasticsearch).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from iotdb_bench.simulator.checks.answers import epoch_ms
from iotdb_bench.simulator.modules.mongodb.tsbs import FIELDS, META_FIELD, TIME_FIELD
from iotdb_bench.simulator.queries.tsbs_iot_documents import DIAGNOSTICS, READINGS, Figures, IotOverDocuments, Selection, Trucks
from iotdb_bench.simulator.queries.tsbs_iot_periods import Period
from iotdb_bench.simulator.workload.tsbs.iot import TAGS

NAME, FLEET = f"{META_FIELD}.name", f"{META_FIELD}.fleet"
PERIOD = {"$dateTrunc": {"date": f"${TIME_FIELD}", "unit": "minute", "binSize": 10}}  # epoch-aligned 10 minutes
Aggregate = Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]  # a collection and a pipeline -> its result documents


class IotPipelines(IotOverDocuments):
    def __init__(self, aggregate: Aggregate):
        self.aggregate = aggregate

    def trucks(self, fleet: str | None = None, names: Sequence[str] | None = None) -> Trucks:
        """The trucks' tags (TimescaleDB's tags table): the distinct tags documents that hold all eight."""
        match: dict[str, Any] = {NAME: {"$in": list(names)}} if names is not None else {FLEET: fleet} if fleet is not None else {}
        stages = [*([{"$match": match}] if match else []), {"$group": {"_id": f"${META_FIELD}"}}]
        return {group["_id"]["name"]: group["_id"] for collection in (READINGS, DIAGNOSTICS)
                for group in self.aggregate(collection, stages) if len(group["_id"]) == len(TAGS)}

    def newest(self, measurement: str, trucks: Trucks, fields: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        """Each truck's newest document's fields (all of them; a null one absent), for those that have one."""
        if not trucks:
            return {}
        stages: list[dict[str, Any]] = [{"$match": {NAME: {"$in": sorted(trucks)}}}, {"$sort": {NAME: 1, TIME_FIELD: -1}},
                                        {"$group": {"_id": f"${NAME}", FIELDS: {"$first": f"${FIELDS}"}}}]
        return {newest["_id"]: newest[FIELDS] for newest in self.aggregate(measurement, stages)}

    def per_truck(self, measurement: str, field: str, selection: Selection) -> dict[str, Figures]:
        return {name: (rows, total, count) for name, rows, total, count in self._figures(measurement, field, f"${NAME}", selection)
                if name is not None}  # a nameless row's group: null

    def periods(self, measurement: str, field: str, selection: Selection) -> dict[str, list[Period]]:
        periods: dict[str, list[Period]] = {}
        for key, rows, total, count in self._figures(measurement, field, {"name": f"${NAME}", "period": PERIOD}, selection):
            if "name" in key:  # a nameless row's group: MongoDB leaves the missing name out of the key
                periods.setdefault(key["name"], []).append((epoch_ms(key["period"]), rows, total, count))
        return periods

    def _figures(self, measurement: str, field: str, key: Any, selection: Selection) -> list[tuple[Any, int, float, int]]:
        """Per group of `key` of the selection's rows: its rows, and the sum and count of the field's values in them."""
        value = f"${FIELDS}.{field}"
        group = {"_id": key, "rows": {"$sum": 1}, "sum": {"$sum": value}, "count": {"$sum": {"$cond": [{"$isNumber": value}, 1, 0]}}}
        match = _match(selection)
        stages = [*([{"$match": match}] if match else []), {"$group": group}]
        return [(found["_id"], found["rows"], found["sum"], found["count"]) for found in self.aggregate(measurement, stages)]


def _match(selection: Selection) -> dict[str, Any]:
    """The selection's rows as a $match condition (empty: all of them)."""
    from bson.datetime_ms import DatetimeMS

    match: dict[str, Any] = {}
    if selection.trucks is not None:
        match[NAME] = {"$in": list(selection.trucks)}
    if selection.window is not None:
        match[TIME_FIELD] = {"$gte": DatetimeMS(selection.window.start_ms), "$lt": DatetimeMS(selection.window.end_ms)}
    if selection.above is not None:
        field, value = selection.above
        match[f"{FIELDS}.{field}"] = {"$gt": value}
    return match
