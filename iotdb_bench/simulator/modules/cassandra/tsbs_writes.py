"""Writing TSBS's rows in TSBS's Cassandra layout (tsbs_series.py): a row of n fields is n points,
one in each of its fields' series (in series_bigint or series_double, as the field's type says).

A batch becomes one request per series and day it touches: an UNLOGGED batch of that partition's
points, a single-partition mutation (a lone point is a plain INSERT). TSBS's loader sends its whole
batch as one LOGGED multi-partition batch instead, which Cassandra refuses above
batch_size_fail_threshold (50 KiB by default: about 300 of these points). The requests of a batch go
out with `max_sync_calls` in flight and the batch is one timed call, from the first request sent to
the last acknowledged. A single insert is one row: its points in one UNLOGGED batch. Points are
upserts of their key, so failed requests are retried like the module's other writes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from iotdb_bench.simulator.modules.cassandra.tsbs_series import DAY_MS, SeriesPrefixes, series_id, table_of
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.tsbs import USE_CASES


@dataclass(frozen=True)
class TsbsBatch:
    requests: list[Any]  # one statement per series and day
    rows: int


class TsbsWrites:
    def __init__(self, session: Any, keyspace: str, seed: int, shape: str):
        self.session = session
        measurements = USE_CASES[shape].measurements
        self.prefixes = SeriesPrefixes(seed, measurements)
        self.fields = [one.field_names for one in measurements]
        self.integers = [one.integer_fields for one in measurements]
        self._inserts: dict[bool, Any] = {}  # by whether the field is an integer
        for integer in {kind for kinds in self.integers for kind in kinds}:
            table = table_of(integer)
            self._inserts[integer] = session.prepare(f"INSERT INTO {keyspace}.{table} (series_id, time, value) VALUES (?, ?, ?)")
            self._inserts[integer].is_idempotent = True

    def prepare(self, batch: EventBatch) -> TsbsBatch:
        """One request per series and day of the batch's rows."""
        from cassandra.query import BatchStatement, BatchType

        assert batch.host is not None  # a TSBS shape's batch
        days = batch.timestamp_ms // DAY_MS
        measurements = self._measurements(batch)
        order = np.lexsort((days, batch.host, measurements))  # by measurement, host, then day; time order kept within each
        hosts, days, measurements, times = batch.host[order], days[order], measurements[order], batch.timestamp_ms[order].tolist()
        values = self._written(self._values(batch)[:, order])
        edges = np.flatnonzero((np.diff(measurements) != 0) | (np.diff(hosts) != 0) | (np.diff(days) != 0)) + 1
        requests: list[Any] = []
        for begin, end in zip([0, *edges.tolist()], [*edges.tolist(), len(order)]):
            measurement, day = int(measurements[begin]), int(days[begin])
            prefix = self.prefixes.of(measurement, int(hosts[begin]))
            for field, (name, integer) in enumerate(zip(self.fields[measurement], self.integers[measurement])):
                key, insert, points = series_id(prefix, name, day), self._inserts[integer], values[integer][field][begin:end]
                if end - begin == 1:
                    requests.append(insert.bind((key, times[begin], points[0])))
                    continue
                statement = BatchStatement(batch_type=BatchType.UNLOGGED)
                statement.is_idempotent = True
                for time_ms, value in zip(times[begin:end], points):
                    statement.add(insert, (key, time_ms, value))
                requests.append(statement)
        return TsbsBatch(requests, len(batch))

    def rows(self, batch: EventBatch) -> list[Any]:
        """Each row as one request: its points, one per field, in an UNLOGGED batch."""
        from cassandra.query import BatchStatement, BatchType

        assert batch.host is not None
        values = self._written(self._values(batch))
        requests = []
        for row, (host, time_ms, measurement) in enumerate(zip(batch.host.tolist(), batch.timestamp_ms.tolist(), self._measurements(batch).tolist())):
            statement = BatchStatement(batch_type=BatchType.UNLOGGED)
            statement.is_idempotent = True
            prefix, day = self.prefixes.of(measurement, host), time_ms // DAY_MS
            for field, (name, integer) in enumerate(zip(self.fields[measurement], self.integers[measurement])):
                statement.add(self._inserts[integer], (series_id(prefix, name, day), time_ms, values[integer][field][row]))
            requests.append(statement)
        return requests

    @staticmethod
    def _measurements(batch: EventBatch) -> np.ndarray:
        return batch.table_index if batch.table_index is not None else np.zeros(len(batch), dtype=np.int64)

    @staticmethod
    def _values(batch: EventBatch) -> np.ndarray:
        """(widest measurement's fields, rows) float64, NaN beyond a row's measurement's fields."""
        assert batch.more is not None  # the fields after the first
        return np.vstack([batch.temperature, *batch.more])

    def _written(self, values: np.ndarray) -> dict[bool, list[list[Any]]]:
        """The values as the driver binds them, per field and row: ints for bigint (TSBS's int64 values are
        whole numbers; the NaN padding beyond a measurement's fields is never read), floats for double."""
        written = {True: np.nan_to_num(values).astype(np.int64).tolist()}
        if False in self._inserts:
            written[False] = values.tolist()
        return written

    def send(self, requests: list[Any], concurrency: int, retry: Retry) -> None:
        """Every request, `concurrency` in flight; failed ones sent again as `retry` allows (raises the
        last error otherwise)."""
        from cassandra.concurrent import execute_concurrent

        attempt = 0
        while requests:
            results = execute_concurrent(self.session, [(request, None) for request in requests], concurrency=concurrency,
                                         raise_on_first_error=False)
            failed = [(request, outcome) for request, (ok, outcome) in zip(requests, results) if not ok]
            pauses = []
            for _, error in failed:  # each failed request is one retry (or the end)
                pause = retry.pause(error, attempt)
                if pause is None:
                    raise error
                pauses.append(pause)
            time.sleep(max(pauses, default=0.0))
            requests, attempt = [request for request, _ in failed], attempt + 1
