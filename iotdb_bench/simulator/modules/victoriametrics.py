"""VictoriaMetrics (single node) over its HTTP API, with httpx.

A metrics store keeps samples (series, timestamp, float value), so events are mapped to series:
one series per device and table, `<table>_temperature{device_id="..."}` (`events_temperature`, or
`events0_temperature`..`events3_temperature` with --tables multiple), one sample per event. The
sequence number is not a measurement: it is dropped by default; `store_sequence_number=true` writes it
as a second series `<table>_sequence_number` (a float sample, exact up to 2^53), which doubles the
samples. An event has no identity beyond (series, timestamp): no primary key can be stored (a key
label would make a series per event), so `--primary-key db` (the default) and `none` mean the same
and the other modes are refused.

Ingestion (`ingestion` option), one HTTP request per call, its body built outside the timed call:
- `import` (default): `POST /api/v1/import`, JSON lines, one line per series of the batch with its
  values and millisecond timestamps (single inserts: one line per event);
- `influx`: `POST /write?precision=ms`, InfluxDB line protocol, one line per event
  (`events,device_id=... temperature=...`); VictoriaMetrics names the series `<measurement>_<field>`,
  the same series as `import`.

Samples are buffered in memory before they are searchable: `count()` first calls
`/internal/force_flush`, and the count check after a run repeats it until every acknowledged sample is
counted (bounded by `visible_wait_s`: series created by the run were seen to stay unfound for up to
10 s after the flush), reporting the wait. The data lies in the past (events start 2026-01-01), so the
server's `-retentionPeriod` must reach back that far (the default, one month, drops older samples silently):
`setup()` reads the server's flags from /metrics and refuses to run when it does not, or when
`-dedup.minScrapeInterval` is set (it would merge a device's samples). Queries are MetricsQL instant
queries (`/api/v1/query`, `nocache=1`) whose window covers every time an event can have: from the
generator's origin to now + 2 days (the newest timestamp VictoriaMetrics accepts).

Workloads (simulator/shapes.py): `--measurements N` writes each further measurement as a series of its
own, `<table>_m1`..`<table>_m{N-1}` beside `<table>_temperature` (N samples per event; the count check
counts the temperature samples, one per event); `--sensors M` adds the label `sensor` (a series per
device and sensor). Seed 002's shapes (slim, light, large) are refused: their rows have no device to
name a series by (every worker's rows would fall into one series), large's text is no number, and
light's key and secondary index have no place in a metrics store. --commit-interval is refused: there
are no transactions.

Reading back: the six queries' answers in the common form; device-downsample is a range query
(`/api/v1/query_range`, step 1m) of `min/avg/max_over_time(...[1m] offset -59999ms)`, whose window at
each minute m is exactly [m, m + 1 min) in milliseconds. Scans stream `/api/v1/export` line by line,
`max_rows_per_line` = the page size (each line a page of one series, in time order). A metrics store
keeps no text, so the record of expected answers is kept as samples: the zlib-compressed record,
four bytes per sample (exact integers), in the series `iotbench_expected{tables="<tables>"}`; each
save writes a new block (a length sample, then the data) ten minutes of sample times after the last
one, and the newest complete block is the record (VictoriaMetrics cannot overwrite a sample). Old
blocks stay: a few kB each.
"""

from __future__ import annotations

import json
import logging
import re
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any, Literal
from urllib.parse import urlsplit

import numpy as np
from pydantic import Field

from iotdb_bench.simulator.answers import Answer
from iotdb_bench.simulator.capabilities import Capabilities, No
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.events import TIME_ORIGIN_MS, EventBatch
from iotdb_bench.simulator.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import RECORD_NAME, HttpUrl, ModuleError, ModuleOptions, OneClassModule, Query
from iotdb_bench.simulator.report import IngestionWait
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.wire.http_post import HttpPoster, PostFailed

log = logging.getLogger("victoriametrics")

