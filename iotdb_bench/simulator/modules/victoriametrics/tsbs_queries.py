"""TSBS's DevOps query types in MetricsQL, as TSBS's victoriametrics target writes them
(cmd/tsbs_generate_queries/databases/victoriametrics/devops.go), made exact, and their answers in the
common form of simulator/queries/tsbs_devops.py.

TSBS's texts: `max(max_over_time(<selector>[1m])) by (__name__)` (single-groupby, step 60 s; cpu-max-all
with [1h], step 3600 s) and `avg(avg_over_time(<selector>[1h])) by (__name__, hostname)` (double-groupby),
over `/api/v1/query_range` from the window's start to its end in whole seconds. A rollup evaluated at t
reads the samples in (t - window, t]: from a start at a random second, TSBS's buckets are neither the
minutes and hours its SQL targets group by nor bounded by the window. The tool keeps TSBS's expressions
and sets the times so that every bucket is exactly the SQL's, `[max(b, start), min(b + B, end))` for
the epoch-aligned bucket b of length B:
- the whole buckets in one range query, `step` B from the first one's start, each rollup
  `[B] offset -(B - 1 ms)`: evaluated at b it reads (b - 1 ms, b + B - 1 ms], i.e. [b, b + B) in
  milliseconds, and is labelled with b;
- the window's partial first and last buckets in one instant query: each its own expression, its
  lookbehind the bucket's part inside the window and its offset ending it there, labelled with its
  bucket (`label_set(..., "iotbench_bucket", "<b>")`).
Durations are written so that VictoriaMetrics reads them to the millisecond (durations.py).
So an execution is one or two requests (one when the window is whole buckets), both with `nocache=1`:
VictoriaMetrics would otherwise shift the times of answers of more than 50 points to fit its cache,
and serve cached answers that a later change to the data does not reach.

Refused (capabilities, TSBS's reasons): groupby-orderby-limit (MetricsQL orders a series' points by
time and cannot limit them to the latest five), lastpoint (a series' latest sample is found within a
lookback window only), high-cpu-1 and -all (MetricsQL returns values on a grid of steps, not the stored
rows with their other fields).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from iotdb_bench.simulator.modules.victoriametrics.durations import metricsql_ms
from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.queries.tsbs_devops import HOUR_MS, MINUTE_MS, DevopsQuery

REFUSED = (
    ("groupby-orderby-limit", "MetricsQL returns a series' points in time order and cannot order them newest first and keep the latest "
                              "five (TSBS's victoriametrics target has no such query)"),
    ("lastpoint", "MetricsQL finds a series' latest sample only within a lookback window, so a host's newest row older than that is not "
                  "found (TSBS's victoriametrics target has no lastpoint)"),
    ("high-cpu-1", "MetricsQL returns values on a grid of evaluation steps, not the stored rows with their other fields (TSBS's "
                   "victoriametrics target has no high-cpu queries)"),
    ("high-cpu-all", "MetricsQL returns values on a grid of evaluation steps, not the stored rows with their other fields (TSBS's "
                     "victoriametrics target has no high-cpu queries)"),
)
BUCKET_LABEL = "iotbench_bucket"
METRIC_PREFIX = "cpu_"  # VictoriaMetrics names a line protocol field's series <measurement>_<field>
Series = dict[str, Any]
Row = tuple[Any, ...]


@dataclass(frozen=True)
class Requests:
    """One execution's requests: a range query over the whole buckets (start, end, step in ms) and
    an instant query of the partial ones (its time in ms); either may be absent."""

    whole: tuple[str, int, int, int] | None
    partial: tuple[str, int] | None


def requests(query: DevopsQuery, parameters: Parameters) -> Requests:
    """The MetricsQL of one execution of single-groupby, cpu-max-all or double-groupby."""
    window: Window = parameters["window"]
    bucket = MINUTE_MS if query.family == "single-groupby" else HOUR_MS
    selector = _selector(query.fields, parameters["hosts"] if query.hosts else ())
    aggregate, rollup, by = ("avg", "avg_over_time", "__name__, hostname") if query.family == "double-groupby" else ("max", "max_over_time", "__name__")

    def expression(lookbehind_ms: int, offset_ms: int) -> str:
        return f"{aggregate}({rollup}({selector}[{metricsql_ms(lookbehind_ms)}] offset {metricsql_ms(offset_ms)})) by ({by})"

    first = window.start_ms - window.start_ms % bucket
    parts = [(start, max(start, window.start_ms), min(start + bucket, window.end_ms)) for start in range(first, window.end_ms, bucket)]
    whole = [start for start, low, high in parts if high - low == bucket]
    partial = [(start, low, high) for start, low, high in parts if high - low < bucket]
    ranged = (expression(bucket, -(bucket - 1)), whole[0], whole[-1], bucket) if whole else None
    if not partial:
        return Requests(ranged, None)
    at = partial[-1][0]  # evaluated at the last partial bucket: each expression's offset ends it at its own part's end
    instant = " or ".join(f'label_set({expression(high - low, at - (high - 1))}, "{BUCKET_LABEL}", "{start}")' for start, low, high in partial)
    return Requests(ranged, (instant, at))


def conversion(query: DevopsQuery) -> Callable[[Sequence[Series]], list[Row]]:
    """How the answers' series (the range query's, then the instant query's) become the common form's rows:
    (bucket, aggregates...) or, per host, (bucket, host, aggregates...)."""
    per_host = query.family == "double-groupby"
    names = [METRIC_PREFIX + name for name in query.fields]

    def rows(series: Sequence[Series]) -> list[Row]:
        cells: dict[tuple[int, ...] | tuple[int, str], dict[str, float]] = {}
        for one in series:
            labels = one["metric"]
            points = one.get("values") or [one["value"]]
            for time_s, value in points:
                at = int(labels[BUCKET_LABEL]) if BUCKET_LABEL in labels else round(float(time_s) * 1000)
                cells.setdefault((at, labels["hostname"]) if per_host else (at,), {})[labels["__name__"]] = float(value)
        return [(*key, *(found.get(name) for name in names)) for key, found in sorted(cells.items())]

    return rows


def _selector(fields: tuple[str, ...], hosts: Sequence[str]) -> str:
    """TSBS's getSelectClause: one metric by name, several by a regular expression; hosts by hostname."""
    host = "" if not hosts else f"hostname='{hosts[0]}'" if len(hosts) == 1 else f"hostname=~'{'|'.join(hosts)}'"
    if len(fields) == 1:
        return f"{METRIC_PREFIX}{fields[0]}{{{host}}}"
    return f"{{__name__=~'{METRIC_PREFIX}({'|'.join(fields)})'{', ' + host if host else ''}}}"
