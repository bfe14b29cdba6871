"""Apache IoTDB 2.x through its Python Session (`apache-iotdb`, Thrift RPC on port 6667).

Two data models, chosen with the option `model`:
- tree (default): one aligned device per simulated device, path root.<database>.<table>.`<device id>`,
  measurements sequence_number (INT64) and temperature (DOUBLE). A batch is one aligned tablet
  (NumPy columns) per device of the batch, all sent in one `insert_aligned_tablets` call; a single
  insert is one `insert_aligned_record`. setup() creates every device's aligned timeseries of the
  run, so the schema is not created by the first timed insert.
- table: the table model of IoTDB 2 (database <database>, table events with device_id as TAG and
  the two FIELDs). A batch is one tablet per table with all its devices; a single insert is a
  one-row tablet. Devices are registered by the first insert that names them.

IoTDB identifies a point by its series and time (a later write at the same time overwrites), so
there is no key column: --primary-key db (the default) and none are accepted and mean the same.
Tablets are encoded (big-endian columns, the device ids' STRING column) in prepare_batch, outside
the timed call. IoTDB counts data points (rows x measurements, seed 003's unit): see notes().

Workloads (simulator/shapes.py): `--measurements N` adds the measurements m1..m{N-1} (DOUBLE) to each
device beside temperature (tree: the aligned device's timeseries; table: FIELDs), so a row holds N
data points; `--sensors M` makes each sensor a device of its own under its device's node
(tree: root.<database>.<table>.`<device id>`.s<k>; table: a second TAG `sensor`). Seed 002's shapes
(slim, light, large) are refused: their rows have no device to make a series of (a point being its
series and time, the rows of different workers with equal timestamps would overwrite each other), and
light's auto-increment key and secondary index have no counterpart. --commit-interval is refused: IoTDB
has no transactions. Single inserts go in the batch's order.

Reading back: the six queries in either model (tree: GROUP BY LEVEL, ALIGN BY DEVICE, SELECT LAST and,
for device-downsample, GROUP BY ([start, end), 1m) on the device; table: SQL with last_by and
date_bin), and scans of one device's points in time order, fetched a page (the query's fetch size)
at a time as DataFrames. IoTDB keeps one point per series and time, so a device's readings at one
instant are one point (the count check then says so). The record of expected answers lives beside
the tables: tree root.<database>.iotbench_expected (TEXT series `tables` and `record`, one point per
table layout), table <database>.iotbench_expected.
"""

from __future__ import annotations

import functools
import logging
import math
import zlib
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
from pydantic import Field

from iotdb_bench.simulator.answers import Answer, with_times
from iotdb_bench.simulator.capabilities import Capabilities, No
from iotdb_bench.simulator.errors import one_line
from iotdb_bench.simulator.events import TIME_ORIGIN_MS, EventBatch, device_ids
from iotdb_bench.simulator.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import RECORD_NAME, ModuleError, ModuleOptions, OneClassModule, Query
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME, PrimaryKey

log = logging.getLogger("iotdb")

# Status codes of IoTDB 2.0 (TSStatusCode) the module handles.
PATH_NOT_EXIST = 508
# setup() writes one point here (outside the run's tables) so the database's data regions exist
# before the timed phase: IoTDB creates them with the first write, which takes 0.2-1 s.
SETUP_MARKER = "iotbench_setup"


