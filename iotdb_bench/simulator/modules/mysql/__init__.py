"""MySQL and MariaDB through PyMySQL (pure Python, no client library needed).

Insert modes, after the blog post that compared them (naive vs transaction inserts):
- single (no --batch): one INSERT per event with autocommit, durable per message;
- batch, transaction (default): one single-row INSERT per event, one COMMIT per batch;
- batch, values lists (`use_values_lists=true` or `batch_mode=values`): into one table, one multi-row
  INSERT in autocommit (the server commits it: no COMMIT round trip), several (above 1 MiB of
  text) between BEGIN and COMMIT; into several tables, one COMMIT.
Statements are rendered to SQL text while preparing (outside the timed calls): every value is a
generated number, timestamp or fixed-alphabet id, so no escaping is needed and a timed call is
only the round trips to the server. Deadlocks and lock wait timeouts are retried.

TSBS's shapes (`--schema tsbs-cpu`, `tsbs-devops`, `tsbs-iot`, docs/tsbs.md): TSBS has no MySQL
target, so its TimescaleDB target's layout in MySQL's SQL (a `tags` table and a table per measurement
with tags_id, DATETIME(3) times in UTC, DOUBLE fields, the measurement's own tags as JSON, TSBS's
indexes; IoT's null fields and names NULL), written like the tool's other rows; its 15 DevOps and 13
IoT query types in MySQL's and MariaDB's words (simulator/wire/tsbs_sql.py, tsbs_iot_sql.py; the IoT
types need window functions: MariaDB 10.2, MySQL 8.0).

Reading back: the six queries (device-downsample buckets with TIMESTAMPDIFF in minutes) and scans
through an unbuffered cursor (SSCursor: rows stream from the server as they are fetched). The record
of expected answers is a table of its own, `iotbench_expected`.

The roles: schema.py, writer.py, reader.py, records.py; options.py their options and base class.
"""

from __future__ import annotations

import contextlib
from typing import Any

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, Pace
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, played_by
from iotdb_bench.simulator.modules.mysql.options import MysqlOptions
from iotdb_bench.simulator.modules.mysql.reader import MysqlReader
from iotdb_bench.simulator.modules.mysql.records import MysqlRecords
from iotdb_bench.simulator.modules.mysql.schema import MysqlSchema
from iotdb_bench.simulator.modules.mysql.writer import MysqlWriter
from iotdb_bench.simulator.spec import TSBS_TABLES, RunSpec

__all__ = ["Module", "MysqlOptions"]


class Module(DatabaseModule):
    Options = MysqlOptions
    options: MysqlOptions
    capabilities = Capabilities(
        pace=Pace(btree=True),
        shapes=ALL_SHAPES, tsbs_shapes=frozenset(TSBS_TABLES), measurements=True, sensors=True, transactions=True,
        markers=True, drivers=("PyMySQL",), query_languages=("sql/mysql", "sql"))
    schema, writer, reader, records = played_by(MysqlSchema, MysqlWriter, MysqlReader, MysqlRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        self.conn: Any = None  # the driver's connection (PyMySQL's, untyped), shared by the roles
        self.version = ""  # SELECT VERSION() at connect

    def validate(self) -> None:
        super().validate()
        self.check_query_indices(self.options.create_indices)
        if self.spec.tsbs and self.options.primary_key_constraint:
            raise ModuleError(f"module 'mysql': primary_key_constraint does not apply to --schema {self.spec.shape} (TSBS's layout has no key)")

    def notes(self) -> list[str]:
        if (self.options.engine or "").lower() == "myisam" and (self.spec.batch or self.spec.commit_interval_s):
            return ["MyISAM has no transactions: every statement is stored on its own and COMMIT does nothing"]
        return []

    @property
    def batch_mode(self) -> str:
        return self.options.chosen_batch_mode

    def batch_kind(self) -> str:
        return "values lists" if self.batch_mode == "values" else "single-row INSERTs in one transaction"

    # -- lifecycle -------------------------------------------------------------------------
    def connect(self) -> None:
        import pymysql

        options = self.options
        try:
            self.conn = pymysql.connect(
                host=options.host, port=options.port, user=options.user, password=options.password or "",
                database=options.database, connect_timeout=options.connect_timeout, charset="utf8mb4",
                autocommit=(not self.spec.batch and not self.spec.commit_interval_s) or self.writer.batches_in_autocommit,
            )
        except pymysql.err.OperationalError as error:
            reason = error.args[1] if len(error.args) > 1 else str(error)
            raise ModuleError(f"cannot connect to MySQL at {options.host}:{options.port}: {reason}") from None
        with self.conn.cursor() as cursor:
            # The handshake's version may carry MariaDB's "5.5.5-" compatibility prefix; VERSION() does not.
            cursor.execute("SELECT VERSION()")
            self.version = cursor.fetchone()[0]
            cursor.execute("SET time_zone = '+00:00'")
            # Divisions and means of integers are DECIMALs of 4 digits after the point by default: 30 keep
            # TSBS's IoT means (hours per day, activity / 144, session lengths) exact to far below the check's 1e-9.
            cursor.execute("SET SESSION div_precision_increment = 30")
            if self.spec.task == "query" and self.spec.query_timeout:
                if self.is_mariadb:
                    cursor.execute(f"SET SESSION max_statement_time = {self.spec.query_timeout}")
                else:
                    cursor.execute(f"SET SESSION max_execution_time = {int(self.spec.query_timeout * 1000)}")

    def server_address(self) -> tuple[str, int] | None:
        return self.options.host, self.options.port

    @property
    def is_mariadb(self) -> bool:
        return "MariaDB" in self.version

    def fresh_snapshot(self) -> None:
        """Outside autocommit, end the open transaction so the next read sees committed data."""
        if not self.conn.get_autocommit():
            self.conn.commit()

    def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):  # already gone (server closed it): nothing left to release
                self.conn.close()
            self.conn = None
