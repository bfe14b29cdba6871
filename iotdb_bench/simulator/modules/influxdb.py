"""InfluxDB through the v2 API (influxdb-client): InfluxDB 2.x, and InfluxDB 1.8 in its v2-compatible mode.

Events are points of the measurement `events` (events0..eventsN-1 with --tables N), tag `device_id`
(and `sensor` with --sensors), fields `temperature` (and m1.. with --measurements) and
`sequence_number`, timestamps in milliseconds. Other shapes (simulator/shapes.py) keep the device tag
(a point is identified by its series and time: without it, the points of workers with equal
timestamps would overwrite each other); light's indexed column val1 is a tag (InfluxDB indexes tags
only, so that is its secondary index), the other values are fields, large's text a string field. A point is
identified by its series (measurement + tags) and time, so there is no primary key: `--primary-key db`
(the default) and `none` are accepted and mean the same, every other mode is rejected.

Insert modes, both with the synchronous write API (the call returns once the server acknowledged):
- single (no --batch): one point per write call;
- batch: one write call per batch, its line protocol built outside the timed call.

Setup: on InfluxDB 2 the bucket is deleted and recreated (clean) or created when missing through the
buckets API. InfluxDB 1.8 has no buckets API: there `bucket` is "database/retention-policy", and the
1.x query API creates the database and drops the run's measurements (clean). Which API applies is
read from the server's version (the /ping header), or forced with `v1_compat`.

Reading back: device-downsample is `aggregateWindow(every: 1m)` (min, mean, max, windows labelled by
their start); scans stream each device's series as CSV (the query API's streaming response) and
cut it into pages. The record of expected answers is kept in the measurement `iotbench_expected`
(tag `tables`): string fields are limited to 64 KB, so the JSON is split into parts, one point each.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from pydantic import Field

from iotdb_bench.simulator.answers import Answer, with_times
from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.events import EventBatch
from iotdb_bench.simulator.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import RECORD_NAME, HttpUrl, ModuleError, ModuleOptions, OneClassModule, Query
from iotdb_bench.simulator.shapes import Column
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import text_rows

log = logging.getLogger("influxdb")

# Flux needs a time range; this one holds every event the generator can produce.
RANGE = "range(start: 1970-01-01T00:00:00Z, stop: 2262-01-01T00:00:00Z)"
RECORD_PART_CHARS = 30_000  # well under the 64 KB limit of a string field, escaped quotes included


class InfluxdbOptions(ModuleOptions):
    url: HttpUrl = "http://localhost:8086"
    token: str = Field("", description="API token; on InfluxDB 1.8 'user:password' (or '-' without auth)")
    org: str = Field("-", description="organisation name ('-' on InfluxDB 1.8)")
    bucket: str = Field("iotbench", min_length=1, description="bucket; on InfluxDB 1.8 'database/retention-policy'")
    v1_compat: bool | None = Field(None, description="InfluxDB 1.8 (true) or 2.x (false); unset = read the server's version")
    timeout: float = Field(60.0, gt=0, description="seconds one HTTP call may take")
    verify_ssl: bool = True
    enable_gzip: bool = Field(False, description="gzip the write requests")


class InfluxServerError(Exception):
    """The server answered a call with an error (status None: the call did not get an answer)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class Module(OneClassModule):
    Options = InfluxdbOptions
    options: InfluxdbOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none}), measurements=True, sensors=True, markers=True,
        drivers=("influxdb-client",),
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._client = None
        self._query_client = None
        self._write = None
        self._query = None
        self._v1: bool | None = self.options.v1_compat
        self._version: str | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def batch_kind(self) -> str:
        return "line protocol write"

    def server_address(self) -> tuple[str, int] | None:
        return self.url_address(self.options.url, 8086)

    def connect(self) -> None:
        from influxdb_client import InfluxDBClient
        from influxdb_client.client.write_api import SYNCHRONOUS

        def client(seconds: float) -> InfluxDBClient:
            return InfluxDBClient(
                url=self.options.url, token=self.options.token, org=self.options.org, timeout=max(1, round(seconds * 1000)),
                verify_ssl=self.options.verify_ssl, enable_gzip=self.options.enable_gzip,
            )

        self._client = client(self.options.timeout)
        try:
            version = self._version = self._call("GET /ping", self._client.version)
        except InfluxServerError as error:
            raise ModuleError(f"the server at {self._address()} does not answer like InfluxDB: {error}") from None
        if self._v1 is None:
            self._v1 = version.lstrip("v").startswith("1.")
        log.info("connected to InfluxDB %s at %s (%s API)", version, self.options.url, "1.x" if self._v1 else "2.x")
        self._write = self._client.write_api(write_options=SYNCHRONOUS)
        # --query-timeout bounds the queries only: they get a client of their own with that timeout.
        if self.spec.task == "query" and self.spec.query_timeout:
            self._query_client = client(self.spec.query_timeout)
        self._query = (self._query_client or self._client).query_api()

    def close(self) -> None:
        for client in (self._client, self._query_client):
            if client is not None:
                client.close()
        self._client = self._query_client = self._write = self._query = None

    def _address(self) -> str:
        parts = urlsplit(self.options.url)
        return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"

    def _call(self, what: str, function, *args, **kwargs) -> Any:
        """Run a client call; an unreachable server or bad token becomes a ModuleError, a refusal an InfluxServerError."""
        from influxdb_client.rest import ApiException
        from urllib3.exceptions import ConnectTimeoutError, HTTPError, MaxRetryError, ReadTimeoutError

        try:
            return function(*args, **kwargs)
        except ApiException as error:
            if error.status == 401:
                raise ModuleError(f"InfluxDB at {self._address()} refused the token (401)") from None
            raise InfluxServerError(f"{what} failed with {error.status}: {_api_message(error)}", error.status) from None
        except (HTTPError, OSError) as error:
            cause = error.reason if isinstance(error, MaxRetryError) else error
            if isinstance(cause, ReadTimeoutError):
                raise InfluxServerError(f"{what} timed out") from None
            reason = one_line(cause).split("new connection: ")[-1]
            if isinstance(cause, ConnectTimeoutError):  # refused, unresolvable or silent host
                raise ModuleError(f"cannot connect to InfluxDB at {self._address()}: {reason}") from None
            raise InfluxServerError(f"{what} failed: {reason}") from None  # connection reset and the like

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        if self._v1:
            self._setup_v1()
        else:
            self._setup_v2()

    def _setup_v2(self) -> None:
        buckets = self._client.buckets_api()
        try:
            existing = self._call("looking up the bucket", buckets.find_bucket_by_name, self.options.bucket)
        except InfluxServerError as error:
            if error.status != 404:
                raise
            raise ModuleError(f"InfluxDB at {self._address()} has no buckets API (InfluxDB 1.x?): set the option v1_compat: true") from None
        if existing is not None and self.spec.clean:
            self._call("deleting the bucket", buckets.delete_bucket, existing)
            existing = None
        if existing is None:
            self._call("creating the bucket", buckets.create_bucket, bucket_name=self.options.bucket, org=self.options.org)

    def _setup_v1(self) -> None:
        database = self.options.bucket.split("/")[0]
        self._influxql(f'CREATE DATABASE "{database}"')
        if self.spec.clean:
            for measurement in self.spec.table_names:
                self._influxql(f'DROP MEASUREMENT "{measurement}"', database=database)

    def _influxql(self, statement: str, database: str | None = None) -> None:
        """One statement through the 1.x query API (InfluxDB 1.8 has no buckets API)."""
        import httpx

        user, _, password = self.options.token.partition(":")
        auth = (user, password) if password else None
        data = {"q": statement, **({"db": database} if database else {})}
        try:
            response = httpx.post(f"{self.options.url}/query", data=data, auth=auth, timeout=self.options.timeout,
                                  verify=self.options.verify_ssl)
        except (httpx.ConnectError, httpx.ConnectTimeout) as error:
            raise ModuleError(f"cannot connect to InfluxDB at {self._address()}: {one_line(error)}") from None
        except httpx.TransportError as error:
            raise InfluxServerError(f"{statement} failed: {one_line(error)}") from None
        if response.status_code == 401:
            raise ModuleError(f"InfluxDB at {self._address()} refused the credentials (401): token must be 'user:password'")
        errors = [r["error"] for r in _results(response) if "error" in r]
        if response.status_code != 200 or errors:
            raise InfluxServerError(f"{statement} failed with {response.status_code}: {'; '.join(errors) or response.text.strip()}")

    def server_version(self) -> str | None:
        return f"InfluxDB {self._version}"  # the X-Influxdb-Version header of GET /ping, read at connect

    def count(self) -> int:
        """Events in the run's measurements: the number of values of a field every point has, over all time."""
        measurements = " or ".join(f'r._measurement == "{name}"' for name in self.spec.table_names)
        flux = (f'from(bucket: "{self.options.bucket}") |> {RANGE}\n'
                f'  |> filter(fn: (r) => ({measurements}) and r._field == "{self._count_field}") |> group() |> count()')
        tables = self._call("counting", self._client.query_api().query, flux, org=self.options.org)
        return sum(int(record.get_value()) for table in tables for record in table.records)

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> bytes:
        return text_rows.compact(self._lines(batch))

    def insert_batch(self, prepared: bytes) -> None:
        self._write_lines(prepared)

    def prepare_single(self, batch: EventBatch) -> list[bytes]:
        return text_rows.compact(self._lines(batch)).splitlines()

    def insert_single(self, item: bytes) -> None:
        self._write_lines(item)

    def _write_lines(self, lines: bytes) -> None:
        from influxdb_client import WritePrecision

        self._call("write", self._write.write, bucket=self.options.bucket, org=self.options.org, record=lines,
                   write_precision=WritePrecision.MS)

    @property
    def _tags(self) -> list[Column]:
        """Tags: the device (and sensor), and light's indexed column (InfluxDB indexes tags only)."""
        return [column for column in self.layout.columns if column.kind in ("device", "sensor") or column.name in self.layout.indexed]

    @property
    def _fields(self) -> list[Column]:
        tags = self._tags
        return [column for column in self.layout.columns if column.kind != "timestamp" and column not in tags]

    @property
    def _count_field(self) -> str:
        return next(column.name for column in self._fields if column.kind != "sequence")

    def _lines(self, batch: EventBatch) -> np.ndarray:
        """Line protocol, one row per event (see _text_rows). A device always goes to the same measurement.
        Every shape keeps the device tag: a point is its series and time, and without it the points of
        different workers with equal timestamps would overwrite each other."""
        names = np.array(self.spec.table_names, dtype="S")
        columns = [text_rows.fixed(names[batch.device_index % len(names)])]
        if self.layout.shape != "events":
            columns += [text_rows.constant(",device_id="), text_rows.fixed(batch.device_id)]
        for column in self._tags:
            columns += [text_rows.constant(f",{column.name}="), _tag_text(column.kind, column.values(batch))]
        for position, column in enumerate(self._fields):
            columns += [text_rows.constant((" " if position == 0 else ",") + f"{column.name}="), *_field_text(column.kind, column.values(batch))]
        columns += [text_rows.constant(" "), text_rows.integers(batch.timestamp_ms), text_rows.constant("\n")]
        return text_rows.text_rows(columns, len(batch))

    # -- the record of expected answers ------------------------------------------------------
    def store_record(self, text: str) -> None:
        """One point per part of the text, at times 0, 1, 2... ms; the first also says how many parts
        there are (a shorter record overwrites the first parts of a longer one and ignores the rest)."""
        parts = [text[i : i + RECORD_PART_CHARS] for i in range(0, len(text), RECORD_PART_CHARS)] or [""]
        tag = _tag_value(self.record_key())
        lines = [f'{RECORD_NAME},tables={tag} text="{_string_field(part)}"' + (f",parts={len(parts)}i" if i == 0 else "") + f" {i}"
                 for i, part in enumerate(parts)]
        self._write_lines("\n".join(lines).encode())

    def stored_record(self) -> str | None:
        flux = (f'from(bucket: "{self.options.bucket}") |> {RANGE}\n'
                f'  |> filter(fn: (r) => r._measurement == "{RECORD_NAME}" and r.tables == "{self.record_key()}")\n'
                '  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value") |> group() |> sort(columns: ["_time"])')
        records = [record for table in self._flux(flux) for record in table.records]
        if not records or records[0].values.get("parts") is None:
            return None
        return "".join(record.values["text"] for record in records[: int(records[0].values["parts"])])

    # -- queries ---------------------------------------------------------------------------
    def queries(self) -> dict[str, Query]:
        data = self._data()
        # Aggregates of one stream are combined into one row: union of the named values, then pivot.
        one_row = '|> group() |> pivot(rowKey: [], columnKey: ["_field"], valueColumn: "_value")'
        per_device = '|> group() |> pivot(rowKey: ["device_id"], columnKey: ["_field"], valueColumn: "_value")'
        every = 'data |> group() |> keep(columns: ["_value"])'
        by_device = 'data |> group(columns: ["device_id"]) |> keep(columns: ["device_id", "_value"])'
        hour = f"start: {_rfc3339(DOWNSAMPLE_START_MS)}, stop: {_rfc3339(DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS)}"
        minutes = (f'from(bucket: "{self.options.bucket}") |> range({hour})\n'
                   f'  |> filter(fn: (r) => {self._measurements()} and r._field == "temperature" and r.device_id == "{DOWNSAMPLE_DEVICE}")\n'
                   '  |> group() |> keep(columns: ["_start", "_stop", "_time", "_value"])')
        windows = ", ".join(f'hour |> aggregateWindow(every: 1m, fn: {name}, createEmpty: false, timeSrc: "_start") '
                            f'|> set(key: "_field", value: "{name}")' for name in ("min", "mean", "max"))
        return {
            "count-events": self._rows(f"{data}\ndata |> group() |> count()", ["_value"], total=True),
            "temperature-min-max": self._rows(
                f"{data}\nvalues = {every}\nunion(tables: [{_named(['min', 'max'], 'values')}]) {one_row}", ["min", "max"]),
            "temperature-stats": self._rows(
                f"{data}\nvalues = {every}\nunion(tables: [{_named(['min', 'mean', 'max'], 'values')}]) {one_row}", ["min", "mean", "max"]),
            "temperature-stats-per-device": self._rows(
                f"{data}\nbyDevice = {by_device}\nunion(tables: [{_named(['min', 'mean', 'max'], 'byDevice')}]) {per_device}",
                ["device_id", "min", "mean", "max"]),
            # A device always writes to the same measurement, so each series' last point is its newest event.
            "newest-per-device": self._rows(f'{data}\ndata |> last() |> group() |> keep(columns: ["device_id", "_time", "_value"])',
                                            ["device_id", "_time", "_value"], times=(1,)),
            "device-downsample": self._rows(
                f'hour = {minutes}\nunion(tables: [{windows}])\n'
                '  |> group() |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")',
                ["_time", "min", "mean", "max"], times=(0,)),
        }

    def marker_visible(self, marker: EventBatch) -> bool:
        """The marker's point: its measurement, device tag and sequence number, in its own millisecond."""
        measurement, device, sequence = self.marker_key(marker)
        nanoseconds = int(marker.timestamp_ms[0]) * 1_000_000
        flux = (f'from(bucket: "{self.options.bucket}") |> range(start: time(v: {nanoseconds}), stop: time(v: {nanoseconds + 1_000_000}))\n'
                f'  |> filter(fn: (r) => r._measurement == "{measurement}" and r.device_id == "{device}" and r._field == "sequence_number")\n'
                f'  |> filter(fn: (r) => r._value == {sequence})')
        return any(table.records for table in self._flux(flux))

    def _measurements(self) -> str:
        return "(" + " or ".join(f'r._measurement == "{name}"' for name in self.spec.table_names) + ")"

    def _data(self, device: str | None = None) -> str:
        """Flux binding `data`: the temperature values of the run's measurements (of one device)."""
        of_device = f' and r.device_id == "{device}"' if device else ""
        return (f'data = from(bucket: "{self.options.bucket}") |> {RANGE}\n'
                f'  |> filter(fn: (r) => {self._measurements()} and r._field == "temperature"{of_device})')

    def _flux(self, query: str) -> list:
        return self._call("Flux query", self._query.query, query, org=self.options.org)

    def _rows(self, query: str, columns: list[str], times: tuple[int, ...] = (), total: bool = False) -> Query:
        """A Flux query whose records' `columns` are the answer's rows; `total`: one count, 0 when the
        query finds nothing (Flux returns no table at all then)."""

        def rows_of(tables: list) -> list[tuple]:
            rows = [tuple(record.values.get(column) for column in columns) for table in tables for record in table.records]
            return [(sum(row[0] for row in rows),)] if total else with_times(*times)(rows)

        def run() -> Answer:
            return Answer(self._flux(query), rows_of)

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        query = f'{self._data()}\ndata |> last() |> group() |> keep(columns: ["device_id"])'
        return sorted({record.values["device_id"] for table in self._flux(query) for record in table.records})

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        """The device's series streamed as plain CSV (no annotations), read line by line and cut into pages."""
        from influxdb_client import Dialect

        query = f'{self._data(device)}\ndata |> keep(columns: ["_time", "_value"])'
        rows = self._call("Flux scan", self._query.query_csv, query, org=self.options.org, dialect=Dialect(header=False, annotations=[]))
        page: list[str] = []
        for row in rows:
            if len(row) < 5:  # a blank line between tables
                continue
            page.append(row[3][:-1])  # ",result,table,_time,_value": RFC 3339 UTC time without its Z
            if len(page) == page_size:
                yield _epoch_ms(page)
                page = []
        if page:
            yield _epoch_ms(page)