DAY_S = 86_400
# VictoriaMetrics refuses samples more than two days ahead of its clock.
FUTURE_LIMIT_S = 2 * DAY_S
RETENTION_UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": DAY_S, "w": 7 * DAY_S, "y": 365 * DAY_S}
MONTH_S = 31 * DAY_S
ENDPOINTS = {"import": "/api/v1/import", "influx": "/write"}
# How long VictoriaMetrics serves a rendered copy of /metrics before rendering it again.
METRICS_CACHE_S = 1.0
# The server-wide counter of samples received per ingestion protocol (/metrics).
# The record's blocks: one every RECORD_BLOCK_MS of sample time from the origin, four bytes per sample.
RECORD_BLOCK_MS = 10 * MINUTE_MS
RECORD_BYTES_PER_SAMPLE = 4
INSERTED_COUNTER = {"import": 'vm_rows_inserted_total{type="vmimport"}', "influx": 'vm_rows_inserted_total{type="influx"}'}


class VictoriametricsOptions(ModuleOptions):
    url: HttpUrl = "http://localhost:8428"
    ingestion: Literal["import", "influx"] = Field("import", description="/api/v1/import JSON lines, or InfluxDB line protocol on /write")
    store_sequence_number: bool = Field(False, description="write each event's sequence number as a second series")
    timeout: float = Field(60.0, gt=0, description="seconds one HTTP call may take")
    visible_wait_s: float = Field(30, ge=0, description="longest wait, after a run, for every acknowledged sample to be searchable")
    visible_poll_s: float = Field(0.1, gt=0, description="seconds between counts while waiting")


class VictoriaMetricsError(Exception):
    """The server refused a call, or the call got no answer."""


