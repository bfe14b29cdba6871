"""PostgreSQL and its wire-compatible relatives (CockroachDB, YugabyteDB YSQL, TimescaleDB's base).

Insert modes:
- single (no --batch): one INSERT per event with autocommit, the durable-per-message case;
- batch, COPY (default): one binary COPY per batch, built with NumPy, committed on its own: into one
  table the COPY runs in autocommit (the server commits it; no BEGIN and COMMIT round trips), sent
  through the driver's libpq wrapper (simulator/wire/pg_copy_call.py: half the client CPU of its
  Copy objects); into several tables the batch's COPYs in one transaction;
- batch, values lists (`use_values_lists=true` or `batch_mode=values`): multi-row INSERTs, then COMMIT;
- batch, transaction (`batch_mode=transaction`): N single-row INSERTs pipelined, then one COMMIT.
Serialisation failures, deadlocks and CockroachDB's restart errors are retried a bounded number of times.

Reading back: the six queries (device-downsample with `date_trunc`), and scans through a server-side
cursor (DECLARE / FETCH, which CockroachDB and YugabyteDB YSQL also support) inside a read-only
transaction. The record of expected answers is a table of its own, `iotbench_expected`.

The roles: schema.py, writer.py, reader.py, records.py; options.py their options and base class. The timescaledb
module builds on each of them (and on this Module).
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, ClassVar

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, Pace, PrepareNext
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, connected, played_by
from iotdb_bench.simulator.modules.postgres.options import BATCH_KINDS, PostgresOptions
from iotdb_bench.simulator.modules.postgres.reader import LOOSE_INDEX_SCAN_NEWEST_PER_DEVICE, NEWEST_PER_DEVICE_LOOSE_INDEX_SCAN, PostgresReader
from iotdb_bench.simulator.modules.postgres.records import PostgresRecords
from iotdb_bench.simulator.modules.postgres.schema import PostgresSchema
from iotdb_bench.simulator.modules.postgres.writer import PostgresWriter
from iotdb_bench.simulator.spec import TSBS_TABLES, RunSpec

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import TupleRow

__all__ = ["LOOSE_INDEX_SCAN_NEWEST_PER_DEVICE", "NEWEST_PER_DEVICE_LOOSE_INDEX_SCAN", "Module", "PostgresOptions"]


class Module(DatabaseModule):
    Options: ClassVar[type[PostgresOptions]] = PostgresOptions
    options: PostgresOptions
    capabilities = Capabilities(
        pace=Pace(scan_rows_per_s=100_000.0, btree=True),  # a device's pages over the protocol (seed 004's 100m-c: 79,550 rows/s)
        shapes=ALL_SHAPES, tsbs_shapes=frozenset(TSBS_TABLES), measurements=True, sensors=True, transactions=True, markers=True, drivers=("psycopg", "psycopg-binary"),
        # COPY sends the rows before it waits for the server, which leaves time to prepare the next
        # batch (about 50 us per 1000 events against milliseconds of server work); the other batch
        # modes prepare it in a helper thread (see __init__).
        prepare_next=PrepareNext.during_call, query_languages=("sql/postgresql", "sql"),
    )
    # Relatives (TimescaleDB) name their own classes.
    schema, writer, reader, records = played_by(PostgresSchema, PostgresWriter, PostgresReader, PostgresRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        self._conn: Connection[TupleRow] | None = None  # the driver's connection, shared by the roles (`conn`)
        if self.batch_mode != "copy":
            self.capabilities = dataclasses.replace(self.capabilities, prepare_next=PrepareNext.helper_thread)

    def validate(self) -> None:
        super().validate()
        self.check_query_indices(self.options.create_indices)
        self.check_tsbs_layout_options({"primary_key_constraint": self.options.primary_key_constraint})
        if self.spec.batch and self.batch_mode == "copy" and not self.options.copy_supported:
            raise ModuleError(
                f"target '{self.spec.target}' does not support COPY; use --extra-option use_values_lists=true"
            )

    @property
    def conn(self) -> Connection[TupleRow]:
        """The connection `connect()` opened, as the roles use it."""
        return connected(self._conn, self.spec.module)

    @property
    def batch_mode(self) -> str:
        return self.options.chosen_batch_mode

    def batch_kind(self) -> str:
        return BATCH_KINDS[self.batch_mode]

    # -- lifecycle -------------------------------------------------------------------------
    def connect(self) -> None:
        import psycopg

        try:
            self._conn = psycopg.connect(
                self.options.connection_string,
                password=self.options.password or None,
                connect_timeout=self.options.connect_timeout,
                autocommit=True,
            )
        except psycopg.OperationalError as error:
            host, port = self.address()
            reason = one_line(str(error).strip().splitlines()[-1] if str(error).strip() else error)
            raise ModuleError(f"cannot connect to PostgreSQL at {host}:{port}: {reason}") from None
        with self.conn.cursor() as cursor:
            cursor.execute("SET TIME ZONE 'UTC'")
            for statement in filter(None, (s.strip() for s in self.options.session_statements.split(";"))):
                cursor.execute(statement)
            if self.spec.task == "query" and self.spec.query_timeout:
                cursor.execute(f"SET statement_timeout = {int(self.spec.query_timeout * 1000)}")
        # Batches are one transaction each; single inserts, and COPY batches that are one statement,
        # commit by themselves (autocommit); with --commit-interval the worker commits single inserts.
        self.conn.autocommit = (not self.spec.batch and not self.spec.commit_interval_s) or (bool(self.spec.batch) and self.writer.one_copy_per_batch)

    def address(self) -> tuple[str, str]:
        """(host, port) of the connection string, the PG* environment variables filling the gaps."""
        from psycopg.conninfo import conninfo_to_dict

        params = conninfo_to_dict(self.options.connection_string)
        return (
            str(params.get("host") or os.environ.get("PGHOST", "localhost")),
            str(params.get("port") or os.environ.get("PGPORT", "5432")),
        )

    def server_address(self) -> tuple[str, int] | None:
        host, port = self.address()
        host = host.split(",")[0]
        # A Unix-socket folder: the server listens on the socket file named after the port.
        return (f"{host}/.s.PGSQL.{port}" if host.startswith("/") else host), int(port.split(",")[0])

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
