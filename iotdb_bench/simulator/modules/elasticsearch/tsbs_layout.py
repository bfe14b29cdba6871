"""TSBS's cpu-only data in Elasticsearch and OpenSearch, which TSBS has no target for: an index `cpu`
with a document per row, the host's ten tags beside its fields, as TSBS's other document stores
(MongoDB's naive documents) and its InfluxDB target (tags and fields of one point) hold a row.

    {"time": 1451606400000, "hostname": "host_0", "region": "eu-west-1", ..., "usage_user": 58, ..., "usage_guest_nice": 3}

- `time`: a `date` (epoch milliseconds), what date_histogram buckets by the minute and the hour;
- the tags: `keyword`s, exact values that terms filters and composite aggregations group by;
- the fields: `long`s: TSBS's values are whole numbers (it writes them as int64, `58i` in InfluxDB's
  line protocol), which doc values store in a few bits each, and max and avg of longs are exact.
A plain index, the same on Elasticsearch and OpenSearch (a time series data stream, Elasticsearch's
own layout for metrics, does not exist in OpenSearch and takes no documents outside the time bounds
given to each of its indices).
"""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.usecases import USE_CASES


def properties(shape: str) -> dict[str, dict[str, str]]:
    """The index's mapping: time, the tags, the fields."""
    fields = USE_CASES[shape].measurements[0].field_names
    return {"time": {"type": "date", "format": "epoch_millis"}, **{name: {"type": "keyword"} for name in TAG_NAMES},
            **{name: {"type": "long"} for name in fields}}


class TsbsDocuments:
    """The JSON text of each row of a batch (text_rows' columns, no Python loop per row)."""

    def __init__(self, seed: int, hosts: int, shape: str):
        self.fields = USE_CASES[shape].measurements[0].field_names
        # Each host's tags as JSON members, once: a row picks its host's.
        members = [",".join(f'"{name}":"{value}"' for name, value in zip(TAG_NAMES, tags)) for tags in host_tags(seed, 0, hosts)]
        self._tags = np.array([member.encode() for member in members])

    def columns(self, batch: EventBatch) -> list[np.ndarray]:
        assert batch.host is not None and batch.more is not None  # a TSBS shape's batch
        columns = [text_rows.constant('{"time":'), text_rows.integers(batch.timestamp_ms), text_rows.constant(","),
                   text_rows.fixed(self._tags[batch.host])]
        for name, values in zip(self.fields, [batch.temperature, *batch.more]):
            columns += [text_rows.constant(f',"{name}":'), text_rows.integers(values.astype(np.int64))]
        columns.append(text_rows.constant("}\n"))
        return columns
