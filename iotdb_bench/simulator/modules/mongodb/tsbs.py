"""TSBS's data (cpu-only, devops, iot) and its 15 DevOps query types in MongoDB, after TSBS's mongo target
(pkg/targets/mongo/, cmd/tsbs_load_mongo/, cmd/tsbs_generate_queries/databases/mongo/).

TSBS stores a row as one document, `{measurement, timestamp_ns, tags: {...}, fields: {...}}`, the
tags its point's (the host's, then the measurement's own: diskio's serial, nginx's port and server...),
every value a double (its serializer turns int64s into float64s), either as they are (its "naive"
layout, `--document-per-event`) or gathered by hand into a document per host and hour (its default
"aggregated" layout, from before MongoDB had time series collections, whose updates set
`events.<minute>.<second>`). Here the row's document is TSBS's, in the collection of its measurement
(`cpu`; devops: `cpu`, `diskio`, ..., `redis`, as in the tool's other TSBS layouts, where TSBS keeps
every measurement in one collection `point_data`):

    {"time": ISODate(...), "tags": {"hostname": "host_0", "region": ..., ...}, "fields": {"usage_user": 58.0, ...}}
    {"time": ISODate(...), "tags": {"hostname": "host_0", ..., "serial": "357-102-741"}, "fields": {"reads": 49.0, ...}}

and the bucketing by host and hour is MongoDB's own: a time series collection (the module's default
`collection_type`) with `timeField: time` and `metaField: tags`; `collection_type=plain` keeps TSBS's
naive layout. `time` is a BSON date instead of TSBS's `timestamp_ns` (a time series collection's time
field must be one). The index is TSBS's (its naive layout's, without the measurement): tags.hostname, time.

IoT's trucks (`readings`, `diagnostics`) are the same documents, `tags` the truck's eight (its capacities
doubles: TSBS's serializer takes string tags only) and TSBS's null tag and null field left out of the
document, as that serializer leaves them out; the index is on tags.name, time. Their queries: tsbs_iot.py.

The DevOps queries read `cpu` alone. They are TSBS's naive pipelines ($match, $group on the time bucket, $sort) for all 15 types,
with `$dateTrunc` (MongoDB 5.0+) for TSBS's `$subtract`/`$mod` arithmetic on nanoseconds, and
MongoDB's documented "last point" pattern ($sort on host and time, $group with $first) for lastpoint.
Only a wire-protocol fake runs where this is tested (tests/modules/test_tsbs_mongodb_wire_fake.py):
the requests' shapes are checked there, not a real MongoDB's answers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from iotdb_bench.simulator.checks.answers import Answer, epoch_ms
from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.queries.tsbs_devops import HIGH_CPU_THRESHOLD, LATEST_MINUTES, DevopsQuery
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS

TIME_FIELD, META_FIELD, FIELDS = "time", "tags", "fields"
HOSTNAME = f"{META_FIELD}.hostname"


def index(shape: str) -> list[tuple[str, int]]:
    """TSBS's index (its naive layout's, without the measurement): the entity's name tag, then time."""
    return [(f"{META_FIELD}.{USE_CASES[shape].tags[0][0]}", 1), (TIME_FIELD, 1)]  # tags.hostname; IoT: tags.name


class TsbsDocuments:
    """A batch's rows of one measurement (its collection) as BSON documents."""

    def __init__(self, seed: int, hosts: int, shape: str):
        use_case = USE_CASES[shape]
        self.measurements = {one.name: one for one in use_case.measurements}
        self._tag_names = tuple(name for name, _ in use_case.tags)
        entity = [dict(zip(self._tag_names, tags)) for tags in use_case.tag_rows(seed, 0, hosts)]  # IoT's capacities: doubles
        # Each measurement's tags of each entity: the entity's, then the measurement's own (TSBS's point's tags).
        self._tags = {}
        for name, measurement in self.measurements.items():
            own = measurement.tag_values(seed, np.arange(hosts))
            self._tags[name] = [{**entity[index], **{tag: values[index] for tag, values in own.items()}} for index in range(hosts)]

    def encoded(self, collection: str, batch: EventBatch) -> list[bytes]:
        from bson import encode
        from bson.datetime_ms import DatetimeMS

        assert batch.host is not None and batch.more is not None  # a TSBS shape's batch
        fields, tags = self.measurements[collection].field_names, self._tags[collection]
        values = zip(batch.temperature.tolist(), *(column.tolist() for column in batch.more[: len(fields) - 1]))
        if batch.null_tag is None:  # DevOps: no nulls
            return [encode({TIME_FIELD: DatetimeMS(time), META_FIELD: tags[host], FIELDS: dict(zip(fields, row))})
                    for time, host, row in zip(batch.timestamp_ms.tolist(), batch.host.tolist(), values)]
        # IoT: TSBS's null tag and null field (NaN) are left out of the row's document, as its serializer leaves them out.
        return [encode({TIME_FIELD: DatetimeMS(time), META_FIELD: tags[host] if null_tag < 0 else self._without(tags[host], null_tag),
                        FIELDS: {name: value for name, value in zip(fields, row) if not math.isnan(value)}})
                for time, host, null_tag, row in zip(batch.timestamp_ms.tolist(), batch.host.tolist(), batch.null_tag.tolist(), values)]

    def _without(self, tags: dict[str, Any], null_tag: int) -> dict[str, Any]:
        return {name: value for name, value in tags.items() if name != self._tag_names[null_tag]}


