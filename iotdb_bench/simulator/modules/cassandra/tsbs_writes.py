"""Writing TSBS's rows in TSBS's Cassandra layout (tsbs_series.py): a row of ten fields is ten points,
one in each of its fields' series.

A batch becomes one request per series and day it touches: an UNLOGGED batch of that partition's
points, a single-partition mutation (a lone point is a plain INSERT). TSBS's loader sends its whole
batch as one LOGGED multi-partition batch instead, which Cassandra refuses above
batch_size_fail_threshold (50 KiB by default: about 300 of these points). The requests of a batch go
out with `max_sync_calls` in flight and the batch is one timed call, from the first request sent to
the last acknowledged. A single insert is one row: its ten points in one UNLOGGED batch. Points are
upserts of their key, so failed requests are retried like the module's other writes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from iotdb_bench.simulator.modules.cassandra.tsbs_series import DAY_MS, TABLE, HostPrefixes, series_id
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.tsbs.usecases import USE_CASES


@dataclass(frozen=True)
class TsbsBatch:
    requests: list[Any]  # one statement per series and day
    rows: int


class TsbsWrites:
    def __init__(self, session: Any, keyspace: str, seed: int, shape: str):
        self.session = session
        self.prefixes = HostPrefixes(seed)
        self.fields = USE_CASES[shape].measurements[0].field_names
        self._insert = session.prepare(f"INSERT INTO {keyspace}.{TABLE} (series_id, time, value) VALUES (?, ?, ?)")
        self._insert.is_idempotent = True

    def prepare(self, batch: EventBatch) -> TsbsBatch:
        """One request per series and day of the batch's rows."""
        from cassandra.query import BatchStatement, BatchType

        assert batch.host is not None  # a TSBS shape's batch
        days = batch.timestamp_ms // DAY_MS
        order = np.lexsort((days, batch.host))  # by host, then day; time order kept within each (a stable sort)
        hosts, days, times = batch.host[order], days[order], batch.timestamp_ms[order].tolist()
        values = self._values(batch)[:, order].tolist()
        edges = np.flatnonzero((np.diff(hosts) != 0) | (np.diff(days) != 0)) + 1
        requests: list[Any] = []
        for begin, end in zip([0, *edges.tolist()], [*edges.tolist(), len(order)]):
            prefix, day = self.prefixes.of(int(hosts[begin])), int(days[begin])
            for name, column in zip(self.fields, values):
                key = series_id(prefix, name, day)
                if end - begin == 1:
                    requests.append(self._insert.bind((key, times[begin], column[begin])))
                    continue
                statement = BatchStatement(batch_type=BatchType.UNLOGGED)
                statement.is_idempotent = True
                for position in range(begin, end):
                    statement.add(self._insert, (key, times[position], column[position]))
                requests.append(statement)
        return TsbsBatch(requests, len(batch))

    def rows(self, batch: EventBatch) -> list[Any]:
        """Each row as one request: its points, one per field, in an UNLOGGED batch."""
        from cassandra.query import BatchStatement, BatchType

        assert batch.host is not None
        values = self._values(batch).T.tolist()
        requests = []
        for host, time_ms, row in zip(batch.host.tolist(), batch.timestamp_ms.tolist(), values):
            statement = BatchStatement(batch_type=BatchType.UNLOGGED)
            statement.is_idempotent = True
            prefix, day = self.prefixes.of(host), time_ms // DAY_MS
            for name, value in zip(self.fields, row):
                statement.add(self._insert, (series_id(prefix, name, day), time_ms, value))
            requests.append(statement)
        return requests

    @staticmethod
    def _values(batch: EventBatch) -> np.ndarray:
        """(fields, rows) int64: TSBS's values are whole numbers (bigint)."""
        assert batch.more is not None  # the nine fields after the first
        return np.vstack([batch.temperature, *batch.more]).astype(np.int64)

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
