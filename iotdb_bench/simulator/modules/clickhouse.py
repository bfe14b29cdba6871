"""ClickHouse through clickhouse-driver over the native protocol (TCP, port 9000 by default).

One MergeTree table per run table, sorted by (device_id, timestamp) and partitioned by month:
    timestamp, device_id, sequence_number, temperature
A batch is one INSERT whose rows travel as NumPy columns (`use_numpy`, columnar), one block per
table; a single insert is a one-row INSERT. With `async_insert` the server buffers inserts and
writes them as parts in the background (a feature of servers from 21.11 on): with
`wait_for_async_insert` (the default) each INSERT still returns once its rows are written;
without it, it returns when they are buffered, and the count check waits for them.

The schema adapts to the server's version, read when connecting (see ServerDialect): the 18.16
server Debian ships has no DateTime64, allows LowCardinality only behind an experimental setting
and knows no async_insert, so there timestamps are Int64 epoch milliseconds and device ids plain
Strings. MergeTree keeps every row (its sorting key is not unique): --primary-key db (the default)
and none both mean "no key column"; the other modes are refused.

Shapes (simulator/shapes.py), columns in the layout's order: `events` with `sensor` (Int16) and the
measurements m1.. (Float64) as further columns; `slim`, `light` (val1, val2 Int16) and `large` (text
String, i1..i8 Int32) sorted by timestamp alone (they have no device). Light's secondary index: the
18.16 server has no data-skipping indexes (they came in 19.6 behind a setting), and a MergeTree has no
other secondary index, so none is made (notes() says so). --commit-interval is refused: an INSERT is
ClickHouse's unit of atomicity, there is no transaction to commit.

Reading back: the six queries (device-downsample buckets epoch milliseconds with intDiv, answers
fetched as columns), and scans streamed block by block with `execute_iter` (`max_block_size` = the
page size). Timestamps are read as epoch milliseconds (`toUnixTimestamp64Milli` on DateTime64, a
function of 20.5 and later). The record of expected answers is a table of its own,
`<database>.iotbench_expected`, one row per saved version (MergeTree has no UPDATE; the newest wins).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import Field

from iotdb_bench.simulator.answers import Answer
from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, No
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.events import EventBatch
from iotdb_bench.simulator.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import RECORD_NAME, ModuleError, ModuleOptions, OneClassModule, Query, timestamp_pages
from iotdb_bench.simulator.report import IngestionWait
from iotdb_bench.simulator.shapes import Layout
from iotdb_bench.simulator.spec import PrimaryKey

log = logging.getLogger("clickhouse")

# Server-side codes: authentication failed (old and new servers), unknown database.
AUTHENTICATION_CODES = {192, 193, 516}
# Rows buffered by async inserts without waiting are written within async_insert_busy_timeout_ms
# (200 ms by default); the count check waits this long at most.
ASYNC_INSERT_COUNT_LIMIT_S = 60.0
# ClickHouse types of the shapes' kinds of column (timestamp and device: as the dialect says).
COLUMN_TYPES = {"sensor": "Int16", "sequence": "Int64", "float": "Float64", "int16": "Int16", "int32": "Int32", "text": "String"}


class ClickhouseOptions(ModuleOptions):
    host: str = "127.0.0.1"
    port: int = Field(9000, ge=1, le=65535, description="native protocol port")
    user: str = "default"
    password: str = ""
    database: str = Field("iotbench", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
    secure: bool = Field(False, description="TLS on the native protocol (port 9440 usually)")
    compression: bool = Field(False, description="LZ4 compression of the blocks")
    async_insert: bool = Field(False, description="server-side buffering of inserts (ClickHouse 21.11 and later)")
    wait_for_async_insert: bool = Field(True, description="with async_insert: an INSERT returns once its rows are written")
    timestamp_type: Literal["auto", "DateTime64", "Int64"] = Field("auto", description="auto: DateTime64(3) where the server has it, else Int64 epoch ms")
    device_type: Literal["auto", "LowCardinality", "String"] = Field("auto", description="auto: LowCardinality(String) where the server allows it, else String")
    connect_timeout: float = Field(10.0, gt=0)
    send_receive_timeout: float = Field(300.0, gt=0, description="seconds one call may take")


@dataclass(frozen=True)
class ServerDialect:
    """What the server's version offers, and the SQL the module writes for it."""

    version: tuple[int, int]
    datetime64: bool  # DateTime64(3): timestamps as milliseconds; else Int64 epoch ms
    low_cardinality: bool  # LowCardinality(String) for device ids

    # Releases that brought the features (ClickHouse's changelog).
    DATETIME64_SINCE = (20, 1)
    LOW_CARDINALITY_SINCE = (19, 9)  # allowed without allow_experimental_low_cardinality_type
    ASYNC_INSERT_SINCE = (21, 11)

    @classmethod
    def for_server(cls, version: tuple[int, int], options: ClickhouseOptions) -> ServerDialect:
        has_datetime64, has_low_cardinality = version >= cls.DATETIME64_SINCE, version >= cls.LOW_CARDINALITY_SINCE
        shown = ".".join(map(str, version))
        if options.timestamp_type == "DateTime64" and not has_datetime64:
            raise ModuleError(f"ClickHouse {shown} has no DateTime64 (it came in {'.'.join(map(str, cls.DATETIME64_SINCE))}); use timestamp_type: Int64 or auto")
        if options.device_type == "LowCardinality" and not has_low_cardinality:
            raise ModuleError(f"ClickHouse {shown} allows LowCardinality only as an experimental feature; use device_type: String or auto")
        if options.async_insert and version < cls.ASYNC_INSERT_SINCE:
            raise ModuleError(f"ClickHouse {shown} has no async_insert (it came in {'.'.join(map(str, cls.ASYNC_INSERT_SINCE))}); remove the option async_insert")
        return cls(
            version=version,
            datetime64=options.timestamp_type == "DateTime64" or (options.timestamp_type == "auto" and has_datetime64),
            low_cardinality=options.device_type == "LowCardinality" or (options.device_type == "auto" and has_low_cardinality),
        )

    def create_table(self, qualified_table: str, layout: Layout) -> str:
        types = {**COLUMN_TYPES, "timestamp": "DateTime64(3, 'UTC')" if self.datetime64 else "Int64",
                 "device": "LowCardinality(String)" if self.low_cardinality else "String"}
        columns = ", ".join(f"{column.name} {types[column.kind]}" for column in layout.columns)
        order = "(device_id, timestamp)" if layout.has("device") else "(timestamp)"
        return (f"CREATE TABLE IF NOT EXISTS {qualified_table} ({columns}) ENGINE = MergeTree() "
                f"PARTITION BY toYYYYMM({self.as_datetime('timestamp')}) ORDER BY {order}")

    def as_datetime(self, column: str) -> str:
        """An expression of DateTime (seconds) for the stored timestamp column."""
        return column if self.datetime64 else f"toDateTime(intDiv({column}, 1000))"

    def as_ms(self, column: str) -> str:
        """An expression of Int64 epoch milliseconds for the stored timestamp column."""
        return f"toUnixTimestamp64Milli({column})" if self.datetime64 else column

    def queries(self, qualified_table: str) -> dict[str, str]:
        table, ms = qualified_table, self.as_ms("timestamp")
        end = DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS
        return {
            "count-events": f"SELECT count() FROM {table}",
            "temperature-min-max": f"SELECT min(temperature), max(temperature) FROM {table}",
            "temperature-stats": f"SELECT min(temperature), avg(temperature), max(temperature) FROM {table}",
            "temperature-stats-per-device": f"SELECT device_id, min(temperature), avg(temperature), max(temperature) FROM {table} GROUP BY device_id",
            # argMax: the temperature of the row with the largest timestamp, per device, in one pass.
            "newest-per-device": f"SELECT device_id, max({ms}), argMax(temperature, timestamp) FROM {table} GROUP BY device_id",
            "device-downsample": (f"SELECT intDiv({ms}, {MINUTE_MS}) * {MINUTE_MS} AS minute, min(temperature), avg(temperature), "
                                  f"max(temperature) FROM {table} WHERE device_id = '{DOWNSAMPLE_DEVICE}' AND {ms} >= {DOWNSAMPLE_START_MS} "
                                  f"AND {ms} < {end} GROUP BY minute ORDER BY minute"),
        }

    def scan(self, qualified_table: str) -> str:
        """Every reading's epoch milliseconds of the device `%(device)s`, in time order (the sorting key's order)."""
        return f"SELECT {self.as_ms('timestamp')} FROM {qualified_table} WHERE device_id = %(device)s ORDER BY timestamp"


