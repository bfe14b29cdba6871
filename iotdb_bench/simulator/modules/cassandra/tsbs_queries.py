"""TSBS's 15 DevOps query types on TSBS's Cassandra layout (tsbs_series.py).

Cassandra answers within one partition: a series' points of one day. As TSBS's query runner does
(cmd/tsbs_run_queries_cassandra), a query is one request per partition it reads, and the client
merges their answers; here the requests go out `query_concurrency` at a time and the merging is part
of the query's timed call. Each partition's part is aggregated by CQL where CQL's own aggregate is
exact (TSBS's "server" plan, but one request per partition instead of one per time bucket):

- single-groupby, cpu-max-all: `max(value) ... GROUP BY series_id, floor(time, 1m | 1h)` per host,
  field and day; the client takes the maximum over the hosts;
- double-groupby: `sum(value), count(value) ... GROUP BY series_id, floor(time, 1h)`, the mean
  sum / count on the client (CQL's avg of a bigint column is a truncated bigint, which TSBS's plan
  averages again across series);
- high-cpu: the usage_user points above the threshold (`value > 90 ALLOW FILTERING`, within one
  partition), then the other nine fields at those times (`time IN ...`), joined into rows on the client;
- lastpoint: each host's fields' newest point (`ORDER BY time DESC LIMIT 1`) in its newest day;
  the row is the newest time, with each field's value there;
- groupby-orderby-limit: each host's 5 latest minutes before the end (`GROUP BY ... ORDER BY time
  DESC LIMIT 5`), going back a day while short; the 5 latest of them, the maximum over the hosts.

The partitions come from the series index (`SELECT DISTINCT series_id`, TSBS's client-side index),
read before the first execution, outside the timed call (again when it does not know a host asked
for). A mixed run's queries read data still being written, whose series appear as they go: their
index is what the run writes (SeriesIndex.planned), so every execution reads its partitions,
written yet or not. `--query-timeout` bounds each request.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from iotdb_bench.simulator.checks.answers import Answer, with_times
from iotdb_bench.simulator.modules.cassandra.tsbs_series import DAY_MS, TABLE, SeriesIndex, days_between, series_id
from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.queries.tsbs_devops import HIGH_CPU_THRESHOLD, LATEST_MINUTES, DevopsQuery
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS

QUERY_PROFILE = "tsbs-queries"  # the execution profile whose request timeout is --query-timeout
TIMES_PER_REQUEST = 100  # clustering keys per `time IN (...)` request of high-cpu's second pass
FIRST = CPU_FIELDS[0]  # usage_user: high-cpu's and groupby-orderby-limit's field


class TsbsQueries:
    def __init__(self, session: Any, keyspace: str, concurrency: int, index_timeout: float, planned: SeriesIndex | None = None):
        """`planned`: the series of a run still writing them (a mixed run's); else the database's are read."""
        self.session, self.concurrency, self.index_timeout = session, concurrency, index_timeout
        self._planned = planned is not None
        table = f"{keyspace}.{TABLE}"
        self._index: SeriesIndex | None = planned
        self._listing = f"SELECT DISTINCT series_id FROM {table}"
        where = "WHERE series_id = ? AND time >= ? AND time < ?"
        self._max = {unit: self._prepare(f"SELECT floor(time, {unit}), max(value) FROM {table} {where} GROUP BY series_id, floor(time, {unit})")
                     for unit in ("1m", "1h")}
        self._sum_count = self._prepare(f"SELECT floor(time, 1h), sum(value), count(value) FROM {table} {where} GROUP BY series_id, floor(time, 1h)")
        self._above = self._prepare(f"SELECT time, value FROM {table} {where} AND value > ? ALLOW FILTERING")
        self._at_times = self._prepare(f"SELECT time, value FROM {table} WHERE series_id = ? AND time IN ?")
        self._newest = self._prepare(f"SELECT time, value FROM {table} WHERE series_id = ? ORDER BY time DESC LIMIT 1")
        self._latest_minutes = self._prepare(f"SELECT floor(time, 1m), max(value) FROM {table} WHERE series_id = ? AND time < ? "
                                             "GROUP BY series_id, floor(time, 1m) ORDER BY time DESC LIMIT ?")

    def _prepare(self, cql: str) -> Any:
        return self.session.prepare(cql)

    def query(self, kind: DevopsQuery, parameters: Parameters) -> Callable[[], Answer]:
        """One execution: the series index read (untimed) and the query to time."""
        hosts: tuple[str, ...] = parameters["hosts"] if kind.hosts else ()
        index = self._series(hosts)
        chosen = list(hosts) if kind.hosts else index.hosts
        window: Window = parameters["window"] if kind.window_ms else Window(0, 0)
        if kind.family in ("single-groupby", "cpu-max-all"):
            unit = "1m" if kind.family == "single-groupby" else "1h"
            return lambda: self._max_per_bucket(index, chosen, kind.fields, window, unit)
        if kind.family == "double-groupby":
            return lambda: self._mean_per_host_and_hour(index, chosen, kind.fields, window)
        if kind.family == "high-cpu":
            return lambda: self._high_cpu(index, chosen, window)
        if kind.family == "lastpoint":
            return lambda: self._last_points(index, chosen)
        return lambda: self._latest_minutes_max(index, chosen, window.end_ms)

    def _series(self, hosts: Sequence[str]) -> SeriesIndex:
        """TSBS's client-side index: read once, and again when it does not know a host asked for."""
        from cassandra.query import SimpleStatement

        if self._index is None or not (self._planned or self._index.knows(hosts)):
            listing = SimpleStatement(self._listing, fetch_size=5000)
            self._index = SeriesIndex.of(row[0] for row in self.session.execute(listing, timeout=self.index_timeout))
        return self._index

    def _run(self, statement: Any, arguments: list[tuple[Any, ...]]) -> list[list[Any]]:
        return fetch_all(self.session, [(statement, one) for one in arguments], self.concurrency)

    # -- the families ------------------------------------------------------------------------
    def _max_per_bucket(self, index: SeriesIndex, hosts: list[str], fields: Sequence[str], window: Window, unit: str) -> Answer:
        arguments, field_of = [], []
        for host in _known(index, hosts):
            for position, name in enumerate(fields):
                for day in days_between(window.start_ms, window.end_ms):
                    arguments.append((series_id(index.prefixes[host], name, day), window.start_ms, window.end_ms))
                    field_of.append(position)
        maxima: dict[Any, list[Any]] = {}
        for position, rows in zip(field_of, self._run(self._max[unit], arguments)):
            for bucket, found in rows:
                row = maxima.setdefault(bucket, [None] * len(fields))
                row[position] = found if row[position] is None else max(row[position], found)
        return Answer([(bucket, *found) for bucket, found in sorted(maxima.items())], with_times(0))

    def _mean_per_host_and_hour(self, index: SeriesIndex, hosts: list[str], fields: Sequence[str], window: Window) -> Answer:
        arguments, keys = [], []
        for host in _known(index, hosts):
            for position, name in enumerate(fields):
                for day in days_between(window.start_ms, window.end_ms):
                    arguments.append((series_id(index.prefixes[host], name, day), window.start_ms, window.end_ms))
                    keys.append((host, position))
        sums: dict[tuple[Any, str], list[list[int]]] = {}
        for (host, position), rows in zip(keys, self._run(self._sum_count, arguments)):
            for hour, total, count in rows:
                cell = sums.setdefault((hour, host), [[0, 0] for _ in fields])[position]
                cell[0] += total
                cell[1] += count
        rows = [(hour, host, *(total / count if count else None for total, count in cells)) for (hour, host), cells in sorted(sums.items())]
        return Answer(rows, with_times(0))

    def _high_cpu(self, index: SeriesIndex, hosts: list[str], window: Window) -> Answer:
        partitions = [(host, day) for host in _known(index, hosts) for day in days_between(window.start_ms, window.end_ms)]
        threshold = math.floor(HIGH_CPU_THRESHOLD)  # a whole number is above 90.0 exactly when it is above 90
        above = self._run(self._above, [(series_id(index.prefixes[host], FIRST, day), window.start_ms, window.end_ms, threshold)
                                        for host, day in partitions])
        found: dict[tuple[Any, str], list[Any]] = {}
        arguments, keys = [], []
        for (host, day), rows in zip(partitions, above):
            for time, value in rows:
                found[(time, host)] = [value, *[None] * (len(CPU_FIELDS) - 1)]
            times = [time for time, _ in rows]
            for first in range(0, len(times), TIMES_PER_REQUEST):
                for position, name in enumerate(CPU_FIELDS[1:], 1):
                    arguments.append((series_id(index.prefixes[host], name, day), times[first : first + TIMES_PER_REQUEST]))
                    keys.append((host, position))
        for (host, position), rows in zip(keys, self._run(self._at_times, arguments)):
            for time, value in rows:
                found[(time, host)][position] = value
        return Answer([(time, host, *values) for (time, host), values in sorted(found.items())], with_times(0))

    def _last_points(self, index: SeriesIndex, hosts: list[str]) -> Answer:
        """Each host's newest time among its fields' newest points, with each field's value there."""
        newest: dict[tuple[str, int], Any] = {}  # (host, field) -> its newest (time, value)
        pending = [(host, position, sorted(index.days[host], reverse=True)) for host in _known(index, hosts) for position in range(len(CPU_FIELDS))]
        while pending:  # the newest day first; an earlier day only where a field has nothing in it
            rows = self._run(self._newest, [(series_id(index.prefixes[host], CPU_FIELDS[position], days[0]),) for host, position, days in pending])
            for (host, position, _), found in zip(pending, rows):
                if found:
                    newest[(host, position)] = found[0]
            pending = [(host, position, days[1:]) for host, position, days in pending if (host, position) not in newest and days[1:]]
        answer = []
        for host in _known(index, hosts):
            points = [newest.get((host, position)) for position in range(len(CPU_FIELDS))]
            if all(point is None for point in points):
                continue
            last = max(point[0] for point in points if point is not None)
            answer.append((host, last, *(point[1] if point is not None and point[0] == last else None for point in points)))
        return Answer(answer, with_times(1))

    def _latest_minutes_max(self, index: SeriesIndex, hosts: list[str], end_ms: int) -> Answer:
        """The maximum of usage_user per minute over the 5 latest minutes with points before `end_ms`:
        each of them is among the 5 latest of every host that has points in it."""
        last_day = (end_ms - 1) // DAY_MS
        pending = [(host, sorted((day for day in index.days[host] if day <= last_day), reverse=True), LATEST_MINUTES)
                   for host in _known(index, hosts)]
        pending = [entry for entry in pending if entry[1]]
        maxima: dict[Any, Any] = {}
        while pending:
            rows = self._run(self._latest_minutes, [(series_id(index.prefixes[host], FIRST, days[0]), end_ms, wanted)
                                                     for host, days, wanted in pending])
            short = []
            for (host, days, wanted), found in zip(pending, rows):
                for minute, value in found:
                    maxima[minute] = value if minute not in maxima else max(maxima[minute], value)
                if len(found) < wanted and days[1:]:
                    short.append((host, days[1:], wanted - len(found)))
            pending = short
        latest = sorted(maxima, reverse=True)[:LATEST_MINUTES]
        return Answer([(minute, maxima[minute]) for minute in latest], with_times(0))


def fetch_all(session: Any, requests: list[tuple[Any, tuple[Any, ...]]], concurrency: int) -> list[list[Any]]:
    """Each (statement, arguments) request's rows (every page), `concurrency` requests at a time, each
    bound by --query-timeout (QUERY_PROFILE)."""
    from cassandra.concurrent import execute_concurrent

    results = execute_concurrent(session, requests, concurrency=concurrency, raise_on_first_error=True, execution_profile=QUERY_PROFILE)
    return [list(rows) for _ok, rows in results]


def _known(index: SeriesIndex, hosts: Iterable[str]) -> list[str]:
    """The hosts the index knows (one with no series has nothing to read; the answer's check says so)."""
    return [host for host in hosts if host in index.prefixes]
