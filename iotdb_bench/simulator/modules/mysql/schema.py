"""The mysql module's schema and counting: one table per run table in the chosen engine (UUID()
defaults where the server has them, the query indices when asked) or TSBS's layout (its TimescaleDB
target's tags table and a table per measurement, simulator/wire/tsbs_sql.py), counts, the server's row-write counter and
the tables' size."""

from __future__ import annotations

from typing import Any

from iotdb_bench.simulator.modules.base import ModuleError, SchemaRole
from iotdb_bench.simulator.modules.mysql.options import COLUMN_TYPES, MysqlRole
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import sql as sql_common
from iotdb_bench.simulator.wire import tsbs_sql
from iotdb_bench.simulator.workload.events import CLIENT_KEY_WIDTH
from iotdb_bench.simulator.workload.tsbs import USE_CASES

ER_PARSE_ERROR = 1064


class MysqlSchema(MysqlRole, SchemaRole):
    def setup(self) -> None:
        import pymysql

        conn = self.module.conn
        conn.autocommit(True)
        with conn.cursor() as cursor:
            if self.spec.tsbs:
                self._setup_tsbs(cursor)
                return
            for table in self.spec.table_names:
                if self.spec.clean:
                    cursor.execute(f"DROP TABLE IF EXISTS {table}")
                try:
                    cursor.execute(self.create_table_statement(table))
                except pymysql.err.ProgrammingError as error:
                    if self.spec.primary_key is PrimaryKey.uuid and error.args[0] == ER_PARSE_ERROR:
                        raise ModuleError(
                            f"the server ({self.module.version}) does not support UUID() column defaults "
                            "(needs MariaDB 10.2+ or MySQL 8.0.13+); use another --primary-key"
                        ) from None
                    raise
                if self.options.create_indices:
                    self._create_indices(cursor, table, sql_common.index_statements(table))
                self._create_indices(cursor, table, sql_common.shape_index_statements(table, self.layout))

    def _setup_tsbs(self, cursor: Any) -> None:
        """TSBS's tags table and a table per measurement in the chosen engine, their indexes (MySQL has no CREATE INDEX IF NOT
        EXISTS: looked up first), and every host's tags: the run's rows refer to them by tags_id."""
        for statement in tsbs_sql.setup_statements(tsbs_sql.MYSQL, self.spec.clean, self.spec.shape):
            if statement.startswith("CREATE TABLE"):
                cursor.execute(statement + (f" ENGINE={self.options.engine}" if self.options.engine else ""))
            elif " INDEX " in statement:
                self._create_indices(cursor, statement.split(" ON ")[1].split()[0], [statement])
            else:
                cursor.execute(statement)
        cursor.executemany(tsbs_sql.insert_tags(tsbs_sql.MYSQL, self.spec.shape),
                           tsbs_sql.tag_rows(self.spec.seed, self.spec.all_devices, USE_CASES[self.spec.shape]))

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
        if self.module.version and self.module.is_mariadb and _version(self.module.version) >= (10, 7):
            return "id UUID NOT NULL DEFAULT UUID()"  # MariaDB's native 16-byte type
        return "id CHAR(36) NOT NULL DEFAULT (UUID())"

    def _create_indices(self, cursor: Any, table: str, statements: list[str]) -> None:
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
        self.module.fresh_snapshot()
        with self.module.conn.cursor() as cursor:
            total = 0
            for table in self.spec.table_names:
                cursor.execute(f"SELECT count(*) FROM {table}")
                total += cursor.fetchone()[0]
            return total

    def server_version(self) -> str:
        return self.module.version  # SELECT VERSION() at connect, e.g. "10.11.6-MariaDB-0+deb12u1"

    def server_counters(self) -> dict[str, int] | None:
        """The server's row-write counter: server-wide, so other clients' writes are included.

        MySQL has InnoDB's rows-inserted counter; MariaDB 10.6+ dropped it, Handler_write stands in.
        """
        with self.module.conn.cursor() as cursor:
            cursor.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_rows_inserted', 'Handler_write')")
            status = {name.lower(): int(value) for name, value in cursor.fetchall()}
        for name in ("innodb_rows_inserted", "handler_write"):
            if name in status:
                return {f"{name}_server_wide": status[name]}
        return None

    def storage_bytes(self) -> int | None:
        self.module.fresh_snapshot()
        with self.module.conn.cursor() as cursor:
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


def _version(server_info: str) -> tuple[int, ...]:
    """(10, 11, 19) from '10.11.19-MariaDB-0+deb12u1'."""
    numbers = server_info.split("-")[0].split(".")
    return tuple(int(n) for n in numbers if n.isdigit())