class IotdbOptions(ModuleOptions):
    host: str = "127.0.0.1"
    port: int = Field(6667, ge=1, le=65535)
    user: str = "root"
    password: str = "root"
    model: Literal["tree", "table"] = Field("tree", description="tree: aligned devices under root.<database>; table: IoTDB 2's table model")
    database: str = Field("iotbench", pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$", description="tree: root.<database>; table: <database>")
    data_region_groups: int | None = Field(None, ge=1, le=64, description="DATA_REGION_GROUP_NUM of a database the module creates; unset = the server's default")
    connect_timeout: float = Field(10.0, gt=0, description="seconds; also the socket timeout of every call")
    fetch_size: int = Field(5000, ge=1, description="rows per fetch of a query")
    rpc_compression: bool = False


class Module(OneClassModule):
    Options = IotdbOptions
    options: IotdbOptions
    capabilities = Capabilities(
        primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none}), measurements=True, sensors=True,
        transactions=No("IoTDB has no transactions to commit every S seconds"),
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._session = None
        self._tree = self.options.model == "tree"
        self._paths: dict[tuple[str, bytes, int], str] = {}  # (table, device id, sensor) -> device path
        # The stored measurements of a row: sequence_number (INT64), temperature and m1.. (DOUBLE).
        self._measurements = [column for column in self.layout.columns if column.kind in ("sequence", "float")]
        self.measurement_names = [column.name for column in self._measurements]

    def validate(self) -> None:
        if self.spec.shape != "events":
            raise ModuleError(
                f"module 'iotdb' does not support --schema {self.spec.shape}: IoTDB stores series of devices, and these rows have no "
                "device (rows of different workers with equal timestamps would overwrite each other; use --schema events)"
            )
        self.validate_workload()
        if self.spec.primary_key not in self.capabilities.primary_keys:
            raise ModuleError(
                f"module 'iotdb' identifies a point by its series and time and has no key column: "
                f"--primary-key {self.spec.primary_key.value} does not apply; use db (the default) or none"
            )

    # -- how the module describes its runs -------------------------------------------------
    def batch_kind(self) -> str:
        return "aligned tablets, one per device" if self._tree else "tablet per table"

    def insert_mode(self) -> str:
        if not self.spec.batch:
            return "single inserts (insert_aligned_record)" if self._tree else "single inserts (one-row tablets)"
        return super().insert_mode()

    def notes(self) -> list[str]:
        values = len(self._measurements) - 1
        notes = [
            f"IoTDB counts data points (rows x measurements, seed 003's unit): an event is one row with {values} measured "
            f"value{'s' if values > 1 else ''} ({', '.join(self.measurement_names[1:])}), so points/s = {values} x inserts/s; "
            f"sequence_number is stored beside them as one more series ({values + 1} values per row on disk)",
        ]
        if self._tree:
            notes.append("tree model: setup creates the devices' aligned timeseries and the database's data regions (one "
                         f"point in root.{self.options.database}.{SETUP_MARKER}) before the timed phase")
        else:
            notes.append(f"table model: setup creates the database's data regions (one row in {SETUP_MARKER}); a device is "
                         "registered by the first insert that names it, inside the timed phase (--prefill absorbs it)")
        return notes

    # -- lifecycle -------------------------------------------------------------------------
    def connect(self) -> None:
        from iotdb.Session import Session
        from iotdb.utils.exception import IoTDBConnectionException, StatementExecutionException

        options = self.options
        session = Session.init_from_node_urls(
            [f"{options.host}:{options.port}"], user=options.user, password=options.password, fetch_size=options.fetch_size,
            zone_id="UTC", connection_timeout_in_ms=round(options.connect_timeout * 1000),
        )
        if not self._tree:
            # What TableSession does; one Session type for both models. The database need not exist yet.
            session.sql_dialect, session.database = "table", options.database
        try:
            session.open(options.rpc_compression)
        except (IoTDBConnectionException, StatementExecutionException, OSError) as error:
            raise ModuleError(f"cannot connect to IoTDB at {options.host}:{options.port}: {one_line(error)}") from None
        self._session = session

    def close(self) -> None:
        if self._session is not None:
            try:
                self._session.close()
            except Exception as error:  # a dead connection cannot be closed politely
                log.debug("closing the session: %s", one_line(error))
            self._session = None

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        if self._tree:
            self._setup_tree()
        else:
            self._setup_table()

    def _database_clause(self) -> str:
        groups = self.options.data_region_groups
        if groups is None:
            return ""
        return f" WITH DATA_REGION_GROUP_NUM={groups}" if self._tree else f" WITH (DATA_REGION_GROUP_NUM={groups})"

    def _setup_tree(self) -> None:
        database = f"root.{self.options.database}"
        if database not in self._column(f"SHOW DATABASES {database}", "Database"):
            self._statement(f"CREATE DATABASE {database}{self._database_clause()}")
        for table in self.spec.table_names:
            existing: set[str] = set()
            if self.spec.clean:
                self._statement(f"DELETE TIMESERIES {database}.{table}.**", missing_ok=True)
            else:
                existing = set(self._column(f"SHOW DEVICES {database}.{table}.**", "Device"))
            wanted = [path for (name, _, _), path in self._run_devices().items() if name == table and path not in existing]
            columns = ", ".join(f"{name} {'INT64' if name == 'sequence_number' else 'DOUBLE'}" for name in self.measurement_names)
            for path in wanted:
                self._statement(f"CREATE ALIGNED TIMESERIES {path}({columns})")
            log.info("%s: %d devices created, %d existed", table, len(wanted), len(existing))
        self._statement(f"INSERT INTO {database}.{SETUP_MARKER}(timestamp, ready) VALUES ({TIME_ORIGIN_MS}, true)")

    def _setup_table(self) -> None:
        database = self.options.database
        self._statement(f"CREATE DATABASE IF NOT EXISTS {database}{self._database_clause()}")
        self._statement(f"USE {database}")
        for table in self.spec.table_names:
            if self.spec.clean:
                self._statement(f"DROP TABLE IF EXISTS {table}")
            fields = ", ".join(f"{name} {'INT64' if name == 'sequence_number' else 'DOUBLE'} FIELD" for name in self.measurement_names)
            tags = "device_id STRING TAG" + (", sensor STRING TAG" if self.spec.sensors > 1 else "")
            self._statement(f"CREATE TABLE IF NOT EXISTS {table} ({tags}, {fields})")
        self._statement(f"CREATE TABLE IF NOT EXISTS {SETUP_MARKER} (ready BOOLEAN FIELD)")
        self._statement(f"INSERT INTO {SETUP_MARKER}(time, ready) VALUES ({TIME_ORIGIN_MS}, true)")

    def _run_devices(self) -> dict[tuple[str, bytes, int], str]:
        """Every device (with --sensors: every sensor) of the run, all workers, keyed by (table, device id,
        sensor), with its tree path."""
        tables = self.spec.table_names
        devices = {}
        for worker in range(self.spec.workers):
            for index, device in enumerate(device_ids(worker, self.spec.devices_of(worker))):
                table = tables[index % len(tables)]
                for sensor in range(self.spec.sensors):
                    devices[(table, bytes(device), sensor)] = self._path(table, bytes(device), sensor)
        return devices

    def _path(self, table: str, device: bytes, sensor: int = 0) -> str:
        path = self._paths.get((table, device, sensor))
        if path is None:
            path = f"root.{self.options.database}.{table}.`{device.decode()}`" + (f".s{sensor}" if self.spec.sensors > 1 else "")
            self._paths[(table, device, sensor)] = path
        return path

    def server_version(self) -> str | None:
        version = self._first_row("SHOW VERSION")  # Version, BuildInfo
        return f"IoTDB {' '.join(str(part) for part in version)}" if version else "IoTDB (version not reported)"

    def count(self) -> int:
        if self._tree:
            series = ", ".join(f"root.{self.options.database}.{table}.**" for table in self.spec.table_names)
            values = self._first_row(f"SELECT count(temperature) FROM {series} GROUP BY LEVEL = 1")
        else:
            # count(temperature), not count(*): IoTDB 2.0.1 brings back the times (without values) of rows
            # of a dropped table once a table of the same name gets new rows, and count(*) counts them.
            values = [sum(self._first_row(f"SELECT count(temperature) FROM {table}")[0] for table in self.spec.table_names)]
        return int(values[0]) if values else 0

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> list[Any]:
        if self._tree:
            return [tablet for table, part in self.per_table(batch) for tablet in self._device_tablets(table, part)]
        return [self._table_tablet(table, part) for table, part in self.per_table(batch)]

    def insert_batch(self, prepared: list[Any]) -> None:
        if self._tree:
            self._session.insert_aligned_tablets(prepared)
        else:
            for tablet in prepared:
                self._session.insert_relational_tablet(tablet)

    def prepare_single(self, batch: EventBatch) -> list[Any]:
        """One item per event, in the batch's order (a --duration run may stop between two)."""
        tables = self.table_of_each(batch)
        if not self._tree:
            return [self._table_tablet(table, batch.select(slice(i, i + 1))) for i, table in enumerate(tables)]
        sensors = batch.sensor_index.tolist() if batch.sensor_index is not None else [0] * len(batch)
        values = list(zip(*(column.values(batch).tolist() for column in self._measurements)))
        return [(self._path(table, device, sensor), timestamp, list(row))
                for table, device, sensor, timestamp, row in zip(tables, batch.device_id.tolist(), sensors, batch.timestamp_ms.tolist(), values)]

    def insert_single(self, item: Any) -> None:
        if self._tree:
            path, timestamp, values = item
            self._session.insert_aligned_record(path, timestamp, self.measurement_names, self._types(), values)
        else:
            self._session.insert_relational_tablet(item)

    def _types(self) -> list[Any]:
        from iotdb.utils.IoTDBConstants import TSDataType

        return [TSDataType.INT64 if column.kind == "sequence" else TSDataType.DOUBLE for column in self._measurements]

    def _big_endian(self, batch: EventBatch) -> list[np.ndarray]:
        return [column.values(batch).astype(">i8" if column.kind == "sequence" else ">f8") for column in self._measurements]

    def _device_tablets(self, table: str, part: EventBatch) -> list[Any]:
        """One aligned tablet per device (with --sensors: per sensor) of `part`, each in time order,
        columns already big-endian."""
        series = part.device_index if part.sensor_index is None else part.device_index * self.spec.sensors + part.sensor_index
        order = np.argsort(series, kind="stable")
        ordered = series[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        ends = np.r_[starts[1:], len(order)]
        timestamps = part.timestamp_ms[order].astype(">i8")
        columns = [column[order] for column in self._big_endian(part)]
        sensors = part.sensor_index[order].tolist() if part.sensor_index is not None else [0] * len(order)
        tablet, types = _encoded_tablet_class(), self._types()
        return [
            tablet(self._path(table, bytes(part.device_id[order[start]]), sensors[start]), self.measurement_names, types,
                   [column[start:end] for column in columns], timestamps[start:end])
            for start, end in zip(starts.tolist(), ends.tolist())
        ]

    def _table_tablet(self, table: str, part: EventBatch) -> Any:
        """One tablet of the table model holding every device of `part` (time order within a device is kept)."""
        from iotdb.utils.IoTDBConstants import TSDataType
        from iotdb.utils.Tablet import ColumnType

        tags, tag_values = ["device_id"], [part.device_id]
        if part.sensor_index is not None:
            tags.append("sensor")
            tag_values.append(np.char.add(b"s", np.char.zfill(part.sensor_index.astype("S4"), 4)))
        return _encoded_tablet_class()(
            table, [*tags, *self.measurement_names], [TSDataType.STRING] * len(tags) + self._types(),
            [*tag_values, *self._big_endian(part)], part.timestamp_ms.astype(">i8"),
            column_types=[ColumnType.TAG] * len(tags) + [ColumnType.FIELD] * len(self._measurements),
        )

    # -- the record of expected answers ------------------------------------------------------
    def store_record(self, text: str) -> None:
        key = self.record_key()
        if self._tree:  # one point per table layout, at a time of its own
            self._session.insert_str_record(self._record_device(), _record_time(key), ["tables", "record"], [key, text])
            return
        self._statement(f"CREATE DATABASE IF NOT EXISTS {self.options.database}")
        self._statement(f"CREATE TABLE IF NOT EXISTS {self.options.database}.{RECORD_NAME} (tables STRING TAG, record STRING FIELD)")
        self._statement(f"INSERT INTO {self.options.database}.{RECORD_NAME}(time, tables, record) VALUES (0, {_literal(key)}, {_literal(text)})")

    def stored_record(self) -> str | None:
        from iotdb.utils.exception import StatementExecutionException

        key = self.record_key()
        if self._tree:
            statement = f"SELECT record FROM {self._record_device()} WHERE time = {_record_time(key)}"
        else:
            statement = f"SELECT record FROM {self.options.database}.{RECORD_NAME} WHERE tables = {_literal(key)}"
        try:
            rows = self._fetch(statement)
        except StatementExecutionException:  # no such table or series: nothing recorded here
            return None
        return str(rows[0][-1]) if rows else None

    def _record_device(self) -> str:
        return f"root.{self.options.database}.{RECORD_NAME}"

    # -- queries ---------------------------------------------------------------------------
    def queries(self) -> dict[str, Query]:
        self.one_table_queries()
        end = DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS
        if self._tree:
            # The queries read the table `events`, as every module's do. GROUP BY LEVEL = 1 merges the
            # devices' series into one (the tree model has no other cross-series aggregate).
            series = f"root.{self.options.database}.{SINGLE_TABLE_NAME}.*"
            downsample_device = self._path(self.spec.table_names[0], DOWNSAMPLE_DEVICE.encode())
            return {
                "count-events": self._rows(f"SELECT count(temperature) FROM {series} GROUP BY LEVEL = 1"),
                "temperature-min-max": self._rows(f"SELECT min_value(temperature), max_value(temperature) FROM {series} GROUP BY LEVEL = 1"),
                "temperature-stats": self._rows(
                    f"SELECT min_value(temperature), avg(temperature), max_value(temperature) FROM {series} GROUP BY LEVEL = 1"),
                "temperature-stats-per-device": self._rows(
                    f"SELECT min_value(temperature), avg(temperature), max_value(temperature) FROM {series} ALIGN BY DEVICE", _per_device),
                # One row per series: the device's newest time and value (served from IoTDB's last cache).
                "newest-per-device": self._rows(f"SELECT LAST temperature FROM {series}", _last_points),
                # One row per minute of the hour, empty minutes as NaN: those are left out.
                "device-downsample": self._rows(
                    f"SELECT min_value(temperature), avg(temperature), max_value(temperature) FROM {downsample_device} "
                    f"GROUP BY ([{DOWNSAMPLE_START_MS}, {end}), 1m)", _minutes_with_readings),
            }
        table = SINGLE_TABLE_NAME
        return {
            "count-events": self._rows(f"SELECT count(*) FROM {table}"),
            "temperature-min-max": self._rows(f"SELECT min(temperature), max(temperature) FROM {table}"),
            "temperature-stats": self._rows(f"SELECT min(temperature), avg(temperature), max(temperature) FROM {table}"),
            "temperature-stats-per-device": self._rows(
                f"SELECT device_id, min(temperature), avg(temperature), max(temperature) FROM {table} GROUP BY device_id"),
            "newest-per-device": self._rows(f"SELECT device_id, last(time), last_by(temperature, time) FROM {table} GROUP BY device_id",
                                            with_times(1)),
            "device-downsample": self._rows(
                f"SELECT date_bin(1m, time) AS minute, min(temperature), avg(temperature), max(temperature) FROM {self.spec.table_names[0]} "
                f"WHERE device_id = '{DOWNSAMPLE_DEVICE}' AND time >= {DOWNSAMPLE_START_MS} AND time < {end} GROUP BY 1 ORDER BY 1",
                with_times(0)),
        }

    def _rows(self, statement: str, convert=None) -> Query:
        def run() -> Answer:
            return Answer(self._fetch(statement, timeout_s=self.spec.query_timeout), convert)

        return run

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        if self._tree:
            paths = [path for table in self.spec.table_names
                     for path in self._column(f"SHOW DEVICES root.{self.options.database}.{table}.*", "Device")]
            return sorted({_device_of(path) for path in paths})
        return sorted({str(device) for table in self.spec.table_names
                       for (device,) in self._fetch(f"SELECT DISTINCT device_id FROM {table}")})

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        # A device always writes to the same table; the others hold none of its points.
        for table in self.spec.table_names:
            if self._tree:
                statement = f"SELECT temperature FROM {self._path(table, device.encode())}"  # in time order
            else:
                statement = f"SELECT time FROM {table} WHERE device_id = {_literal(device)} ORDER BY time"
            with self._session.execute_query_statement(statement) as data:
                data.set_fetch_size(page_size)
                while data.has_next_df():
                    frame = data.next_df()
                    if frame is not None and len(frame):
                        yield _epoch_ms(frame.iloc[:, 0])

    # -- statements ------------------------------------------------------------------------
    def _statement(self, statement: str, missing_ok: bool = False) -> None:
        from iotdb.utils.exception import StatementExecutionException

        try:
            self._session.execute_non_query_statement(statement)
        except StatementExecutionException as error:
            if missing_ok and _status_code(error) == PATH_NOT_EXIST:
                return
            raise ModuleError(f"IoTDB refused '{statement}': {one_line(error)}") from None

    def _fetch(self, statement: str, timeout_s: float = 0) -> list[list[Any]]:
        """Every row of a query, as lists of Python values (all rows are fetched)."""
        with self._session.execute_query_statement(statement, timeout=round(timeout_s * 1000)) as data:
            frame = data.todf()
        return frame.to_numpy().tolist()

    def _first_row(self, statement: str) -> list[Any]:
        rows = self._fetch(statement)
        return rows[0] if rows else []

    def _column(self, statement: str, name: str) -> list[Any]:
        with self._session.execute_query_statement(statement) as data:
            frame = data.todf()
        return frame[name].tolist() if name in frame else []


def _literal(text: str) -> str:
    """A string literal of IoTDB's SQL."""
    return "'" + text.replace("'", "''") + "'"


def _record_time(key: str) -> int:
    """The time of a table layout's record point in the tree model (stable across processes)."""
    return zlib.crc32(key.encode())


def _device_of(path: str) -> str:
    """The device id of a tree path root.<database>.<table>.`<device id>`."""
    return path.rsplit(".", 1)[-1].strip("`")


def _per_device(rows: list[list]) -> list[tuple]:
    """ALIGN BY DEVICE rows (path, min, avg, max) with the device id instead of its path."""
    return [(_device_of(path), *values) for path, *values in rows]


def _last_points(rows: list[list]) -> list[tuple]:
    """SELECT LAST rows (time, series path, value as text, type) as (device id, time, value)."""
    return [(_device_of(series.rsplit(".", 1)[0]), int(time), float(value)) for time, series, value, _ in rows]


def _minutes_with_readings(rows: list[list]) -> list[tuple]:
    """GROUP BY time rows (minute, min, avg, max), the minutes without readings (NaN or None) left out."""
    return [(int(minute), *values) for minute, *values in rows if values[0] is not None and not math.isnan(values[0])]


def _epoch_ms(column) -> np.ndarray:
    """A page's time column as int64 epoch ms: numbers in the tree model, timestamps in the table model."""
    if column.dtype.kind == "M":
        return column.dt.as_unit("ms").astype("int64").to_numpy()
    return column.to_numpy().astype(np.int64)


def _status_code(error: Exception) -> int | None:
    """The IoTDB status code at the start of a StatementExecutionException's text ("508: Path ...")."""
    head = str(error).split(":", 1)[0].strip()
    return int(head) if head.isdigit() else None


@functools.cache
def _encoded_tablet_class() -> type:
    """NumpyTablet whose values are encoded once, when it is made (in prepare_batch, outside the timed
    call), with the device ids' STRING column packed by NumPy instead of the driver's per-value loop."""
    from iotdb.utils.IoTDBConstants import TSDataType
    from iotdb.utils.NumpyTablet import NumpyTablet

    class EncodedTablet(NumpyTablet):
        def __init__(self, target, columns, types, values, timestamps, column_types=None):
            if len(timestamps) > 1 and not np.all(timestamps[1:] >= timestamps[:-1]):
                # Tablets are sorted by time (the driver would sort the other columns, not ours).
                order = np.argsort(timestamps, kind="stable")
                timestamps, values = timestamps[order], [column[order] for column in values]
            strings = {i: values[i] for i, kind in enumerate(types) if kind == TSDataType.STRING}
            # The driver would turn byte strings into str; it only needs them for its own encoding.
            super().__init__(target, columns, types, [np.zeros(len(v), ">i8") if i in strings else v for i, v in enumerate(values)],
                             timestamps, column_types=column_types)
            self._encoded = b"".join(_string_column(strings[i]) if i in strings else column.tobytes()
                                     for i, column in enumerate(self.get_values()))

        def get_binary_values(self) -> bytes:
            return self._encoded

    return EncodedTablet


def _string_column(values: np.ndarray) -> bytes:
    """A STRING column as IoTDB's tablet format wants it: per value a big-endian int32 length, then the
    bytes. Device ids are fixed-width byte strings, so every value has the same length."""
    width = values.dtype.itemsize
    if not (values.dtype.kind == "S" and np.all(np.char.str_len(values) == width)):
        raise ValueError("device ids must be fixed-width byte strings")
    packed = np.empty((len(values), 4 + width), dtype=np.uint8)
    packed[:, :4] = np.frombuffer(np.array(width, dtype=">i4").tobytes(), dtype=np.uint8)
    packed[:, 4:] = values.view(np.uint8).reshape(len(values), width)
    return packed.tobytes()
