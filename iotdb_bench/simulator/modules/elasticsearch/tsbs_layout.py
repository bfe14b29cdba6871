"""TSBS's cpu-only and devops data in Elasticsearch and OpenSearch, which TSBS has no target for: an
index per measurement (`cpu`; devops: `cpu`, `diskio`, ..., `redis`) with a document per row, the
host's ten tags and the measurement's own (diskio's serial, nginx's port and server...) beside its
fields, as TSBS's other document stores (MongoDB's naive documents) and its InfluxDB target (tags and
fields of one point) hold a row.

    {"time": 1451606400000, "hostname": "host_0", "region": "eu-west-1", ..., "usage_user": 58, ..., "usage_guest_nice": 3}
    {"time": 1451606400000, "hostname": "host_0", ..., "serial": "357-102-741", "reads": 49, ...}

- `time`: a `date` (epoch milliseconds), what date_histogram buckets by the minute and the hour;
- the tags: `keyword`s, exact values that terms filters and composite aggregations group by;
- the fields as TSBS's serializer types them (pkg/targets/influx/serializer.go: int64 or float64):
  `long` for the whole numbers it writes as int64 (`58i` in InfluxDB's line protocol; doc values
  store them in a few bits each, and max and avg of longs are exact), `double` for its float64s
  (mem's three percentages), written as the shortest text that reads back as the same double.
A plain index, the same on Elasticsearch and OpenSearch (a time series data stream, Elasticsearch's
own layout for metrics, does not exist in OpenSearch and takes no documents outside the time bounds
given to each of its indices).
"""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.usecases import Measurement


def properties(shape: str, index: str) -> dict[str, dict[str, str]]:
    """The mapping of a measurement's index: time, the host's tags and the measurement's own, the fields."""
    measurement = USE_CASES[shape].measurement(index)
    tags = [*TAG_NAMES, *(name for name, _ in measurement.own_tags)]
    return {"time": {"type": "date", "format": "epoch_millis"}, **{name: {"type": "keyword"} for name in tags},
            **{name: {"type": "long" if integer else "double"} for name, integer in zip(measurement.field_names, measurement.integer_fields)}}


class TsbsDocuments:
    """The JSON text of each row of a batch, as text_rows' rows (no Python loop per row)."""

    def __init__(self, seed: int, hosts: int, shape: str):
        self.measurements = USE_CASES[shape].measurements
        tags = [list(zip(TAG_NAMES, row)) for row in host_tags(seed, 0, hosts)]
        # Each measurement's tags of each host as JSON members, once: a row picks its host's.
        self._tags = []
        for measurement in self.measurements:
            own = measurement.tag_values(seed, np.arange(hosts))
            members = [",".join(f'"{name}":"{value}"' for name, value in [*tags[host], *((name, own[name][host]) for name in own)])
                       for host in range(hosts)]
            self._tags.append(np.array([member.encode() for member in members]))

    def rows(self, batch: EventBatch) -> np.ndarray:
        """One document line per row of the batch, in its order (each in its measurement's form)."""
        assert batch.host is not None  # a TSBS shape's batch
        if batch.table_index is None:
            return self._rows(0, batch)
        return text_rows.merged([(chosen, self._rows(index, batch.select(chosen)))
                                 for index in range(len(self.measurements)) if (chosen := batch.table_index == index).any()], len(batch))

    def _rows(self, index: int, batch: EventBatch) -> np.ndarray:
        measurement: Measurement = self.measurements[index]
        columns = [text_rows.constant('{"time":'), text_rows.integers(batch.timestamp_ms), text_rows.constant(","),
                   text_rows.fixed(self._tags[index][batch.host])]
        for position, (name, integer) in enumerate(zip(measurement.field_names, measurement.integer_fields)):
            values = batch.measurement(position)
            columns += [text_rows.constant(f',"{name}":'), text_rows.integers(values.astype(np.int64)) if integer else text_rows.decimals(values)]
        columns.append(text_rows.constant("}\n"))
        return text_rows.text_rows(columns, len(batch))
