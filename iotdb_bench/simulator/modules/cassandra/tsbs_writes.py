"""Writing TSBS's rows in TSBS's Cassandra layout (tsbs_series.py): a row of n fields is n points,
one in each of its fields' series (in series_bigint or series_double, as the field's type says).

A batch becomes one request per series and day it touches: an UNLOGGED batch of that partition's
points, a single-partition mutation (a lone point is a plain INSERT). TSBS's loader sends its whole
batch as one LOGGED multi-partition batch instead, which Cassandra refuses above
batch_size_fail_threshold (50 KiB by default: about 300 of these points). The requests of a batch go
out with `max_sync_calls` in flight and the batch is one timed call, from the first request sent to
the last acknowledged. A single insert is one row: its points in one UNLOGGED batch. Points are
upserts of their key, so failed requests are retried like the module's other writes. IoT's null
fields are no point; a row with a null tag goes to the series without that tag (tsbs_series.py).
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
        self.prefixes = SeriesPrefixes(seed, USE_CASES[shape])
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
        measurements, nulls = self._measurements(batch), self._null_tags(batch)
        order = np.lexsort((days, nulls, batch.host, measurements))  # by measurement, host, null tag, then day; time order kept within each
        hosts, days, measurements, nulls, times = batch.host[order], days[order], measurements[order], nulls[order], batch.timestamp_ms[order].tolist()
        raw = self._values(batch)[:, order]
        values, missing = self._written(raw), np.isnan(raw)
        edges = np.flatnonzero((np.diff(measurements) != 0) | (np.diff(hosts) != 0) | (np.diff(nulls) != 0) | (np.diff(days) != 0)) + 1
        requests: list[Any] = []
        for begin, end in zip([0, *edges.tolist()], [*edges.tolist(), len(order)]):
            measurement, day = int(measurements[begin]), int(days[begin])
            prefix = self.prefixes.of(measurement, int(hosts[begin]), int(nulls[begin]))
            for field, (name, integer) in enumerate(zip(self.fields[measurement], self.integers[measurement])):
                key, insert = series_id(prefix, name, day), self._inserts[integer]
                points = list(zip(times[begin:end], values[integer][field][begin:end]))
                if missing[field, begin:end].any():  # IoT's null fields: no point
                    points = [point for point, absent in zip(points, missing[field, begin:end].tolist()) if not absent]
                if len(points) <= 1:
                    requests += [insert.bind((key, *point)) for point in points]
                    continue
                statement = BatchStatement(batch_type=BatchType.UNLOGGED)
                statement.is_idempotent = True
                for point in points:
                    statement.add(insert, (key, *point))
                requests.append(statement)
        return TsbsBatch(requests, len(batch))

    def rows(self, batch: EventBatch) -> list[Any]:
        """Each row as one request: its points, one per field (IoT's null one left out), in an UNLOGGED batch."""
        from cassandra.query import BatchStatement, BatchType

        assert batch.host is not None
        raw = self._values(batch)
        values, missing = self._written(raw), np.isnan(raw)
        requests = []
        rows = zip(batch.host.tolist(), batch.timestamp_ms.tolist(), self._measurements(batch).tolist(), self._null_tags(batch).tolist())
        for row, (host, time_ms, measurement, null_tag) in enumerate(rows):
            statement = BatchStatement(batch_type=BatchType.UNLOGGED)
            statement.is_idempotent = True
            prefix, day = self.prefixes.of(measurement, host, null_tag), time_ms // DAY_MS
            for field, (name, integer) in enumerate(zip(self.fields[measurement], self.integers[measurement])):
                if not missing[field, row]:
                    statement.add(self._inserts[integer], (series_id(prefix, name, day), time_ms, values[integer][field][row]))
            requests.append(statement)
        return requests

    @staticmethod
    def _null_tags(batch: EventBatch) -> np.ndarray:
        """The tag each row leaves out (-1: none; IoT's null tags)."""
        return batch.null_tag if batch.null_tag is not None else np.full(len(batch), -1, dtype=np.int64)

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
        whole numbers; a NaN, padding beyond a measurement's fields or a null field, is never read), floats for double."""
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
