"""The iotdb module's schema and counting: the database, every device's aligned timeseries (tree) or
the tables (table model), the write that makes the data regions, and counts of temperature points (TSBS's
shapes: of each measurement's first field)."""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path

import numpy as np

from iotdb_bench.simulator.modules.base import ModuleError, SchemaRole
from iotdb_bench.simulator.modules.iotdb.connection import literal
from iotdb_bench.simulator.modules.iotdb.options import SETUP_MARKER, STORAGE_POLL_S, IotdbRole
from iotdb_bench.simulator.modules.iotdb.series import Device
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import TIME_ORIGIN_MS
from iotdb_bench.simulator.workload.tsbs import USE_CASES

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
        """Clean: the database is deleted and made again (IoTDB keeps deleted series' points in its files until
        a compaction, and the storage figure would count them), so it holds the run's tables alone."""
        connection, series = self.module.connection, self.module.series
        database = f"root.{self.options.database}"
        exists = database in connection.column(f"SHOW DATABASES {database}", "Database")
        if exists and self.spec.clean:
            connection.statement(f"DELETE DATABASE {database}")
        if not exists or self.spec.clean:
            connection.statement(f"CREATE DATABASE {database}{self._database_clause()}")
        for table in self.spec.table_names:
            existing: set[str] = set()
            if not self.spec.clean:  # SHOW DEVICES back-quotes only the names that need it (w000000-d000001, not truck_0)
                existing = {path.replace("`", "") for path in connection.column(f"SHOW DEVICES {database}.{table}.**", "Device")}
            wanted = [device for device in series.run_devices() if device.table == table and device.path.replace("`", "") not in existing]
            for device in wanted:
                connection.statement(f"CREATE ALIGNED TIMESERIES {device.path}({self._columns(device)})")
            log.info("%s: %d devices created, %d existed", table, len(wanted), len(existing))
        connection.statement(f"INSERT INTO {database}.{SETUP_MARKER}(timestamp, ready) VALUES ({TIME_ORIGIN_MS}, true)")

    def _columns(self, device: Device) -> str:
        """A device's measurements and types; a TSBS host's ten tags (and its measurement's own: diskio's
        serial, ...) or a truck's eight (its capacities as text: 2000.0) are tags of its first measurement
        (cpu's usage_user, readings' latitude, diagnostics' fuel_state), which SHOW TIMESERIES ... WHERE
        TAGS(...) finds hosts and trucks by. A truck's unnamed device has its tags but the name."""
        fields = self.module.series.fields[device.table]
        typed = [f"{name} {kind}" for name, kind in zip(fields.names, fields.type_names())]
        if self.spec.tsbs:
            use_case = USE_CASES[self.spec.shape]
            entity = use_case.entity_index(device.device.decode())
            tags = [*zip((name for name, _ in use_case.tags), use_case.tag_rows(self.spec.seed, entity, 1)[0]),
                    *own_tags(self.spec, device.table, entity)]
            tags = [(name, value) for name, value in tags if device.named or name != "name"]
            typed[0] += " tags(" + ", ".join(f"`{name}`={literal(str(value))}" for name, value in tags) + ")"
        return ", ".join(typed)

    def _setup_table(self) -> None:
        connection = self.module.connection
        database = self.options.database
        if self.spec.clean:  # as the tree model's: deleted rows would stay in the files until a compaction
            connection.statement(f"DROP DATABASE IF EXISTS {database}")
        connection.statement(f"CREATE DATABASE IF NOT EXISTS {database}{self._database_clause()}")
        connection.statement(f"USE {database}")
        for table in self.spec.table_names:
            measured = self.module.series.fields[table]
            fields = ", ".join(f"{name} {kind} FIELD" for name, kind in zip(measured.names, measured.type_names()))
            tags = "device_id STRING TAG" + (", sensor STRING TAG" if self.spec.sensors > 1 else "")
            connection.statement(f"CREATE TABLE IF NOT EXISTS {table} ({tags}, {fields})")
        connection.statement(f"CREATE TABLE IF NOT EXISTS {SETUP_MARKER} (ready BOOLEAN FIELD)")
        connection.statement(f"INSERT INTO {SETUP_MARKER}(time, ready) VALUES ({TIME_ORIGIN_MS}, true)")

    def storage_bytes(self) -> int | None:
        """The database's data after a FLUSH (memtables written to TsFiles): with `data_dir` the sizes of its
        files there (TsFiles and write-ahead log), else IoTDB's own accounting, the TsFileSize of its data
        regions in SHOW REGIONS (to three significant digits, "Unknown" while a region has no TsFile). The
        ConfigNode learns those sizes from the DataNode every few seconds: when the run's tables hold
        points, the figure is read again until it changes after the FLUSH (at most `storage_wait_s`)."""
        database = f"root.{self.options.database}" if self.module.series.tree else self.options.database
        connection = self.module.connection
        connection.statement(f"FLUSH {database}")
        if self.options.data_dir:
            return files_size(Path(self.options.data_dir), database)
        reported = self._region_sizes(database)
        if not self.count():  # nothing of the run's was flushed (the setup's one point aside): no new size to wait for
            return reported
        deadline = time.monotonic() + self.options.storage_wait_s
        while time.monotonic() < deadline:
            time.sleep(STORAGE_POLL_S)
            if (now := self._region_sizes(database)) != reported:
                return now
        log.warning("IoTDB reported no new size of %s within %g s of a FLUSH: the last one is used", database, self.options.storage_wait_s)
        return reported

    def _region_sizes(self, database: str) -> int:
        """The database's data regions' TsFileSize (SHOW REGIONS lists every database of the session's model)."""
        columns, rows = self.module.connection.fetch_named("SHOW REGIONS")
        kind, name, size = columns.index("Type"), columns.index("Database"), columns.index("TsFileSize")
        return sum(size_in_bytes(str(row[size])) for row in rows if row[kind] == "DataRegion" and row[name] == database)

    def server_version(self) -> str:
        version = self.module.connection.first_row("SHOW VERSION")  # Version, BuildInfo
        return f"IoTDB {' '.join(str(part) for part in version)}" if version else "IoTDB (version not reported)"

    def count(self) -> int:
        connection = self.module.connection
        series = self.module.series
        if self.spec.shape == "tsbs-iot":  # the rows' times on the named and unnamed devices, whichever fields are null
            return sum(int(count) for table in self.spec.table_names
                       for count in connection.column(f"SELECT count_time(*) FROM root.{self.options.database}.{table}.** ALIGN BY DEVICE",
                                                      "count_time(*)"))
        if series.tree and self.spec.tsbs:  # a measurement's first field, a point per row (first fields' names repeat: disk's and mem's total)
            counts = [connection.first_row(f"SELECT count({series.counted(table)}) FROM root.{self.options.database}.{table}.** GROUP BY LEVEL = 1")
                      for table in self.spec.table_names]
            return sum(int(values[0]) for values in counts if values)
        if series.tree:
            paths = ", ".join(f"root.{self.options.database}.{table}.**" for table in self.spec.table_names)
            values = connection.first_row(f"SELECT count(temperature) FROM {paths} GROUP BY LEVEL = 1")
        else:
            # count(temperature), not count(*): IoTDB 2.0.1 brings back the times (without values) of rows
            # of a dropped table once a table of the same name gets new rows, and count(*) counts them.
            values = [sum(connection.first_row(f"SELECT count(temperature) FROM {table}")[0] for table in self.spec.table_names)]
        return int(values[0]) if values else 0


