"""MySQL and MariaDB through PyMySQL (pure Python, no client library needed).

Insert modes, after the blog post that compared them (naive vs transaction inserts):
- single (no --batch): one INSERT per event with autocommit, durable per message;
- batch, transaction (default): one single-row INSERT per event, one COMMIT per batch;
- batch, values lists (`use_values_lists=true` or `batch_mode=values`): multi-row INSERTs, one COMMIT.
Statements are rendered to SQL text while preparing (outside the timed calls): every value is a
generated number, timestamp or fixed-alphabet id, so no escaping is needed and a timed call is
only the round trips to the server. Deadlocks and lock wait timeouts are retried.

Reading back: the six queries (device-downsample buckets with TIMESTAMPDIFF in minutes) and scans
through an unbuffered cursor (SSCursor: rows stream from the server as they are fetched). The record
of expected answers is a table of its own, `iotbench_expected`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Literal

import numpy as np
from pydantic import Field

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities
from iotdb_bench.simulator.events import CLIENT_KEY_WIDTH, DEVICE_ID_WIDTH, TEXT_WIDTH, EventBatch
from iotdb_bench.simulator.modules.base import RECORD_NAME, ModuleError, ModuleOptions, OneClassModule, Query
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import sql as sql_common

# ER_LOCK_DEADLOCK and ER_LOCK_WAIT_TIMEOUT: the transaction can simply be run again.
RETRYABLE_ERRORS = {1213, 1205}
ER_PARSE_ERROR = 1064
# Well below every server's default max_allowed_packet (MariaDB 16 MiB, MySQL 64 MiB).
MAX_STATEMENT_BYTES = 1 << 20


class MysqlOptions(ModuleOptions):
    host: str = "127.0.0.1"
    port: int = Field(3306, ge=1, le=65535)
    user: str = "root"
    password: str | None = None
    database: str = "bench"
    use_values_lists: bool = False
    batch_mode: Literal["transaction", "values"] | None = None
    engine: str | None = Field(None, pattern=r"^[A-Za-z][A-Za-z0-9_]*$", description="storage engine, e.g. InnoDB, MyISAM, Aria")
    primary_key_constraint: str | None = None
    create_indices: bool = False
    max_retries: int = Field(10, ge=0)
    connect_timeout: int = Field(10, ge=1)


# Column types of each kind of column of the shapes (simulator/shapes.py).
COLUMN_TYPES = {"timestamp": "DATETIME(3)", "device": f"VARCHAR({DEVICE_ID_WIDTH})", "sensor": "SMALLINT", "sequence": "BIGINT",
                "float": "DOUBLE", "int16": "SMALLINT", "int32": "INT", "text": f"VARCHAR({TEXT_WIDTH})"}
# How a value of each kind is written in SQL text: quoted, or as Python writes the number.
_LITERALS = {"timestamp": "'{}'", "device": "'{}'", "text": "'{}'", "float": "{!r}"}


class Module(OneClassModule):
    Options = MysqlOptions
    options: MysqlOptions
    capabilities = Capabilities(shapes=ALL_SHAPES, measurements=True, sensors=True, transactions=True, markers=True, drivers=("PyMySQL",))

    def __init__(self, spec):
        super().__init__(spec)
        self._conn = None
        self._server_version = ""
        self.retry = Retry(self.options.max_retries, _is_retryable)
        self._with_key = spec.primary_key is PrimaryKey.client
        columns = self.layout.names + (("id",) if self._with_key else ())
        self._insert_head = "INSERT INTO {table} (" + ", ".join(columns) + ") VALUES "
        literals = [_LITERALS.get(column.kind, "{}") for column in self.layout.columns] + (["'{}'"] if self._with_key else [])
        self._row_format = "(" + ",".join(literals) + ")"

    def validate(self) -> None:
        super().validate()
        self.check_query_indices(self.options.create_indices)

    def notes(self) -> list[str]:
        if (self.options.engine or "").lower() == "myisam" and (self.spec.batch or self.spec.commit_interval_s):
            return ["MyISAM has no transactions: every statement is stored on its own and COMMIT does nothing"]
        return []

    @property
    def batch_mode(self) -> str:
        if self.options.batch_mode:
            return self.options.batch_mode
        return "values" if self.options.use_values_lists else "transaction"

    def batch_kind(self) -> str:
        return "values lists" if self.batch_mode == "values" else "single-row INSERTs in one transaction"

    # -- lifecycle -------------------------------------------------------------------------
    def connect(self) -> None:
        import pymysql

        options = self.options
        try:
            self._conn = pymysql.connect(
                host=options.host, port=options.port, user=options.user, password=options.password or "",
                database=options.database, connect_timeout=options.connect_timeout, charset="utf8mb4",
                autocommit=not self.spec.batch and not self.spec.commit_interval_s,
            )
        except pymysql.err.OperationalError as error:
            reason = error.args[1] if len(error.args) > 1 else str(error)
            raise ModuleError(f"cannot connect to MySQL at {options.host}:{options.port}: {reason}") from None
        with self._conn.cursor() as cursor:
            # The handshake's version may carry MariaDB's "5.5.5-" compatibility prefix; VERSION() does not.
            cursor.execute("SELECT VERSION()")
            self._server_version = cursor.fetchone()[0]
            cursor.execute("SET time_zone = '+00:00'")
            if self.spec.task == "query" and self.spec.query_timeout:
                if self.is_mariadb:
                    cursor.execute(f"SET SESSION max_statement_time = {self.spec.query_timeout}")
                else:
                    cursor.execute(f"SET SESSION max_execution_time = {int(self.spec.query_timeout * 1000)}")

    def server_address(self) -> tuple[str, int] | None:
        return self.options.host, self.options.port

    @property
    def is_mariadb(self) -> bool:
        return "MariaDB" in self._server_version

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):  # already gone (server closed it): nothing left to release
                self._conn.close()
            self._conn = None

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        import pymysql

        self._conn.autocommit(True)
        with self._conn.cursor() as cursor:
            for table in self.spec.table_names:
                if self.spec.clean:
                    cursor.execute(f"DROP TABLE IF EXISTS {table}")
                try:
                    cursor.execute(self.create_table_statement(table))
                except pymysql.err.ProgrammingError as error:
                    if self.spec.primary_key is PrimaryKey.uuid and error.args[0] == ER_PARSE_ERROR:
                        raise ModuleError(
                            f"the server ({self._server_version}) does not support UUID() column defaults "
                            "(needs MariaDB 10.2+ or MySQL 8.0.13+); use another --primary-key"
                        ) from None
                    raise
                if self.options.create_indices:
                    self._create_indices(cursor, table, sql_common.index_statements(table))
                self._create_indices(cursor, table, sql_common.shape_index_statements(table, self.layout))

    def create_table_statement(self, table: str) -> str:
        key_column = {
            PrimaryKey.db: "id BIGINT NOT NULL AUTO_INCREMENT",
            PrimaryKey.sql: "id BIGINT NOT NULL AUTO_INCREMENT",
            PrimaryKey.client: f"id VARCHAR({CLIENT_KEY_WIDTH}) NOT NULL",
            PrimaryKey.uuid: self._uuid_column(),
            PrimaryKey.none: None,
        }[self.spec.primary_key]
        parts = [key_column] if key_column else []
        parts += [f"{column.name} {COLUMN_TYPES[column.kind]} NOT NULL" for column in self.layout.columns]
        if self.options.primary_key_constraint:
            parts.append(self.options.primary_key_constraint)
            if "AUTO_INCREMENT" in (key_column or ""):
                parts.append("KEY (id)")  # an AUTO_INCREMENT column must lead some index
        elif key_column:
            parts.append("PRIMARY KEY (id)")
        engine = f" ENGINE={self.options.engine}" if self.options.engine else ""
        return f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(parts)}){engine}"

    def _uuid_column(self) -> str:
        if self._server_version and self.is_mariadb and _version(self._server_version) >= (10, 7):
            return "id UUID NOT NULL DEFAULT UUID()"  # MariaDB's native 16-byte type
        return "id CHAR(36) NOT NULL DEFAULT (UUID())"

    def _create_indices(self, cursor, table: str, statements: list[str]) -> None:
        # MySQL has no CREATE INDEX IF NOT EXISTS: look before creating (matters with --no-clean).
        cursor.execute(
            "SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = %s",
            (table,),
        )
        existing = {row[0] for row in cursor.fetchall()}
        for statement in statements:
            name = statement.split(" ON ")[0].split()[-1]
            if name not in existing:
                cursor.execute(statement.replace(" IF NOT EXISTS", ""))

    def count(self) -> int:
        self._fresh_snapshot()
        with self._conn.cursor() as cursor:
            total = 0
            for table in self.spec.table_names:
                cursor.execute(f"SELECT count(*) FROM {table}")
                total += cursor.fetchone()[0]
            return total

    def server_version(self) -> str | None:
        return self._server_version  # SELECT VERSION() at connect, e.g. "10.11.6-MariaDB-0+deb12u1"

    def server_counters(self) -> dict[str, int] | None:
        """The server's row-write counter: server-wide, so other clients' writes are included.

        MySQL has InnoDB's rows-inserted counter; MariaDB 10.6+ dropped it, Handler_write stands in.
        """
        with self._conn.cursor() as cursor:
            cursor.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_rows_inserted', 'Handler_write')")
            status = {name.lower(): int(value) for name, value in cursor.fetchall()}
        for name in ("innodb_rows_inserted", "handler_write"):
            if name in status:
                return {f"{name}_server_wide": status[name]}
        return None

    def storage_bytes(self) -> int | None:
        self._fresh_snapshot()
        with self._conn.cursor() as cursor:
            # InnoDB refreshes the sizes in information_schema only from its statistics.
            cursor.execute(f"ANALYZE TABLE {', '.join(self.spec.table_names)}")
            cursor.fetchall()
            placeholders = ", ".join(["%s"] * len(self.spec.table_names))
            cursor.execute(
                "SELECT coalesce(sum(data_length + index_length), 0) FROM information_schema.tables "
                f"WHERE table_schema = DATABASE() AND table_name IN ({placeholders})",
                self.spec.table_names,
            )
            return int(cursor.fetchone()[0])

    def _fresh_snapshot(self) -> None:
        """Outside autocommit, end the open transaction so the next read sees committed data."""
        if not self._conn.get_autocommit():
            self._conn.commit()

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> list[str]:
        statements: list[str] = []
        for table, part in self.per_table(batch):
            head = self._insert_head.format(table=table)
            values = self._values(part)
            if self.batch_mode == "values":
                statements += _multi_row_statements(head, values)
            else:
                statements += [head + row for row in values]
        return statements

    def insert_batch(self, prepared: list[str]) -> None:
        def transaction() -> None:
            with self._conn.cursor() as cursor:
                for statement in prepared:
                    cursor.execute(statement)
            self._conn.commit()

        self.retry.call(transaction, before_retry=self._conn.rollback)

    def prepare_single(self, batch: EventBatch) -> list[str]:
        heads = {table: self._insert_head.format(table=table) for table in self.spec.table_names}
        return [heads[table] + row for table, row in zip(self.table_of_each(batch), self._values(batch))]

    def insert_single(self, statement: str) -> None:
        def call() -> None:
            with self._conn.cursor() as cursor:
                cursor.execute(statement)

        if self.spec.commit_interval_s:
            call()  # inside the --commit-interval transaction: a failed statement spoils it, nothing to retry
        else:
            self.retry.call(call)

    def commit(self) -> None:
        self._conn.commit()

    def _values(self, batch: EventBatch) -> list[str]:
        """One `(...)` SQL tuple per event; the values need no escaping (see the module docstring)."""
        rows = self.layout.python_rows(batch, timestamp=_datetimes, key=batch.client_key if self._with_key else None)
        return [self._row_format.format(*row) for row in rows]

    # -- the record of expected answers ------------------------------------------------------
    def store_record(self, text: str) -> None:
        with self._conn.cursor() as cursor:
            cursor.execute(f"CREATE TABLE IF NOT EXISTS {RECORD_NAME} (tables VARCHAR(255) NOT NULL PRIMARY KEY, record LONGTEXT NOT NULL)")
            cursor.execute(f"REPLACE INTO {RECORD_NAME} (tables, record) VALUES (%s, %s)", (self.record_key(), text))
        self._fresh_snapshot()

    def stored_record(self) -> str | None:
        self._fresh_snapshot()
        with self._conn.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = %s", (RECORD_NAME,))
            if not cursor.fetchone()[0]:
                return None
            cursor.execute(f"SELECT record FROM {RECORD_NAME} WHERE tables = %s", (self.record_key(),))
            row = cursor.fetchone()
        return row[0] if row else None

    # -- queries ---------------------------------------------------------------------------
    def marker_visible(self, marker: EventBatch) -> bool:
        table, device, sequence = self.marker_key(marker)
        self._fresh_snapshot()
        with self._conn.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {table} WHERE device_id = %s AND sequence_number = %s LIMIT 1", (device, sequence))
            return cursor.fetchone() is not None

    def queries(self) -> dict[str, Query]:
        epoch = "'1970-01-01 00:00:00'"
        statements = {**sql_common.QUERIES, "device-downsample": sql_common.downsample_query(
            f"TIMESTAMPDIFF(MINUTE, {epoch}, timestamp) * 60000", _datetime(sql_common.DOWNSAMPLE_START_MS),
            _datetime(sql_common.DOWNSAMPLE_END_MS))}
        return {name: self._query(name, statement) for name, statement in sql_common.over_tables(statements, self.spec.table_names).items()}

    def _query(self, name: str, statement: str) -> Query:
        def run():
            self._fresh_snapshot()
            with self._conn.cursor() as cursor:
                cursor.execute(statement)
                return sql_common.answer(name, cursor.fetchall())

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        self._fresh_snapshot()
        with self._conn.cursor() as cursor:
            cursor.execute(sql_common.devices_statement(self.spec.table_names))
            return [row[0] for row in cursor.fetchall()]

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        import pymysql.cursors

        self._fresh_snapshot()
        milliseconds = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', timestamp) DIV 1000"
        statement, binds = sql_common.scan_statement(self.spec.table_names, milliseconds, "%s")
        with self._conn.cursor(pymysql.cursors.SSCursor) as cursor:
            cursor.execute(statement, (device,) * binds)
            while rows := cursor.fetchmany(page_size):
                yield np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))


def _datetime(ms: int) -> str:
    """A DATETIME literal (UTC, the session's time zone) for epoch milliseconds."""
    return "'" + np.datetime_as_string(np.datetime64(ms, "ms")).replace("T", " ") + "'"


def _datetimes(timestamp_ms: np.ndarray) -> list[str]:
    return np.datetime_as_string(timestamp_ms.astype("datetime64[ms]")).tolist()


def _is_retryable(error: BaseException) -> bool:
    """Deadlocks and lock wait timeouts: the transaction can simply run again."""
    import pymysql

    return isinstance(error, pymysql.err.OperationalError) and error.args[0] in RETRYABLE_ERRORS


def _multi_row_statements(head: str, values: list[str]) -> list[str]:
    """Multi-row INSERTs, each kept under MAX_STATEMENT_BYTES."""
    statements, chunk, size = [], [], len(head)
    for row in values:
        if chunk and size + len(row) + 1 > MAX_STATEMENT_BYTES:
            statements.append(head + ",".join(chunk))
            chunk, size = [], len(head)
        chunk.append(row)
        size += len(row) + 1
    if chunk:
        statements.append(head + ",".join(chunk))
    return statements


def _version(server_info: str) -> tuple[int, ...]:
    """(10, 11, 19) from '10.11.19-MariaDB-0+deb12u1'."""
    numbers = server_info.split("-")[0].split(".")
    return tuple(int(n) for n in numbers if n.isdigit())
