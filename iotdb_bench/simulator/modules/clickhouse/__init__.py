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

Shapes (simulator/workload/shapes.py), columns in the layout's order: `events` with `sensor` (Int16) and the
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

TSBS's shapes (`--schema tsbs-cpu`, `tsbs-devops`, `tsbs-iot`, docs/tsbs.md): TSBS's clickhouse target's
`tags` table and a table per measurement (plain MergeTrees), its rows as columnar INSERTs like the
others, its DevOps query types (they read `cpu`) in ClickHouse's SQL (tsbs.py) and the IoT ones,
which TSBS has only for other databases, translated from its TimescaleDB text (tsbs_iot.py), on old
servers and current ones alike.

The roles: schema.py, writer.py, reader.py, records.py; dialect.py the SQL per server version,
wording.py the server's refusals in one line, options.py the options; tsbs.py TSBS's target, tsbs_iot.py its IoT queries.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, No, Pace
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, connected, played_by
from iotdb_bench.simulator.modules.clickhouse.dialect import ServerDialect
from iotdb_bench.simulator.modules.clickhouse.options import ClickhouseOptions
from iotdb_bench.simulator.modules.clickhouse.reader import ClickhouseReader
from iotdb_bench.simulator.modules.clickhouse.records import ClickhouseRecords
from iotdb_bench.simulator.modules.clickhouse.schema import ClickhouseSchema
from iotdb_bench.simulator.modules.clickhouse.tsbs import TsbsTables
from iotdb_bench.simulator.modules.clickhouse.wording import ClickhouseError, first_line
from iotdb_bench.simulator.modules.clickhouse.writer import ClickhouseWriter
from iotdb_bench.simulator.spec import TSBS_TABLES, PrimaryKey, RunSpec

log = logging.getLogger("clickhouse")

# Server-side codes: authentication failed (old and new servers), unknown database.
AUTHENTICATION_CODES = {192, 193, 516}

__all__ = ["ClickhouseError", "ClickhouseOptions", "Module", "ServerDialect"]


class Module(DatabaseModule):
    Options = ClickhouseOptions
    options: ClickhouseOptions
    capabilities = Capabilities(
        pace=Pace(batch_rows_per_s=5_000.0, tsbs_query_s=0.006),  # a part per batch of 1,000 rows
        shapes=ALL_SHAPES, tsbs_shapes=frozenset(TSBS_TABLES), primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none}), measurements=True, sensors=True, markers=True,
        transactions=No("an INSERT is ClickHouse's unit of atomicity; there is no transaction to commit every S seconds"),
        query_languages=("sql/clickhouse", "sql"),
    )
    schema, writer, reader, records = played_by(ClickhouseSchema, ClickhouseWriter, ClickhouseReader, ClickhouseRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        self.client: Any = None  # the driver's client (clickhouse-driver, untyped), shared by the roles
        self.dialect: ServerDialect | None = None  # the server's, known once connected
        self._text_client: Any = None  # query files' texts, in the run's database (text_client)

    @property
    def server_dialect(self) -> ServerDialect:
        """The server's dialect, as the roles use it once `connect()` has read it."""
        return connected(self.dialect, self.spec.module)

    @functools.cached_property
    def tsbs_tables(self) -> TsbsTables:
        """TSBS's tables (TSBS's shapes), shared by the roles."""
        return TsbsTables(self.options.database, self.layouts)

    @functools.cached_property
    def tables(self) -> dict[str, str]:
        """The run's tables as the server names them: run table -> database.table (the writer's
        constructor reads them)."""
        return {table: f"{self.options.database}.{table}" for table in self.spec.table_names}

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
        options = self.options
        settings: dict[str, Any] = {"use_numpy": True}
        if self.spec.task == "query" and self.spec.query_timeout:
            settings["max_execution_time"] = max(1, round(self.spec.query_timeout))
        self.client = self._client(settings)
        version = self._server_version()
        self.dialect = ServerDialect.for_server(version, options)
        if options.async_insert:
            self.client.settings.update(async_insert=1, wait_for_async_insert=int(options.wait_for_async_insert))
        log.info("connected to ClickHouse %s at %s:%s", ".".join(map(str, version)), options.host, options.port)

    def _client(self, settings: dict[str, Any], database: str = "") -> Any:
        from clickhouse_driver import Client

        options = self.options
        return Client(host=options.host, port=options.port, user=options.user, password=options.password, secure=options.secure,
                      compression=options.compression, connect_timeout=options.connect_timeout,
                      send_receive_timeout=options.send_receive_timeout, settings=settings, **({"database": database} if database else {}))

    def text_client(self) -> Any:
        """A client whose current database is the run's (made when first asked, once the database exists):
        a query file's texts name the tables as the user sees them (`events`)."""
        if self._text_client is None:
            self._text_client = self._client({"use_numpy": True, **self.client.settings}, self.options.database)
        return self._text_client

    def _server_version(self) -> tuple[int, int]:
        from clickhouse_driver.errors import Error, NetworkError, ServerException, SocketTimeoutError

        address = f"{self.options.host}:{self.options.port}"
        try:
            self.client.execute("SELECT 1")  # connects; the handshake tells the server's version
        except (NetworkError, SocketTimeoutError, OSError, EOFError) as error:
            raise ModuleError(f"cannot connect to ClickHouse at {address}: {one_line(error)}") from None
        except ServerException as error:
            if error.code in AUTHENTICATION_CODES:
                raise ModuleError(f"ClickHouse at {address} refused user '{self.options.user}': {first_line(error)}") from None
            raise ModuleError(f"ClickHouse at {address}: {first_line(error)}") from None
        except Error as error:
            raise ModuleError(f"ClickHouse at {address}: {one_line(error)}") from None
        info = self.client.connection.server_info
        return info.version_major, info.version_minor

    def close(self) -> None:
        if self._text_client is not None:
            self._text_client.disconnect()
            self._text_client = None
        if self.client is not None:
            self.client.disconnect()
            self.client = None

    def execute(self, statement: str, *args: Any, on: Any = None, **kwargs: Any) -> Any:
        """Run a statement (`on` another client than the module's); a refusal becomes a ClickhouseError
        with the server's code and first line."""
        from clickhouse_driver.errors import ServerException

        try:
            return (on or self.client).execute(statement, *args, **kwargs)
        except ServerException as error:
            raise ClickhouseError(f"ClickHouse refused '{statement[:120]}': {first_line(error)}") from None
