"""QuestDB: writes over InfluxDB line protocol (ILP) over HTTP with the official `questdb` client,
tables, counts and queries over the PostgreSQL wire protocol with psycopg.

Insert modes:
- single (no --batch): one event per HTTP request, added with the sender's `row()` and flushed;
- batch: one HTTP request per batch. The batch is encoded outside the timed call into a client
  buffer, by default through the client's DataFrame path (`Buffer.dataframe`, pandas, no pyarrow);
  `batch_encoding=rows` fills the buffer with `row()` per event instead (NumPy only, no pandas).
  The timed call is `Sender.flush(buffer)`: the request and the server's answer.

Tables are created first, over the PostgreSQL wire protocol, so that the designated timestamp and the
partitioning are the run's choice (ILP would auto-create `timestamp`-named, day-partitioned tables):
WAL tables partitioned by `partition_by` (default DAY; QuestDB refuses ILP writes into non-WAL
tables, and WAL tables need partitions, so there is no NONE). `dedup=true` adds `DEDUP UPSERT KEYS(timestamp, device_id)` (with `--primary-key
client`: the key column too), so a repeated event replaces the stored one instead of adding a row.

Commits are asynchronous on WAL tables: the HTTP answer means the rows are in the table's write-ahead
log, and they become visible when QuestDB has applied it, a few milliseconds later. The count check
therefore waits (bounded by `commit_wait_s`) and the report says how long after the run every event
was visible, like queued ingestion elsewhere.

Reading back: the six queries over the PostgreSQL wire protocol (device-downsample with `SAMPLE BY
1m ALIGN TO CALENDAR`, newest-per-device with `LATEST ON`), and scans streamed with psycopg's
`Cursor.stream()` (QuestDB has no DECLARE CURSOR; the rows come as the server sends them, one at a
time, and are grouped into pages on the client). The record of expected answers is a table of its own,
`iotbench_expected` (not partitioned, hence not WAL: a written record is visible at once).

QuestDB has no primary keys or generated ids: `--primary-key db` (the default) and `none` mean the
same (no key column); `client` stores the worker's key in a VARCHAR column `id`; `sql` and `uuid` are
refused.

Shapes (simulator/shapes.py), columns in the layout's order: `events` with `sensor` (SHORT) and the
measurements m1.. (DOUBLE) as further columns; `slim` (value INT), `light` (val1, val2 SHORT) and
`large` (text VARCHAR, i1..i8 INT), each with the designated timestamp. Light's secondary index is not
made: QuestDB indexes SYMBOL columns only (and orders rows by the designated timestamp). `dedup` needs
a column that tells events apart beside the timestamp: the device (events) or the client's key
(light and large with `--primary-key client`); otherwise the rows of different workers with equal
timestamps would replace each other, so it is refused. --commit-interval is refused: ILP has no
transactions to commit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
from pydantic import Field

from iotdb_bench.simulator.answers import Answer, with_times
from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, No
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.events import CLIENT_KEY_WIDTH, DEVICE_ID_WIDTH, TEXT_WIDTH, EventBatch
from iotdb_bench.simulator.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import RECORD_NAME, ModuleError, ModuleOptions, OneClassModule, Query, timestamp_pages
from iotdb_bench.simulator.report import IngestionWait
from iotdb_bench.simulator.spec import PrimaryKey

log = logging.getLogger("questdb")

# ILP writes only to WAL tables, and WAL tables need partitions: no NONE.
Partition = Literal["HOUR", "DAY", "WEEK", "MONTH", "YEAR"]
# QuestDB types of the shapes' kinds of column (simulator/shapes.py).
COLUMN_TYPES = {"timestamp": "TIMESTAMP", "device": "SYMBOL", "sensor": "SHORT", "sequence": "LONG", "float": "DOUBLE",
                "int16": "SHORT", "int32": "INT", "text": "VARCHAR"}


class QuestdbOptions(ModuleOptions):
    host: str = "localhost"
    http_port: int = Field(9000, ge=1, le=65535, description="HTTP port: ILP writes")
    pg_port: int = Field(8812, ge=1, le=65535, description="PostgreSQL wire protocol port: tables, counts, queries")
    user: str = "admin"
    password: str = "quest"
    database: str = "qdb"
    partition_by: Partition = Field("DAY", description="how the tables are partitioned by their designated timestamp")
    dedup: bool = Field(False, description="DEDUP UPSERT KEYS(timestamp, device_id[, id]): repeated events replace stored ones")
    batch_encoding: Literal["dataframe", "rows"] = Field("dataframe", description="how a batch is encoded: pandas DataFrame or row() per event")
    request_timeout_s: float = Field(60, gt=0, description="seconds one ILP request may take")
    client_retry_s: float = Field(0, ge=0, description="the client's own retries of failed ILP requests (0 = none: failures show)")
    commit_wait_s: float = Field(60, ge=0, description="longest wait for acknowledged rows to become visible after a run")
    commit_poll_s: float = Field(0.01, gt=0, description="seconds between counts while waiting")
    connect_timeout: int = Field(10, ge=1)


class Module(OneClassModule):
    Options = QuestdbOptions
    options: QuestdbOptions
    capabilities = Capabilities(
        shapes=ALL_SHAPES, primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none, PrimaryKey.client}), measurements=True, sensors=True,
        markers=True, transactions=No("its writes (ILP over HTTP) have no transaction to commit every S seconds"),
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._conn = None
        self._sender = None
        self._with_key = self.spec.primary_key is PrimaryKey.client

    def validate(self) -> None:
        self.validate_workload()
        if self.options.dedup and not (self.layout.has("device") or self.spec.primary_key is PrimaryKey.client):
            raise ModuleError(f"module 'questdb': dedup with --schema {self.layout.shape} needs --primary-key client (the rows have "
                              "no device: rows of different workers with equal timestamps would replace each other)")
        if self.spec.primary_key not in self.capabilities.primary_keys and self.layout.has_key:
            raise ModuleError(
                f"module 'questdb' does not support --primary-key {self.spec.primary_key.value}: QuestDB generates no keys "
                "(db and none mean the same: no key column; client stores the worker's key)"
            )

    # -- how the module describes its runs -------------------------------------------------
    def batch_kind(self) -> str:
        return f"ILP/HTTP request ({'DataFrame' if self.options.batch_encoding == 'dataframe' else 'rows'})"

    def notes(self) -> list[str]:
        notes = ["QuestDB commits WAL tables asynchronously: inserts/s counts acknowledged events; "
                 "the time until all were visible is reported separately"]
        if self.layout.indexed:
            notes.append(f"--schema {self.layout.shape}: no index on {', '.join(self.layout.indexed)} (QuestDB indexes SYMBOL columns only)")
        return notes

    # -- lifecycle -------------------------------------------------------------------------
    def server_address(self) -> tuple[str, int] | None:
        return self.options.host, self.options.http_port

    def connect(self) -> None:
        import psycopg

        options = self.options
        startup = None
        if self.spec.task == "query" and self.spec.query_timeout:  # QuestDB honours statement_timeout (ms) given at startup only
            startup = f"-c statement_timeout={max(1, round(self.spec.query_timeout * 1000))}"
        try:
            self._conn = psycopg.connect(host=options.host, port=options.pg_port, user=options.user, password=options.password,
                                         dbname=options.database, connect_timeout=options.connect_timeout, autocommit=True,
                                         options=startup)
        except psycopg.OperationalError as error:
            reason = one_line(str(error).strip().splitlines()[-1] if str(error).strip() else error)
            raise ModuleError(f"cannot connect to QuestDB's PostgreSQL wire protocol at {options.host}:{options.pg_port}: {reason}") from None
        if self.spec.task == "insert":
            self._sender = self._new_sender()
            if self.spec.batch and self.options.batch_encoding == "dataframe":
                # Imported now, not in the first timed batch: importing pandas takes about a second.
                try:
                    import pandas  # noqa: F401
                except ImportError:
                    raise ModuleError("questdb: batch_encoding dataframe needs pandas; install it or use batch_encoding=rows") from None

    def _new_sender(self):
        from questdb import QuestDBError, Sender

        options = self.options
        conf = (f"http::addr={options.host}:{options.http_port};auto_flush=off;"
                f"request_timeout={round(options.request_timeout_s * 1000)};retry_timeout={round(options.client_retry_s * 1000)};")
        sender = Sender.from_conf(conf)
        try:
            sender.establish()  # asks the server for its line protocol versions: fails here when unreachable
        except QuestDBError as error:
            raise ModuleError(f"cannot connect to QuestDB's ILP over HTTP at {options.host}:{options.http_port}: {one_line(error)}") from None
        return sender

    def close(self) -> None:
        if self._sender is not None:
            self._sender.close()
            self._sender = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        for table in self.spec.table_names:
            if self.spec.clean:
                self._conn.execute(f"DROP TABLE IF EXISTS {table}")
            self._conn.execute(self.create_table_statement(table))

    def create_table_statement(self, table: str) -> str:
        columns = [f"{column.name} {COLUMN_TYPES[column.kind]}" for column in self.layout.columns]
        keys = [column.name for column in self.layout.columns if column.kind in ("timestamp", "device", "sensor")]
        if self._with_key:
            columns.append("id VARCHAR")
            keys.append("id")
        statement = (f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(columns)}) TIMESTAMP(timestamp) "
                     f"PARTITION BY {self.options.partition_by} WAL")
        if self.options.dedup:
            statement += f" DEDUP UPSERT KEYS({', '.join(keys)})"
        return statement

    def server_version(self) -> str | None:
        # build() answers "Build Information: QuestDB 9.2.2, JDK ..., Commit Hash ..."
        return self._conn.execute("SELECT build()").fetchone()[0].removeprefix("Build Information: ")

    def count(self) -> int:
        return sum(self._conn.execute(f"SELECT count() FROM {table}").fetchone()[0] for table in self.spec.table_names)

    def wait_for_count(self, expected: int, run_ended_at: float) -> IngestionWait:
        """Rows acknowledged by ILP are visible once QuestDB has applied its write-ahead log: count until
        they all are (bounded), and say how long that took after the run."""
        return self.count_until(expected, run_ended_at, self.options.commit_wait_s, self.options.commit_poll_s)

    def server_counters(self) -> dict[str, int] | None:
        """Rows of the run's tables as QuestDB's table_storage() reports them (its transaction files, not a scan)."""
        return {"rows": sum(row[0] for row in self._table_storage("rowCount"))}

    def storage_bytes(self) -> int | None:
        return sum(row[0] for row in self._table_storage("diskSize"))

    def _table_storage(self, column: str) -> list[tuple]:
        return self._conn.execute(f"SELECT {column} FROM table_storage() WHERE tableName IN ({', '.join(['%s'] * len(self.spec.table_names))})",
                                  self.spec.table_names).fetchall()

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> Any:
        """A client buffer holding the batch's ILP rows (one request); built here, outside the timed call."""
        buffer = self._sender.new_buffer()
        for table, part in self.per_table(batch):
            if self.options.batch_encoding == "dataframe":
                buffer.dataframe(self._frame(part), table_name=table, symbols=self._symbols, at="timestamp")
            else:
                for row in self._rows(table, part):
                    self._add_row(buffer, row)
        return buffer

    def insert_batch(self, prepared: Any) -> None:
        self._sender.flush(prepared)

    def prepare_single(self, batch: EventBatch) -> list[tuple]:
        """(table, event...) per event, in the batch's order."""
        return [(table, *row) for table, row in zip(self.table_of_each(batch), self._python_rows(batch))]

    @property
    def _symbols(self) -> list[str]:
        return [column.name for column in self.layout.columns if column.kind == "device"]

    def _python_rows(self, batch: EventBatch) -> list[tuple]:
        return self.layout.python_rows(batch, key=batch.client_key if self._with_key else None)

    def insert_single(self, item: tuple) -> None:
        self._add_row(self._sender, item)
        self._sender.flush()

    def _frame(self, batch: EventBatch):
        """The batch as a DataFrame the client's DataFrame path reads without pyarrow: object strings,
        a naive datetime64[ns] column (UTC)."""
        import pandas as pd

        widths = {"device": DEVICE_ID_WIDTH, "text": TEXT_WIDTH}
        columns = {}
        for column in self.layout.columns:
            values = column.values(batch)
            if column.kind == "timestamp":
                values = values.astype("datetime64[ms]").astype("datetime64[ns]")
            elif column.kind in widths:
                values = values.astype(f"U{widths[column.kind]}").astype(object)
            columns[column.name] = values
        if self._with_key:
            columns["id"] = batch.client_key.astype(f"U{CLIENT_KEY_WIDTH}").astype(object)
        return pd.DataFrame(columns, copy=False)

    def _rows(self, table: str, batch: EventBatch) -> list[tuple]:
        return [(table, *row) for row in self._python_rows(batch)]

    def _add_row(self, target, row: tuple) -> None:
        """One event with `row()` on a buffer or the sender: (table, the layout's columns..., [id])."""
        from questdb import TimestampNanos

        table, *values = row
        symbols, columns, at = {}, {}, None
        for column, value in zip(self.layout.columns, values):
            if column.kind == "timestamp":
                at = TimestampNanos(value * 1_000_000)
            elif column.kind == "device":
                symbols[column.name] = value
            else:
                columns[column.name] = value
        if self._with_key:
            columns["id"] = values[-1]
        target.row(table, symbols=symbols, columns=columns, at=at)

    # -- the record of expected answers ------------------------------------------------------
    def store_record(self, text: str) -> None:
        # Versions instead of an UPDATE: the newest row is the record (QuestDB updates rows in place
        # only on tables with a designated timestamp).
        self._conn.execute(f"CREATE TABLE IF NOT EXISTS {RECORD_NAME} (tables VARCHAR, version LONG, record VARCHAR)")
        self._conn.execute(f"INSERT INTO {RECORD_NAME} VALUES (%s, %s, %s)", (self.record_key(), time.time_ns(), text))

    def stored_record(self) -> str | None:
        if not self._conn.execute("SELECT count() FROM tables() WHERE table_name = %s", (RECORD_NAME,)).fetchone()[0]:
            return None
        row = self._conn.execute(f"SELECT record FROM {RECORD_NAME} WHERE tables = %s ORDER BY version DESC LIMIT 1",
                                 (self.record_key(),)).fetchone()
        return row[0] if row else None

    # -- queries ---------------------------------------------------------------------------
    def marker_visible(self, marker: EventBatch) -> bool:
        """The marker's row, found in its own microsecond of the designated timestamp: visible once QuestDB
        has applied the write-ahead log that holds it (acknowledged earlier)."""
        table, device, sequence = self.marker_key(marker)
        micros = int(marker.timestamp_ms[0]) * 1000
        statement = f"SELECT 1 FROM {table} WHERE timestamp = cast({micros} as timestamp) AND device_id = %s AND sequence_number = %s LIMIT 1"
        return self._conn.execute(statement, (device, sequence)).fetchone() is not None

    def queries(self) -> dict[str, Query]:
        events = self._events()
        return {
            "count-events": self._query(f"SELECT count() FROM {events}"),
            "temperature-min-max": self._query(f"SELECT min(temperature), max(temperature) FROM {events}"),
            "temperature-stats": self._query(f"SELECT min(temperature), avg(temperature), max(temperature) FROM {events}"),
            "temperature-stats-per-device": self._query(
                f"SELECT device_id, min(temperature), avg(temperature), max(temperature) FROM {events} GROUP BY device_id"),
            # LATEST ON walks each device's rows backwards from the newest partition; a device always
            # writes to the same table, so the union of the tables' answers is the answer.
            "newest-per-device": self._query(" UNION ALL ".join(
                f"(SELECT device_id, timestamp, temperature FROM {table} LATEST ON timestamp PARTITION BY device_id)"
                for table in self.spec.table_names), times=(1,)),
            # SAMPLE BY buckets the rows by their designated timestamp; minutes without readings give no row.
            "device-downsample": self._query(
                f"SELECT timestamp, min(temperature), avg(temperature), max(temperature) FROM {self._downsample_table()} "
                f"WHERE device_id = '{DOWNSAMPLE_DEVICE}' AND timestamp >= '{_iso(DOWNSAMPLE_START_MS)}' "
                f"AND timestamp < '{_iso(DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS)}' SAMPLE BY 1m ALIGN TO CALENDAR",
                times=(0,)),
        }

    def _downsample_table(self) -> str:
        """The table the downsample device writes to (a device always writes to the same table)."""
        return self.spec.table_names[0]

    def _events(self) -> str:
        """The run's events as one relation: the table, or the union of the tables."""
        tables = self.spec.table_names
        if len(tables) == 1:
            return tables[0]
        return "(" + " UNION ALL ".join(f"SELECT device_id, timestamp, temperature FROM {table}" for table in tables) + ")"

    def _query(self, statement: str, times: tuple[int, ...] = ()) -> Query:
        def run() -> Answer:
            return Answer(self._conn.execute(statement).fetchall(), with_times(*times) if times else None)

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        statement = " UNION ".join(f"SELECT DISTINCT device_id FROM {table}" for table in self.spec.table_names)
        return sorted(row[0] for row in self._conn.execute(statement).fetchall())

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # A device always writes to the same table, but which one is the generator's business: the
        # union of the tables (the others hold none of its rows). TIMESTAMP::long is microseconds.
        tables = self.spec.table_names
        source = tables[0] if len(tables) == 1 else "(" + " UNION ALL ".join(f"SELECT timestamp, device_id FROM {t}" for t in tables) + ")"
        statement = f"SELECT timestamp::long / 1000 FROM {source} WHERE device_id = %s ORDER BY timestamp"
        with self._conn.cursor() as cursor:
            yield from timestamp_pages((ms for (ms,) in cursor.stream(statement, (device,))), page_size)


def _iso(ms: int) -> str:
    """A QuestDB timestamp literal (UTC) for epoch milliseconds."""
    return np.datetime_as_string(np.datetime64(ms, "ms"), timezone="UTC")
