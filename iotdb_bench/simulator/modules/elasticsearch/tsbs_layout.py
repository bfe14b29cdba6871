"""TSBS's cpu-only, devops and iot data in Elasticsearch and OpenSearch, which TSBS has no target for:
an index per measurement (`cpu`; devops: `cpu`, `diskio`, ..., `redis`; iot: `readings`,
`diagnostics`) with a document per row, the entity's tags (a host's ten, a truck's eight) and the
measurement's own (diskio's serial, nginx's port and server...) beside its fields, as TSBS's other
document stores (MongoDB's naive documents) and its InfluxDB target (tags and fields of one point)
hold a row.

    {"time": 1451606400000, "hostname": "host_0", "region": "eu-west-1", ..., "usage_user": 58, ..., "usage_guest_nice": 3}
    {"time": 1451606400000, "hostname": "host_0", ..., "serial": "357-102-741", "reads": 49, ...}
    {"time": 1451606400000, "name": "truck_0", "fleet": "South", ..., "load_capacity": 1500, ..., "latitude": 82.70029, ...}

- `time`: a `date` (epoch milliseconds), what date_histogram buckets by the minute and the hour;
- the string tags: `keyword`s, exact values that terms filters and composite aggregations group by;
  IoT's capacities (tags TSBS writes as numbers) `double`s;
- the fields as TSBS's serializer types them (pkg/targets/influx/serializer.go: int64 or float64):
  `long` for the whole numbers it writes as int64 (`58i` in InfluxDB's line protocol; doc values
  store them in a few bits each, and max and avg of longs are exact), `double` for its float64s
  (mem's three percentages, IoT's fields but status), written as the shortest text that reads back
  as the same double;
- TSBS's null tags and fields (IoT's) are absent from the row's document, as its line protocol
  leaves them out: aggregations skip them as SQL skips nulls, and a document without `name` (TSBS's
  nulled name, which ties the row to no truck) is in no bucket of a truck.
A plain index, the same on Elasticsearch and OpenSearch (a time series data stream, Elasticsearch's
own layout for metrics, does not exist in OpenSearch and takes no documents outside the time bounds
given to each of its indices).
"""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.usecases import Measurement


def properties(shape: str, index: str) -> dict[str, dict[str, str]]:
    """The mapping of a measurement's index: time, the entity's tags and the measurement's own, the fields."""
    use_case = USE_CASES[shape]
    measurement = use_case.measurement(index)
    tags = [*use_case.tags, *((name, "text") for name, _ in measurement.own_tags)]
    return {"time": {"type": "date", "format": "epoch_millis"}, **{name: {"type": "keyword" if kind == "text" else "double"} for name, kind in tags},
            **{name: {"type": "long" if integer else "double"} for name, integer in zip(measurement.field_names, measurement.integer_fields)}}


class TsbsDocuments:
    """The JSON text of each row of a batch, as text_rows' rows (no Python loop per row, but for the rare
    rows with a null tag)."""

    def __init__(self, seed: int, hosts: int, shape: str):
        use_case = USE_CASES[shape]
        self.measurements = use_case.measurements
        self._kinds = dict(use_case.tags)
        self._entity_tags = [list(zip(self._kinds, row)) for row in use_case.tag_rows(seed, 0, hosts)]
        self._own = [measurement.tag_values(seed, np.arange(hosts)) for measurement in self.measurements]
        # Each measurement's tags of each entity as JSON members, once: a row picks its entity's.
        self._tags = [np.array([self._members(index, host).encode() for host in range(hosts)]) for index in range(len(self.measurements))]

    def _members(self, measurement: int, host: int, null_tag: int = -1) -> str:
        """The entity's tags (but the one at `null_tag`) and the measurement's own, as JSON members after a comma."""
        own = self._own[measurement]
        tags = [(name, value) for position, (name, value) in enumerate(self._entity_tags[host]) if position != null_tag]
        return "".join(f',"{name}":"{value}"' if self._kinds.get(name, "text") == "text" else f',"{name}":{value:g}'
                       for name, value in [*tags, *((name, own[name][host]) for name in own)])

    def rows(self, batch: EventBatch) -> np.ndarray:
        """One document line per row of the batch, in its order (each in its measurement's form)."""
        assert batch.host is not None  # a TSBS shape's batch
        if batch.table_index is None:
            return self._rows(0, batch)
        return text_rows.merged([(chosen, self._rows(index, batch.select(chosen)))
                                 for index in range(len(self.measurements)) if (chosen := batch.table_index == index).any()], len(batch))

    def _rows(self, index: int, batch: EventBatch) -> np.ndarray:
        measurement: Measurement = self.measurements[index]
        assert batch.host is not None  # a TSBS shape's batch
        tags = self._tags[index][batch.host]  # a copy: a row with a null tag gets its own (shorter) members
        if batch.null_tag is not None:
            for at in np.flatnonzero(batch.null_tag >= 0).tolist():
                tags[at] = self._members(index, int(batch.host[at]), int(batch.null_tag[at])).encode()
        columns = [text_rows.constant('{"time":'), text_rows.integers(batch.timestamp_ms), text_rows.fixed(tags)]
        for position, (name, integer) in enumerate(zip(measurement.field_names, measurement.integer_fields)):
            columns += _member(f',"{name}":', batch.measurement(position), integer)
        columns.append(text_rows.constant("}\n"))
        return text_rows.text_rows(columns, len(batch))


def _member(lead: str, values: np.ndarray, integer: bool) -> list[np.ndarray]:
    """The columns of one field's member of every row; none in the rows where it is null (NaN)."""
    null = np.isnan(values)
    written = np.where(null, 0.0, values) if null.any() else values
    columns = [text_rows.constant(lead), text_rows.integers(written.astype(np.int64)) if integer else text_rows.decimals(written)]
    if not null.any():
        return columns
    rows = text_rows.text_rows(columns, len(values))
    rows[null] = 0  # zero bytes: dropped when the rows are joined
    return [rows]