class Module(OneClassModule):
    Options = VictoriametricsOptions
    options: VictoriametricsOptions
    capabilities = Capabilities(
        primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none}), measurements=True, sensors=True,
        transactions=No("a metrics store has no transactions to commit every S seconds"),
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._client = None
        self._poster: HttpPoster | None = None
        tables = self.spec.table_names
        self._temperature = [f"{table}_temperature" for table in tables]
        # The measured values of an event, each a series of its own: temperature, m1...
        self._measures = [column for column in self.layout.columns if column.kind == "float"]
        # --clean removes every series of the run's tables, whatever this run stores (sequence numbers,
        # measurements of an earlier run): a table is its series.
        self._metrics = [f"{table}_.+" for table in tables]

    def validate(self) -> None:
        if self.spec.shape != "events":
            raise ModuleError(
                f"module 'victoriametrics' does not support --schema {self.spec.shape}: a metrics store keeps numeric samples of series "
                "named by their labels, and these rows have no device to name a series by (use --schema events)"
            )
        self.validate_workload()
        if self.spec.primary_key not in self.capabilities.primary_keys:
            raise ModuleError(
                f"module 'victoriametrics' does not support --primary-key {self.spec.primary_key.value}: a sample is identified by its "
                "series and time only (db and none mean the same)"
            )

    # -- how the module describes its runs -------------------------------------------------
    def batch_kind(self) -> str:
        return "/api/v1/import request" if self.options.ingestion == "import" else "line protocol request"

    def notes(self) -> list[str]:
        names = [column.name for column in self._measures] + (["sequence number"] if self.options.store_sequence_number else [])
        samples = f"{len(names)} samples per event ({', '.join(names)})" if len(names) > 1 else "one sample per event (temperature)"
        series = "one series per device, sensor and value" if self.spec.sensors > 1 else "one series per device and value"
        return [f"VictoriaMetrics stores {samples}, {series}",
                "inserts/s counts acknowledged samples; the time until all were found by queries is reported separately"]

    @property
    def samples_per_event(self) -> int:
        return len(self._measures) + (1 if self.options.store_sequence_number else 0)

    # -- lifecycle -------------------------------------------------------------------------
    def server_address(self) -> tuple[str, int] | None:
        return self.url_address(self.options.url, 8428)

    def connect(self) -> None:
        import httpx

        self._client = httpx.Client(base_url=self.options.url, timeout=self.options.timeout)
        try:
            self._client.get("/health").raise_for_status()
        except (httpx.ConnectError, httpx.ConnectTimeout) as error:
            self.close()
            raise ModuleError(f"cannot connect to VictoriaMetrics at {self._address()}: {one_line(error)}") from None
        except httpx.HTTPError as error:
            self.close()
            raise ModuleError(f"the server at {self._address()} does not answer like VictoriaMetrics: {one_line(error)}") from None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._poster is not None:
            self._poster.close()
            self._poster = None

    def _address(self) -> str:
        parts = urlsplit(self.options.url)
        return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"

    def _request(self, what: str, method: str, path: str, **kwargs) -> Any:
        """One call; a refusal or a call without answer raises VictoriaMetricsError naming `what`."""
        import httpx

        try:
            response = self._client.request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise VictoriaMetricsError(f"{what} timed out") from None
        except httpx.TransportError as error:
            raise VictoriaMetricsError(f"{what} failed: {one_line(error)}") from None
        if response.status_code >= 300:
            raise VictoriaMetricsError(f"{what} failed with {response.status_code}: {one_line(response.text, limit=300)}")
        return response

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        self._check_flags(_flags(self._request("reading /metrics", "GET", "/metrics").text))
        if self.spec.clean:
            self._request("deleting the run's series", "POST", "/api/v1/admin/tsdb/delete_series", data={"match[]": self._selector(self._metrics)})

    def _check_flags(self, flags: dict[str, str]) -> None:
        """Refuse a server that would drop the run's samples: a retention that does not reach back to
        the events' times, or deduplication."""
        retention = flags.get("retentionPeriod")
        if retention is None:
            log.warning("VictoriaMetrics at %s does not show its flags on /metrics: retention not checked", self._address())
        else:
            kept_s = _retention_seconds(retention)
            needed_s = time.time() - TIME_ORIGIN_MS / 1000
            if kept_s is not None and kept_s < needed_s:
                raise ModuleError(
                    f"VictoriaMetrics at {self._address()} keeps samples for -retentionPeriod={retention}, but the events start at "
                    f"2026-01-01 ({needed_s / DAY_S:.0f} days ago) and would be dropped: start it with -retentionPeriod=100y"
                )
        dedup = flags.get("dedup.minScrapeInterval", "0s")
        if dedup not in ("0s", "0", ""):
            raise ModuleError(f"VictoriaMetrics at {self._address()} deduplicates samples (-dedup.minScrapeInterval={dedup}), which merges a "
                              "device's events: run it without that flag")

    def server_version(self) -> str | None:
        """From the vm_app_version metric; Debian's build leaves its version label empty and says so."""
        metrics = self._request("reading /metrics", "GET", "/metrics").text
        found = re.search(r'^vm_app_version\{version="([^"]*)"', metrics, re.MULTILINE)
        version = found.group(1) if found else ""
        return f"VictoriaMetrics {version}" if version else "VictoriaMetrics (this build does not report its version)"

    def count(self) -> int:
        """Temperature samples of the run's series, after the server flushed its in-memory buffers."""
        self._request("flushing", "GET", "/internal/force_flush")
        result = self._instant(f"sum(count_over_time({self._selector(self._temperature)}[{{window}}]))")
        return round(float(result[0]["value"][1])) if result else 0

    def wait_for_count(self, expected: int, run_ended_at: float) -> IngestionWait:
        """Acknowledged samples are searchable after a flush, but series the run created were seen to
        stay unfound for up to 10 s: count (each time after a flush) until all are there, bounded."""
        return self.count_until(expected, run_ended_at, self.options.visible_wait_s, self.options.visible_poll_s)

    def server_counters(self) -> dict[str, int] | None:
        """Events as the server counted them: its samples received over the run's protocol (server-wide,
        so other clients' writes count too) divided by the samples per event. VictoriaMetrics renders
        /metrics at most once a second and serves that copy meanwhile: the second of two reads a
        second apart is rendered after the first was asked for."""
        self._request("reading /metrics", "GET", "/metrics")
        time.sleep(METRICS_CACHE_S + 0.05)
        metrics = self._request("reading /metrics", "GET", "/metrics").text
        name = INSERTED_COUNTER[self.options.ingestion]
        for line in metrics.splitlines():
            if line.startswith(name + " "):
                return {"events_inserted_server_wide": int(float(line.split()[-1])) // self.samples_per_event}
        return None

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> bytes:
        if self.options.ingestion == "influx":
            return text_rows.compact(self._line_protocol(batch))
        return b"".join(self._import_lines(table, part) for table, part in self.per_table(batch))

    def insert_batch(self, prepared: bytes) -> None:
        self._write(prepared)

    def prepare_single(self, batch: EventBatch) -> list[bytes]:
        rows = self._line_protocol(batch) if self.options.ingestion == "influx" else self._import_event_lines(batch)
        return [row[row != 0].tobytes() for row in rows]

    def insert_single(self, item: bytes) -> None:
        self._write(item)

    def _write(self, body: bytes) -> None:
        # The timed call: through the standard library's client (simulator/wire/http_post.py), a
        # tenth of httpx's client CPU per request; the other calls keep httpx.
        if self._poster is None:
            self._poster = HttpPoster(str(self.options.url), self.options.timeout)
        try:
            self._poster.post(ENDPOINTS[self.options.ingestion], body, {"precision": "ms"} if self.options.ingestion == "influx" else None)
        except PostFailed as error:
            raise VictoriaMetricsError(f"write {error}") from None

    def _table_names(self, batch: EventBatch) -> np.ndarray:
        names = np.array(self.spec.table_names, dtype="S")
        return names[batch.device_index % len(names)]

    def _line_protocol(self, batch: EventBatch) -> np.ndarray:
        """One line per event: `<table>,device_id=<id>[,sensor=<k>] temperature=<t>[,m1=..][,sequence_number=<n>i] <ms>`."""
        columns = [text_rows.fixed(self._table_names(batch)), text_rows.constant(",device_id="), text_rows.fixed(batch.device_id)]
        if batch.sensor_index is not None:
            columns += [text_rows.constant(",sensor="), text_rows.integers(batch.sensor_index)]
        for position, column in enumerate(self._measures):
            columns += [text_rows.constant((" " if position == 0 else ",") + f"{column.name}="), text_rows.decimals(column.values(batch))]
        if self.options.store_sequence_number:
            columns += [text_rows.constant(",sequence_number="), text_rows.integers(batch.sequence_number), text_rows.constant("i")]
        columns += [text_rows.constant(" "), text_rows.integers(batch.timestamp_ms), text_rows.constant("\n")]
        return text_rows.text_rows(columns, len(batch))

    def _import_lines(self, table: str, batch: EventBatch) -> bytes:
        """JSON lines for /api/v1/import: one per series of the batch, its values and timestamps in the
        batch's order (a Python loop per series, none per event)."""
        sensors = batch.sensor_index
        series = batch.device_index if sensors is None else batch.device_index * self.spec.sensors + sensors
        order = np.argsort(series, kind="stable")
        ordered = series[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        ends = np.r_[starts[1:], len(order)]
        timestamps = _separated(text_rows.integers(batch.timestamp_ms[order]))
        values = [(f"{table}_{column.name}", _separated(text_rows.decimals(column.values(batch)[order]))) for column in self._measures]
        if self.options.store_sequence_number:
            values.append((f"{table}_sequence_number", _separated(text_rows.integers(batch.sequence_number[order]))))
        lines = []
        for start, end in zip(starts.tolist(), ends.tolist()):
            labels = f'"device_id":"{batch.device_id[order[start]].decode()}"'
            if sensors is not None:
                labels += f',"sensor":"{sensors[order[start]]}"'
            times = text_rows.compact(timestamps[start:end])[:-1].decode()
            for name, text in values:
                lines.append(f'{{"metric":{{"__name__":"{name}",{labels}}},'
                             f'"values":[{text_rows.compact(text[start:end])[:-1].decode()}],"timestamps":[{times}]}}\n')
        return "".join(lines).encode()

    def _import_event_lines(self, batch: EventBatch) -> np.ndarray:
        """One row per event holding its JSON line(s) for /api/v1/import (single inserts)."""

        sensor = [] if batch.sensor_index is None else [text_rows.constant('","sensor":"'), text_rows.integers(batch.sensor_index)]

        def line(metric: str, value: np.ndarray) -> list[np.ndarray]:
            return [text_rows.constant('{"metric":{"__name__":"'), text_rows.fixed(self._table_names(batch)), text_rows.constant(f'_{metric}","device_id":"'),
                    text_rows.fixed(batch.device_id), *sensor, text_rows.constant('"},"values":['), value,
                    text_rows.constant('],"timestamps":['), text_rows.integers(batch.timestamp_ms), text_rows.constant("]}\n")]

        columns = [part for column in self._measures for part in line(column.name, text_rows.decimals(column.values(batch)))]
        if self.options.store_sequence_number:
            columns += line("sequence_number", text_rows.integers(batch.sequence_number))
        return text_rows.text_rows(columns, len(batch))

    # -- the record of expected answers ------------------------------------------------------
    def store_record(self, text: str) -> None:
        data = zlib.compress(text.encode())
        blocks = self._record_blocks()
        start = TIME_ORIGIN_MS + (max(blocks) + 1 if blocks else 0) * RECORD_BLOCK_MS
        padded = data + bytes(-len(data) % RECORD_BYTES_PER_SAMPLE)
        values = [len(data), *np.frombuffer(padded, dtype=">u4").tolist()]
        if len(values) > RECORD_BLOCK_MS:
            raise ModuleError(f"the record of expected answers ({len(data):,} bytes compressed) does not fit one block of samples")
        line = {"metric": {"__name__": RECORD_NAME, "tables": self.record_key()}, "values": values,
                "timestamps": list(range(start, start + len(values)))}
        self._request("saving the record of expected answers", "POST", "/api/v1/import", content=json.dumps(line).encode())
        self._request("flushing", "GET", "/internal/force_flush")

    def stored_record(self) -> str | None:
        self._request("flushing", "GET", "/internal/force_flush")
        for index, (times, values) in sorted(self._record_blocks().items(), reverse=True):
            length = int(values[0])
            needed = 1 + -(-length // RECORD_BYTES_PER_SAMPLE)
            if len(values) == needed and times == list(range(times[0], times[0] + needed)):  # whole: every sample is in
                data = np.array(values[1:], dtype=">u4").tobytes()[:length]
                return zlib.decompress(data).decode()
            log.warning("record block %d is incomplete (%d of %d samples): an older one is read", index, len(values), needed)
        return None

    def _record_blocks(self) -> dict[int, tuple[list[int], list[int]]]:
        """The record's blocks by index: (sample times, values), in time order."""
        selector = f'{RECORD_NAME}{{tables="{self.record_key()}"}}'
        times: list[int] = []
        values: list[int] = []
        for line in self._export(selector, 100_000):
            times += line["timestamps"]
            values += [int(value) for value in line["values"]]
        blocks: dict[int, tuple[list[int], list[int]]] = {}
        for at, value in sorted(zip(times, values)):
            block = blocks.setdefault((at - TIME_ORIGIN_MS) // RECORD_BLOCK_MS, ([], []))
            block[0].append(at)
            block[1].append(value)
        return blocks

    def _export(self, selector: str, rows_per_line: int) -> Iterator[dict]:
        """/api/v1/export of the series `selector` selects, streamed: one JSON line (one series' samples,
        at most `rows_per_line`, in time order) at a time."""
        import httpx

        params = {"match[]": selector, "max_rows_per_line": str(rows_per_line), "start": str(TIME_ORIGIN_MS // 1000 - DAY_S),
                  "end": f"{time.time() + FUTURE_LIMIT_S:.0f}"}
        try:
            with self._client.stream("GET", "/api/v1/export", params=params) as response:
                if response.status_code >= 300:
                    raise VictoriaMetricsError(f"export failed with {response.status_code}: {one_line(response.read().decode(), limit=300)}")
                for line in response.iter_lines():
                    if line:
                        yield json.loads(line)
        except httpx.TransportError as error:
            raise VictoriaMetricsError(f"export failed: {one_line(error)}") from None

    # -- queries ---------------------------------------------------------------------------
    def queries(self) -> dict[str, Query]:
        series = self._selector(self._temperature)

        def over(function: str) -> str:
            return f"{function}({series}[{{window}}])"

        def named(**expressions: str) -> str:
            """Several results in one answer, each series labelled `stat` with its name."""
            return "union(" + ", ".join(f'label_set({expression}, "stat", "{name}")' for name, expression in expressions.items()) + ")"

        # Each minute m's window is (m + 59,999 ms - 1 min, m + 59,999 ms]: [m, m + 1 min) in milliseconds.
        device = '{__name__=~"' + "|".join(self._temperature) + f'", device_id="{DOWNSAMPLE_DEVICE}"}}'
        minute = {name: f"{name}_over_time({device}[1m] offset -59999ms)" for name in ("min", "avg", "max")}
        return {
            "count-events": self._query(f"sum({over('count_over_time')})", lambda result: [(round(value),) for (value,) in one_row(result)]),
            "temperature-min-max": self._query(named(min=f"min({over('min_over_time')})", max=f"max({over('max_over_time')})"),
                                               ordered("min", "max")),
            "temperature-stats": self._query(named(
                min=f"min({over('min_over_time')})",
                avg=f"sum({over('sum_over_time')}) / sum({over('count_over_time')})",
                max=f"max({over('max_over_time')})"), ordered("min", "avg", "max")),
            "temperature-stats-per-device": self._query(named(
                min=over("min_over_time"), avg=over("avg_over_time"), max=over("max_over_time")), ordered("min", "avg", "max", per_device=True)),
            # The newest sample of each series: its value and (tlast_over_time) its own time, in seconds.
            "newest-per-device": self._query(named(value=over("last_over_time"), time=over("tlast_over_time")),
                                             lambda result: [(d, round(t * 1000), v) for d, t, v in ordered("time", "value", per_device=True)(result)]),
            "device-downsample": self._range_query(named(**minute), DOWNSAMPLE_START_MS, DOWNSAMPLE_START_MS + (DOWNSAMPLE_MINUTES - 1) * MINUTE_MS),
        }

    def _query(self, expression: str, rows: Callable[[list[dict]], list[tuple]]) -> Query:
        def run() -> Answer:
            return Answer(self._instant(expression, bounded=True), rows)

        return run

    def _range_query(self, expression: str, start_ms: int, end_ms: int) -> Query:
        def run() -> Answer:
            params = {"query": expression, "start": f"{start_ms / 1000:.3f}", "end": f"{end_ms / 1000:.3f}", "step": "60s", "nocache": "1"}
            return Answer(self._answer(params, "/api/v1/query_range", bounded=True), per_minute)

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        self._request("flushing", "GET", "/internal/force_flush")
        params = {"match[]": self._selector(self._temperature), "start": str(TIME_ORIGIN_MS // 1000 - DAY_S),
                  "end": f"{time.time() + FUTURE_LIMIT_S:.0f}"}
        # The series API, not label values: those may still list the labels of deleted series.
        answer = self._request("listing the devices", "GET", "/api/v1/series", params=params).json()
        return sorted({series["device_id"] for series in answer["data"]})

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # A device is one series (a device always writes to the same table): one line per page.
        selector = '{__name__=~"' + "|".join(self._temperature) + f'", device_id="{device}"}}'
        for line in self._export(selector, page_size):
            yield np.array(line["timestamps"], dtype=np.int64)

    def _instant(self, expression: str, bounded: bool = False) -> list[dict]:
        """An instant MetricsQL query evaluated after the newest possible event, `{window}` in the
        expression replaced by a window reaching back before the oldest (the data lies in the past).
        `bounded`: one of the run's queries, which --query-timeout limits (counts are not)."""
        at = time.time() + FUTURE_LIMIT_S
        window_s = int(at - TIME_ORIGIN_MS / 1000) + DAY_S
        params = {"query": expression.replace("{window}", f"{window_s}s"), "time": f"{at:.3f}", "nocache": "1"}
        return self._answer(params, "/api/v1/query", bounded)

    def _answer(self, params: dict[str, str], path: str, bounded: bool) -> list[dict]:
        """The result of a MetricsQL query; `bounded`: one of the run's queries, which --query-timeout limits."""
        limit = self.spec.query_timeout if bounded and self.spec.task == "query" else 0
        if limit:  # the server stops the query; the client gives up waiting at the same time
            params["timeout"] = f"{max(1, round(limit * 1000))}ms"
        started = time.perf_counter()
        response = self._request("MetricsQL query", "GET", path, params=params, **({"timeout": limit} if limit else {}))
        # httpx limits each socket operation, not the call: an answer that came in late is late all the same.
        if limit and time.perf_counter() - started > limit:
            raise VictoriaMetricsError("MetricsQL query timed out")
        answer = response.json()
        if answer.get("status") != "success":
            raise VictoriaMetricsError(f"MetricsQL query failed: {one_line(answer.get('error') or answer, limit=300)}")
        return answer["data"]["result"]

    def _selector(self, metrics: list[str]) -> str:
        return '{__name__=~"' + "|".join(metrics) + '"}'


def ordered(*names: str, per_device: bool = False) -> Callable[[list[dict]], list[tuple]]:
    """The `stat`-labelled results as rows with the stats in the order of `names` (the common form),
    one row in all, or one per device (device id first)."""

    def convert(result: list[dict]) -> list[tuple]:
        groups: dict[str, dict[str, float]] = {}
        for series in result:
            key = series["metric"].get("device_id", "") if per_device else ""
            groups.setdefault(key, {})[series["metric"]["stat"]] = float(series["value"][1])
        rows = [tuple(stats.get(name) for name in names) for stats in (groups[key] for key in sorted(groups))]
        return [(key, *row) for key, row in zip(sorted(groups), rows)] if per_device else rows

    return convert


def per_minute(result: list[dict]) -> list[tuple]:
    """A range query's `stat`-labelled series (min, avg, max) as rows (minute ms, min, avg, max)."""
    minutes: dict[int, dict[str, float]] = {}
    for series in result:
        for at, value in series["values"]:
            minutes.setdefault(round(float(at) * 1000), {})[series["metric"]["stat"]] = float(value)
    return [(minute, stats.get("min"), stats.get("avg"), stats.get("max")) for minute, stats in sorted(minutes.items())]


def one_row(result: list[dict]) -> list[tuple]:
    """The `stat`-labelled results of a global aggregation as one row (none when there is no data)."""
    values = {series["metric"].get("stat", "value"): float(series["value"][1]) for series in result}
    return [tuple(values[name] for name in sorted(values))] if values else []


def _separated(rows: np.ndarray) -> np.ndarray:
    """Rows of text, each followed by a comma."""
    return np.concatenate([rows, np.full((len(rows), 1), ord(","), dtype=np.uint8)], axis=1)


def _flags(metrics: str) -> dict[str, str]:
    """The server's command-line flags, as /metrics lists them: `flag{name="...", value="..."} 1`."""
    return dict(re.findall(r'^flag\{name="([^"]+)", value="([^"]*)"', metrics, flags=re.MULTILINE))


def _retention_seconds(value: str) -> float | None:
    """A -retentionPeriod value in seconds: a number with a unit (s, m, h, d, w, y), months without one."""
    match = re.fullmatch(r"([0-9.]+)([smhdwy]?)", value.strip())
    if not match:
        return None
    number, unit = float(match.group(1)), match.group(2)
    return number * (RETENTION_UNITS_S[unit] if unit else MONTH_S)