class ClickhouseError(Exception):
    """The server refused a statement: its code and the first line of its message (no stack trace)."""


class Module(OneClassModule):
    Options = ClickhouseOptions
    options: ClickhouseOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none}), measurements=True, sensors=True, markers=True,
        transactions=No("an INSERT is ClickHouse's unit of atomicity; there is no transaction to commit every S seconds"),
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._client = None
        self.dialect: ServerDialect | None = None
        database = self.options.database
        self._tables = {table: f"{database}.{table}" for table in self.spec.table_names}
        self._inserts = {table: f"INSERT INTO {qualified} ({', '.join(self.layout.names)}) VALUES" for table, qualified in self._tables.items()}

    def validate(self) -> None:
        self.validate_workload()
        if self.spec.primary_key not in self.capabilities.primary_keys and self.layout.has_key:
            raise ModuleError(
                f"module 'clickhouse' stores events in a MergeTree sorted by (device_id, timestamp), which has no unique key: "
                f"--primary-key {self.spec.primary_key.value} does not apply; use db (the default) or none"
            )

    # -- how the module describes its runs -------------------------------------------------
    def batch_kind(self) -> str:
        return "columnar INSERT (NumPy)"

    def insert_mode(self) -> str:
        mode = super().insert_mode()
        if self.options.async_insert:
            mode += ", async_insert" + ("" if self.options.wait_for_async_insert else " without waiting")
        return mode

    def notes(self) -> list[str]:
        notes = []
        if self.layout.indexed:
            notes.append(f"--schema {self.layout.shape}: no secondary index on {', '.join(self.layout.indexed)} (a MergeTree has none; "
                         "data-skipping indexes are not in this module)")
        if self.dialect is not None and not self.dialect.datetime64:
            notes.append(f"ClickHouse {'.'.join(map(str, self.dialect.version))}: timestamps stored as Int64 epoch milliseconds (no DateTime64 before 20.1)")
        if self.spec.task == "insert" and not self.spec.batch and not self.options.async_insert:
            notes.append("single inserts: every INSERT writes a part of its own, which MergeTree merges later (async_insert buffers them on 21.11+)")
        return notes

    # -- lifecycle -------------------------------------------------------------------------
    def connect(self) -> None:
        from clickhouse_driver import Client

        options = self.options
        settings: dict[str, Any] = {"use_numpy": True}
        if self.spec.task == "query" and self.spec.query_timeout:
            settings["max_execution_time"] = max(1, round(self.spec.query_timeout))
        self._client = Client(
            host=options.host, port=options.port, user=options.user, password=options.password, secure=options.secure,
            compression=options.compression, connect_timeout=options.connect_timeout,
            send_receive_timeout=options.send_receive_timeout, settings=settings,
        )
        version = self._server_version()
        self.dialect = ServerDialect.for_server(version, options)
        if options.async_insert:
            self._client.settings.update(async_insert=1, wait_for_async_insert=int(options.wait_for_async_insert))
        log.info("connected to ClickHouse %s at %s:%s", ".".join(map(str, version)), options.host, options.port)

    def _server_version(self) -> tuple[int, int]:
        from clickhouse_driver.errors import Error, NetworkError, ServerException, SocketTimeoutError

        address = f"{self.options.host}:{self.options.port}"
        try:
            self._client.execute("SELECT 1")  # connects; the handshake tells the server's version
        except (NetworkError, SocketTimeoutError, OSError, EOFError) as error:
            raise ModuleError(f"cannot connect to ClickHouse at {address}: {one_line(error)}") from None
        except ServerException as error:
            if error.code in AUTHENTICATION_CODES:
                raise ModuleError(f"ClickHouse at {address} refused user '{self.options.user}': {_first_line(error)}") from None
            raise ModuleError(f"ClickHouse at {address}: {_first_line(error)}") from None
        except Error as error:
            raise ModuleError(f"ClickHouse at {address}: {one_line(error)}") from None
        info = self._client.connection.server_info
        return info.version_major, info.version_minor

    def close(self) -> None:
        if self._client is not None:
            self._client.disconnect()
            self._client = None

    def _execute(self, statement: str, *args, **kwargs) -> Any:
        """Run a statement; a refusal becomes a ClickhouseError with the server's code and first line."""
        from clickhouse_driver.errors import ServerException

        try:
            return self._client.execute(statement, *args, **kwargs)
        except ServerException as error:
            raise ClickhouseError(f"ClickHouse refused '{statement[:120]}': {_first_line(error)}") from None

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        self._execute(f"CREATE DATABASE IF NOT EXISTS {self.options.database}")
        for qualified in self._tables.values():
            if self.spec.clean:
                self._execute(f"DROP TABLE IF EXISTS {qualified}")
            self._execute(self.dialect.create_table(qualified, self.layout))

    def server_version(self) -> str | None:
        return f"ClickHouse {self._execute('SELECT version()')[0][0]}"

    def count(self) -> int:
        return sum(int(self._execute(f"SELECT count() FROM {qualified}", columnar=True)[0][0]) for qualified in self._tables.values())

    def storage_bytes(self) -> int | None:
        names = ", ".join(f"'{table}'" for table in self._tables)
        rows = self._execute("SELECT sum(bytes_on_disk) FROM system.parts WHERE active AND database = %(database)s "
                             f"AND table IN ({names})", {"database": self.options.database}, columnar=True)
        return int(rows[0][0])

    def wait_for_count(self, expected: int, run_ended_at: float) -> IngestionWait | None:
        if not (self.options.async_insert and not self.options.wait_for_async_insert):
            return None
        return self.count_until(expected, run_ended_at, limit_s=ASYNC_INSERT_COUNT_LIMIT_S, poll_s=0.1)

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> list[tuple[str, list[np.ndarray]]]:
        return [(self._inserts[table], self._columns(part)) for table, part in self.per_table(batch)]

    def insert_batch(self, prepared: list[tuple[str, list[np.ndarray]]]) -> None:
        for statement, columns in prepared:
            self._execute(statement, columns, columnar=True)

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, list[np.ndarray]]]:
        """One one-row INSERT per event, in the batch's order (a --duration run may stop between two)."""
        columns = self._columns(batch)
        return [(self._inserts[table], [column[i : i + 1] for column in columns]) for i, table in enumerate(self.table_of_each(batch))]

    def _columns(self, batch: EventBatch) -> list[np.ndarray]:
        """The layout's columns in INSERT order; timestamps as epoch ms, which is also how DateTime64(3)
        takes them (the driver writes integers as the column's raw ticks)."""
        return [column.values(batch) for column in self.layout.columns]

    def insert_single(self, item: tuple[str, list[np.ndarray]]) -> None:
        statement, columns = item
        self._execute(statement, columns, columnar=True)

    # -- the record of expected answers ------------------------------------------------------
    def store_record(self, text: str) -> None:
        table = f"{self.options.database}.{RECORD_NAME}"
        self._execute(f"CREATE DATABASE IF NOT EXISTS {self.options.database}")
        self._execute(f"CREATE TABLE IF NOT EXISTS {table} (tables String, version UInt64, record String) "
                      "ENGINE = MergeTree() ORDER BY (tables, version)")
        self._execute(f"INSERT INTO {table} (tables, version, record) VALUES",
                      [np.array([self.record_key()], dtype=object), np.array([time.time_ns()], dtype=np.uint64), np.array([text], dtype=object)],
                      columnar=True)

    def stored_record(self) -> str | None:
        table = f"{self.options.database}.{RECORD_NAME}"
        if not self._execute(f"EXISTS TABLE {table}", columnar=True)[0][0]:
            return None
        found = self._execute(f"SELECT record FROM {table} WHERE tables = %(tables)s ORDER BY version DESC LIMIT 1",
                              {"tables": self.record_key()}, columnar=True)
        return str(found[0][0]) if found and len(found[0]) else None

    # -- queries ---------------------------------------------------------------------------
    def marker_visible(self, marker: EventBatch) -> bool:
        """The marker's row: visible when the insert returned, or, with async_insert and no wait, once the
        server has flushed its insert buffer."""
        table, device, sequence = self.marker_key(marker)
        statement = f"SELECT 1 FROM {self._tables[table]} WHERE device_id = %(device)s AND sequence_number = %(sequence)s LIMIT 1"
        return bool(self._execute(statement, {"device": device, "sequence": sequence}))

    def queries(self) -> dict[str, Query]:
        tables = list(self._tables.values())
        # With --tables N, each query reads the union of the tables.
        source = tables[0] if len(tables) == 1 else "(" + " UNION ALL ".join(
            f"SELECT timestamp, device_id, temperature FROM {qualified}" for qualified in tables) + ")"
        return {name: self._rows(statement) for name, statement in self.dialect.queries(source).items()}

    def _rows(self, statement: str) -> Query:
        def run() -> Answer:
            # Columns (the client reads NumPy): turned into rows of Python values after the timed call.
            return Answer(self._execute(statement, columnar=True), _rows_of_columns)

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        statement = " UNION ALL ".join(f"SELECT DISTINCT device_id FROM {qualified}" for qualified in self._tables.values())
        columns = self._execute(statement, columnar=True)
        return sorted(set(columns[0].tolist())) if columns else []

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # A device always writes to the same table; the others hold none of its rows.
        for qualified in self._tables.values():
            rows = self._client.execute_iter(self.dialect.scan(qualified), {"device": device}, settings={"max_block_size": page_size})
            yield from timestamp_pages((row[0] for row in rows), page_size)


def _rows_of_columns(columns: list[np.ndarray]) -> list[tuple]:
    return list(zip(*(column.tolist() for column in columns)))


def _first_line(error: Exception) -> str:
    """A ClickHouse server exception's text without the C++ stack trace it carries."""
    text = str(getattr(error, "message", "") or error)
    head = text.split("Stack trace:", 1)[0]
    code = getattr(error, "code", None)
    line = one_line(head.splitlines()[0] if head.strip() else head, limit=300)
    return f"Code {code}: {line}" if code is not None and not line.startswith("Code:") else line