def pipeline(kind: DevopsQuery, parameters: Parameters) -> list[dict[str, Any]]:
    """The aggregation pipeline of one execution."""
    from bson.datetime_ms import DatetimeMS

    window: Window = parameters["window"] if kind.window_ms else Window(0, 0)
    during = {TIME_FIELD: {"$gte": DatetimeMS(window.start_ms), "$lt": DatetimeMS(window.end_ms)}}
    of_hosts = {HOSTNAME: {"$in": list(parameters["hosts"])}} if kind.hosts else {}
    if kind.family in ("single-groupby", "cpu-max-all"):
        unit = "minute" if kind.family == "single-groupby" else "hour"
        maxima = {f"max_{name}": {"$max": f"${FIELDS}.{name}"} for name in kind.fields}
        return [{"$match": {**of_hosts, **during}}, {"$group": {"_id": _truncated(unit), **maxima}}, {"$sort": {"_id": 1}}]
    if kind.family == "double-groupby":
        means = {f"avg_{name}": {"$avg": f"${FIELDS}.{name}"} for name in kind.fields}
        return [{"$match": during}, {"$group": {"_id": {"hour": _truncated("hour"), "hostname": f"${HOSTNAME}"}, **means}},
                {"$sort": {"_id.hour": 1, "_id.hostname": 1}}]
    if kind.family == "high-cpu":
        return [{"$match": {**of_hosts, **during, f"{FIELDS}.{CPU_FIELDS[0]}": {"$gt": HIGH_CPU_THRESHOLD}}}, {"$sort": {TIME_FIELD: 1}}]
    if kind.family == "lastpoint":
        return [{"$sort": {HOSTNAME: 1, TIME_FIELD: -1}},
                {"$group": {"_id": f"${HOSTNAME}", TIME_FIELD: {"$first": f"${TIME_FIELD}"}, FIELDS: {"$first": f"${FIELDS}"}}}]
    return [{"$match": {TIME_FIELD: {"$lt": DatetimeMS(window.end_ms)}}},
            {"$group": {"_id": _truncated("minute"), f"max_{CPU_FIELDS[0]}": {"$max": f"${FIELDS}.{CPU_FIELDS[0]}"}}},
            {"$sort": {"_id": -1}}, {"$limit": LATEST_MINUTES}]


def _truncated(unit: str) -> dict[str, Any]:
    return {"$dateTrunc": {"date": f"${TIME_FIELD}", "unit": unit}}


def answer(kind: DevopsQuery, documents: Sequence[dict[str, Any]]) -> Answer:
    """The result documents, turned into the common form after the timed call."""

    def rows(found: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
        if kind.family in ("single-groupby", "cpu-max-all"):
            return [(epoch_ms(d["_id"]), *(d.get(f"max_{name}") for name in kind.fields)) for d in found]
        if kind.family == "double-groupby":
            return [(epoch_ms(d["_id"]["hour"]), d["_id"]["hostname"], *(d.get(f"avg_{name}") for name in kind.fields)) for d in found]
        if kind.family == "high-cpu":
            return [(epoch_ms(d[TIME_FIELD]), d[META_FIELD]["hostname"], *(d[FIELDS].get(name) for name in CPU_FIELDS)) for d in found]
        if kind.family == "lastpoint":
            return [(d["_id"], epoch_ms(d[TIME_FIELD]), *(d[FIELDS].get(name) for name in CPU_FIELDS)) for d in found]
        return [(epoch_ms(d["_id"]), d.get(f"max_{CPU_FIELDS[0]}")) for d in found]

    return Answer(documents, rows)