def _epoch_ms(times: list[str]) -> np.ndarray:
    return np.array(times, dtype="datetime64[ms]").astype(np.int64)


def _rfc3339(ms: int) -> str:
    return np.datetime_as_string(np.datetime64(ms, "ms"), timezone="UTC")


def _tag_value(text: str) -> str:
    """Line protocol escaping of a tag value."""
    return text.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ")


def _string_field(text: str) -> str:
    """Line protocol escaping of a string field value."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _tag_text(kind: str, values: np.ndarray) -> np.ndarray:
    return text_rows.fixed(values) if kind == "device" else text_rows.integers(values)


def _field_text(kind: str, values: np.ndarray) -> list[np.ndarray]:
    """A field's value as line protocol writes it: floats as they are, integers with `i`, strings quoted."""
    if kind == "float":
        return [text_rows.decimals(values)]
    if kind == "text":
        return [text_rows.constant('"'), text_rows.fixed(values), text_rows.constant('"')]
    return [text_rows.integers(values), text_rows.constant("i")]


def _named(aggregates: list[str], stream: str) -> str:
    """`stream |> min() |> set(key: "_field", value: "min"), ...`: aggregates tagged with their name."""
    return ", ".join(f'{stream} |> {name}() |> set(key: "_field", value: "{name}")' for name in aggregates)


def _results(response) -> list[dict]:
    try:
        return response.json().get("results", [])
    except ValueError:
        return []


def _api_message(error) -> str:
    import json

    try:
        return json.loads(error.body).get("message") or error.reason
    except (TypeError, ValueError, AttributeError):
        return one_line(error.body or error.reason or "", limit=300)
