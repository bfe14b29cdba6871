"""QuestDB: writes over InfluxDB line protocol (ILP) over HTTP with the official `questdb` client,
tables, counts and queries over the PostgreSQL wire protocol with psycopg.

Insert modes:
- single (no --batch): one event per HTTP request, added with the sender's `row()` and flushed;
- batch: one HTTP request per batch, encoded outside the timed call. By default (`batch_encoding=
  numpy`) the module builds the ILP text itself with NumPy (ilp.py: the lines the client would
  write, binary doubles of line protocol 2 when the server speaks it) and the timed call is the
  request on a keep-alive `http.client` connection and QuestDB's answer (ilp_http.py): about a
  third of the client's CPU per event of the client's DataFrame path. `batch_encoding=dataframe`
  fills a client buffer through the client's DataFrame path (`Buffer.dataframe`, pandas, no
  pyarrow), `rows` with `row()` per event; their timed call is `Sender.flush(buffer)`.
- `transport=tcp`: the NumPy lines over ILP/TCP (ilp_tcp.py), unacknowledged; the connection is
  closed (QuestDB commits) at the end of the timed phase, and the count check proves the rows.

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

Shapes (simulator/workload/shapes.py), columns in the layout's order: `events` with `sensor` (SHORT) and the
measurements m1.. (DOUBLE) as further columns; `slim` (value INT), `light` (val1, val2 SHORT) and
`large` (text VARCHAR, i1..i8 INT), each with the designated timestamp. Light's secondary index is not
made: QuestDB indexes SYMBOL columns only (and orders rows by the designated timestamp). `dedup` needs
a column that tells events apart beside the timestamp: the device (events) or the client's key
(light and large with `--primary-key client`); otherwise the rows of different workers with equal
timestamps would replace each other, so it is refused. --commit-interval is refused: ILP has no
transactions to commit.

TSBS's shapes (`--schema tsbs-cpu`, `tsbs-devops`, `tsbs-iot`, docs/tsbs.md): TSBS's questdb target's
tables, one per measurement (`cpu`; devops: nine; iot: `readings`, `diagnostics`) with the entity's tags
and the measurement's own as SYMBOL columns (IoT's capacities, which TSBS writes as fields, DOUBLE), the
fields as LONG where TSBS writes integers, else DOUBLE, and the designated `timestamp`, its rows written
as its ILP lines (devops and iot: batches the module encodes only; IoT's null tags and fields left out
of a line, stored as nulls), its DevOps query types in QuestDB's SQL (tsbs.py) and its 13 IoT types
(tsbs_iot.py); `dedup` keys are (timestamp, hostname), and IoT refuses dedup (TSBS's nameless rows).

The roles: schema.py, writer.py, reader.py, records.py; options.py their options and base class;
tsbs.py TSBS's target; tsbs_iot.py its IoT queries.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, No, Pace
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, connected, played_by
from iotdb_bench.simulator.modules.questdb.ilp_http import IlpOverHttp, IlpWriteFailed
from iotdb_bench.simulator.modules.questdb.ilp_tcp import IlpOverTcp
from iotdb_bench.simulator.modules.questdb.options import QuestdbOptions
from iotdb_bench.simulator.modules.questdb.reader import QuestdbReader
from iotdb_bench.simulator.modules.questdb.records import QuestdbRecords
from iotdb_bench.simulator.modules.questdb.schema import QuestdbSchema
from iotdb_bench.simulator.modules.questdb.writer import QuestdbWriter
from iotdb_bench.simulator.spec import TSBS_TABLES, PrimaryKey, RunSpec

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import TupleRow
    from questdb import Sender

log = logging.getLogger("questdb")

__all__ = ["Module", "QuestdbOptions"]

ENCODINGS = {"numpy": "NumPy", "dataframe": "DataFrame", "rows": "rows"}


class Module(DatabaseModule):
    Options = QuestdbOptions
    options: QuestdbOptions
    capabilities = Capabilities(
        pace=Pace(batch_rows_per_s=30_000.0, tsbs_query_s=0.02),  # ILP over HTTP: a commit per request; its PG wire under 50 workers
        shapes=ALL_SHAPES, tsbs_shapes=frozenset(TSBS_TABLES), primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none, PrimaryKey.client}), measurements=True, sensors=True,
        markers=True, transactions=No("its writes (ILP over HTTP) have no transaction to commit every S seconds"),
        query_languages=("sql/questdb", "sql"),
    )
    schema, writer, reader, records = played_by(QuestdbSchema, QuestdbWriter, QuestdbReader, QuestdbRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        self._conn: Connection[TupleRow] | None = None  # PostgreSQL wire protocol: tables, counts, queries, the record (`conn`)
        self.sender: Sender | None = None  # ILP over HTTP with the official client: single inserts, batches it encodes (insert runs only)
        self.lines: IlpOverHttp | IlpOverTcp | None = None  # batches the module encodes (batch_encoding=numpy)
        self.binary_doubles = True  # the server speaks line protocol 2 (doubles as 8 bytes)

    @property
    def conn(self) -> Connection[TupleRow]:
        """The PostgreSQL wire protocol's connection `connect()` opened, as the roles use it."""
        return connected(self._conn, self.spec.module)

    def validate(self) -> None:
        self.validate_workload()
        if self.options.transport == "tcp" and (not self.spec.batch or self.options.batch_encoding != "numpy"):
            raise ModuleError("module 'questdb': transport=tcp sends batches the module encodes: it needs --batch and batch_encoding numpy")
        if self.spec.task == "insert" and self.spec.shape in ("tsbs-devops", "tsbs-iot") and (not self.spec.batch or self.options.batch_encoding != "numpy"):
            raise ModuleError(f"module 'questdb': --schema {self.spec.shape} is written as batches the module encodes: it needs --batch "
                              "and batch_encoding numpy")
        if self.options.dedup and self.spec.shape == "tsbs-iot":
            raise ModuleError("module 'questdb': dedup with --schema tsbs-iot: TSBS writes some rows without their truck's name, and "
                              "such rows of different trucks at the same time would replace each other")
        if self.options.batch_encoding == "numpy" and self.options.client_retry_s and self.spec.batch:
            raise ModuleError("module 'questdb': client_retry_s needs batch_encoding dataframe or rows (the official client "
                              "retries; the NumPy path sends each request once)")
        if self.options.dedup and not (self.layout.has("device") or self.spec.tsbs or self.spec.primary_key is PrimaryKey.client):
            raise ModuleError(f"module 'questdb': dedup with --schema {self.layout.shape} needs --primary-key client (the rows have "
                              "no device: rows of different workers with equal timestamps would replace each other)")
        if self.spec.primary_key not in self.capabilities.primary_keys and self.layout.has_key:
            raise ModuleError(
                f"module 'questdb' does not support --primary-key {self.spec.primary_key.value}: QuestDB generates no keys "
                "(db and none mean the same: no key column; client stores the worker's key)"
            )

    # -- how the module describes its runs -------------------------------------------------
    def batch_kind(self) -> str:
        if self.options.transport == "tcp":
            return "ILP/TCP write (NumPy, unacknowledged)"
        return f"ILP/HTTP request ({ENCODINGS[self.options.batch_encoding]})"

    def notes(self) -> list[str]:
        notes = ["QuestDB commits WAL tables asynchronously: inserts/s counts acknowledged events; "
                 "the time until all were visible is reported separately"]
        if self.options.transport == "tcp":
            notes = ["ILP over TCP has no acknowledgement: inserts/s counts events handed to the kernel; the time until "
                     "all were visible is reported separately, and the count check is the only proof they were stored"]
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
            self.sender = self._new_sender()
            self.binary_doubles = self.sender.protocol_version >= 2
            if self.spec.batch and self.options.transport == "tcp":
                self.lines = IlpOverTcp(options.host, options.ilp_tcp_port, options.request_timeout_s)
                try:
                    self.lines.connect()
                except IlpWriteFailed as error:
                    raise ModuleError(str(error)) from None
            elif self.spec.batch and self.options.batch_encoding == "numpy":
                self.lines = IlpOverHttp(options.host, options.http_port, options.request_timeout_s)
            if self.spec.batch and self.options.batch_encoding == "dataframe":
                # Imported now, not in the first timed batch: importing pandas takes about a second.
                try:
                    import pandas  # noqa: F401
                except ImportError:
                    raise ModuleError("questdb: batch_encoding dataframe needs pandas; install it or use batch_encoding=numpy or rows") from None

    def _new_sender(self) -> Sender:
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
        if self.lines is not None:
            self.lines.close()
            self.lines = None
        if self.sender is not None:
            self.sender.close()
            self.sender = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
