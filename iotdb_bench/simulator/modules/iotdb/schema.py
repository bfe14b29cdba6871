"""The iotdb module's schema and counting: the database, every device's aligned timeseries (tree) or
the tables (table model), the write that makes the data regions, and counts of temperature points."""

from __future__ import annotations

import logging

from iotdb_bench.simulator.modules.base import SchemaRole
from iotdb_bench.simulator.modules.iotdb.options import SETUP_MARKER, IotdbRole
from iotdb_bench.simulator.workload.events import TIME_ORIGIN_MS

log = logging.getLogger("iotdb")


class IotdbSchema(IotdbRole, SchemaRole):
    def setup(self) -> None:
        if self.module.series.tree:
            self._setup_tree()
        else:
            self._setup_table()

    def _database_clause(self) -> str:
        groups = self.options.data_region_groups
        if groups is None:
            return ""
        return f" WITH DATA_REGION_GROUP_NUM={groups}" if self.module.series.tree else f" WITH (DATA_REGION_GROUP_NUM={groups})"

    def _setup_tree(self) -> None:
        connection, series = self.module.connection, self.module.series
        database = f"root.{self.options.database}"
        if database not in connection.column(f"SHOW DATABASES {database}", "Database"):
            connection.statement(f"CREATE DATABASE {database}{self._database_clause()}")
        for table in self.spec.table_names:
            existing: set[str] = set()
            if self.spec.clean:
                connection.statement(f"DELETE TIMESERIES {database}.{table}.**", missing_ok=True)
            else:
                existing = set(connection.column(f"SHOW DEVICES {database}.{table}.**", "Device"))
            wanted = [path for (name, _, _), path in series.run_devices().items() if name == table and path not in existing]
            columns = ", ".join(f"{name} {'INT64' if name == 'sequence_number' else 'DOUBLE'}" for name in series.measurement_names)
            for path in wanted:
                connection.statement(f"CREATE ALIGNED TIMESERIES {path}({columns})")
            log.info("%s: %d devices created, %d existed", table, len(wanted), len(existing))
        connection.statement(f"INSERT INTO {database}.{SETUP_MARKER}(timestamp, ready) VALUES ({TIME_ORIGIN_MS}, true)")

    def _setup_table(self) -> None:
        connection = self.module.connection
        database = self.options.database
        connection.statement(f"CREATE DATABASE IF NOT EXISTS {database}{self._database_clause()}")
        connection.statement(f"USE {database}")
        for table in self.spec.table_names:
            if self.spec.clean:
                connection.statement(f"DROP TABLE IF EXISTS {table}")
            fields = ", ".join(f"{name} {'INT64' if name == 'sequence_number' else 'DOUBLE'} FIELD" for name in self.module.series.measurement_names)
            tags = "device_id STRING TAG" + (", sensor STRING TAG" if self.spec.sensors > 1 else "")
            connection.statement(f"CREATE TABLE IF NOT EXISTS {table} ({tags}, {fields})")
        connection.statement(f"CREATE TABLE IF NOT EXISTS {SETUP_MARKER} (ready BOOLEAN FIELD)")
        connection.statement(f"INSERT INTO {SETUP_MARKER}(time, ready) VALUES ({TIME_ORIGIN_MS}, true)")

    def server_version(self) -> str:
        version = self.module.connection.first_row("SHOW VERSION")  # Version, BuildInfo
        return f"IoTDB {' '.join(str(part) for part in version)}" if version else "IoTDB (version not reported)"

    def count(self) -> int:
        connection = self.module.connection
        if self.module.series.tree:
            series = ", ".join(f"root.{self.options.database}.{table}.**" for table in self.spec.table_names)
            values = connection.first_row(f"SELECT count(temperature) FROM {series} GROUP BY LEVEL = 1")
        else:
            # count(temperature), not count(*): IoTDB 2.0.1 brings back the times (without values) of rows
            # of a dropped table once a table of the same name gets new rows, and count(*) counts them.
            values = [sum(connection.first_row(f"SELECT count(temperature) FROM {table}")[0] for table in self.spec.table_names)]
        return int(values[0]) if values else 0