def own_tags(spec: RunSpec, measurement: str, host: int) -> list[tuple[str, str]]:
    """A host's tags of its own for a measurement (diskio's serial, nginx's port and server, ...), TSBS's order."""
    values = USE_CASES[spec.shape].measurement(measurement).tag_values(spec.seed, np.array([host]))
    return [(name, found[0]) for name, found in values.items()]


_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15}


def size_in_bytes(text: str) -> int:
    """A size as SHOW REGIONS writes it ("5.26 KB", SI units; "Unknown" or "" for a region without TsFiles: 0)."""
    found = re.fullmatch(r"\s*([0-9.]+)\s*([KMGTP]?B)\s*", text)
    if found:
        return round(float(found.group(1)) * _UNITS[found.group(2)])
    if text.strip() in ("", "Unknown", "None", "nan"):
        return 0
    raise ModuleError(f"IoTDB's SHOW REGIONS gave a TsFileSize the module cannot read: {text!r}")


def files_size(folder: Path, database: str) -> int:
    """Bytes of a database's files under a DataNode's folder: data/{sequence,unsequence}/<database>/ (TsFiles
    and their resource files) and wal/<database>-<region>/."""
    if not (folder / "data").is_dir():
        raise ModuleError(f"data_dir {folder} holds no data/ folder: name the DataNode's folder (the one with data/ and wal/)")
    parts = [folder / "data" / kind / database for kind in ("sequence", "unsequence")] + list((folder / "wal").glob(f"{database}-*"))
    return sum(path.stat().st_size for part in parts if part.is_dir() for path in part.rglob("*") if path.is_file())
