"""Apache IoTDB 2.x through its Python Session (`apache-iotdb`, Thrift RPC on port 6667).

Two data models, chosen with the option `model`:
- tree (default): one aligned device per simulated device, path root.<database>.<table>.`<device id>`,
  measurements sequence_number (INT64) and temperature (DOUBLE). A batch is one aligned tablet per
  device of the batch, cut from the batch's columns at once (tablets.py), all sent in one
  `insert_aligned_tablets` call (`tree_batch=records`: one `insert_aligned_records` call); a single
  insert is one `insert_aligned_record`. setup() creates every device's aligned timeseries of the
  run, so the schema is not created by the first timed insert.
- table: the table model of IoTDB 2 (database <database>, table events with device_id as TAG and
  the two FIELDs). A batch is one tablet per table with all its devices; a single insert is a
  one-row tablet. Devices are registered by the first insert that names them.

A clean setup deletes and recreates the database (deleted series stay in IoTDB's files until a
compaction, and the storage figure would count them). Storage is IoTDB's own accounting (SHOW REGIONS'
TsFileSize after a FLUSH) or, with `data_dir`, the database's files on this machine.

TSBS's cpu-only and devops data (`--schema tsbs-cpu`, `tsbs-devops`, docs/tsbs.md), tree model only, in
the layout of benchANT's TSBS IoTDB target: an aligned device per host and measurement
root.<database>.<measurement>.host_<i> (cpu-only's fields INT32, devops' as TSBS's serializers type
them: INT64, mem's percentages DOUBLE; series.py), the host's tags and the measurement's own as tags of
its first field; TSBS's DevOps query types over cpu in that target's SQL made exact (tsbs_queries.py).
TSBS's IoT data (`--schema tsbs-iot`) the same way: an aligned device per truck and measurement,
root.<database>.readings.truck_<i> and root.<database>.diagnostics.truck_<i>, the truck's eight tags as tags
of its first field, TSBS's null fields as nulls (the tablets' bitmaps), and the rows TSBS writes without the
truck's name (which its loaders tie to no truck) in root.<database>.<measurement>.unnamed.truck_<i>, out of
every query's reach; the 13 IoT query types as IoTDB's statements put together on the client (tsbs_iot.py).

IoTDB identifies a point by its series and time (a later write at the same time overwrites), so
there is no key column: --primary-key db (the default) and none are accepted and mean the same.
Tablets are encoded (big-endian columns, the device ids' STRING column) in prepare_batch, outside
the timed call. IoTDB counts data points (rows x measurements, seed 003's unit): see notes().

Workloads (simulator/workload/shapes.py): `--measurements N` adds the measurements m1..m{N-1} (DOUBLE) to each
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

from iotdb_bench.simulator.capabilities import Capabilities, No, Pace
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, played_by
from iotdb_bench.simulator.modules.iotdb.connection import IotdbConnection
from iotdb_bench.simulator.modules.iotdb.options import SETUP_MARKER, IotdbOptions
from iotdb_bench.simulator.modules.iotdb.reader import IotdbReader
from iotdb_bench.simulator.modules.iotdb.records import IotdbRecords
from iotdb_bench.simulator.modules.iotdb.schema import IotdbSchema
from iotdb_bench.simulator.modules.iotdb.series import Series
from iotdb_bench.simulator.modules.iotdb.writer import IotdbWriter
from iotdb_bench.simulator.spec import PrimaryKey, RunSpec
from iotdb_bench.simulator.workload.tsbs import USE_CASES

__all__ = ["Module"]


class Module(DatabaseModule):
    Options = IotdbOptions
    options: IotdbOptions
    capabilities = Capabilities(
        pace=Pace(tsbs_query_s=0.01),
        tsbs_shapes=frozenset({"tsbs-cpu", "tsbs-devops", "tsbs-iot"}), primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none}), measurements=True, sensors=True,
        transactions=No("IoTDB has no transactions to commit every S seconds"), query_languages=("iotdb",),
    )
    schema, writer, reader, records = played_by(IotdbSchema, IotdbWriter, IotdbReader, IotdbRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        self.connection = IotdbConnection(self.options)  # the driver's session, shared by the roles
        self.series = Series(spec, self.layouts, self.options)  # measurements and device paths, shared too

    def validate(self) -> None:
        if self.spec.shape != "events" and not self.spec.tsbs:
            raise ModuleError(
                f"module 'iotdb' does not support --schema {self.spec.shape}: IoTDB stores series of devices, and these rows have no "
                "device (rows of different workers with equal timestamps would overwrite each other; use --schema events)"
            )
        if self.spec.tsbs and self.options.model != "tree":
            raise ModuleError(f"module 'iotdb' writes --schema {self.spec.shape} in the tree model, as the IoTDB target of TSBS's benchANT "
                              "fork lays it out (a device per host): drop model=table")
        if self.spec.query_file is not None and self.options.model != "tree":
            raise ModuleError("module 'iotdb' reads a query file's texts (language iotdb) in the tree model: drop model=table")
        self.validate_workload()
        if self.spec.primary_key not in self.capabilities.primary_keys:
            raise ModuleError(
                f"module 'iotdb' identifies a point by its series and time and has no key column: "
                f"--primary-key {self.spec.primary_key.value} does not apply; use db (the default) or none"
            )

    # -- how the module describes its runs -------------------------------------------------
    def batch_kind(self) -> str:
        if self.series.tree:
            return "aligned records, one per event" if self.options.tree_batch == "records" else "aligned tablets, one per device"
        return "tablet per table"

    def insert_mode(self) -> str:
        if not self.spec.batch:
            return "single inserts (insert_aligned_record)" if self.series.tree else "single inserts (one-row tablets)"
        return super().insert_mode()

    def notes(self) -> list[str]:
        if self.spec.task != "insert":  # what the notes say is about the run's writes
            return []
        names = self.series.measurement_names
        values = len(names) - 1
        database = f"root.{self.options.database}" if self.series.tree else self.options.database
        storage = [f"storage: the sizes of the files of database {database} under {self.options.data_dir} (its TsFiles and write-ahead "
                   "log), after a FLUSH" if self.options.data_dir else
                   f"storage: IoTDB's own accounting after a FLUSH, the TsFileSize of database {database}'s data regions (SHOW REGIONS, "
                   "to three significant digits; the write-ahead log not counted), every table in it"]
        if self.spec.shape == "tsbs-cpu":
            return [f"TSBS's cpu rows as the IoTDB target of benchANT's TSBS lays them out: an aligned device per host, "
                    f"root.{self.options.database}.cpu.host_<i>, its ten fields INT32 (points/s = 10 x inserts/s), the host's ten tags "
                    "as tags of its usage_user series; setup creates every host's device before the timed phase", *storage]
        if self.spec.shape == "tsbs-iot":
            return [f"TSBS's IoT rows: an aligned device per truck and measurement, root.{self.options.database}.readings.truck_<i> "
                    "(seven DOUBLE fields) and .diagnostics.truck_<i> (fuel_state and current_load DOUBLE, status INT64), TSBS's null "
                    "fields as nulls, the truck's eight tags as tags of its first field; the rows TSBS writes without the truck's name "
                    f"in root.{self.options.database}.<measurement>.unnamed.truck_<i>, which no query reads (TSBS ties them to no truck); "
                    "setup creates every device before the timed phase", *storage]
        if self.spec.tsbs:
            use_case = USE_CASES[self.spec.shape]
            return [f"TSBS's devops rows as TSBS's IoTDB targets lay them out: an aligned device per host and measurement, "
                    f"root.{self.options.database}.<measurement>.host_<i>, its fields INT64 (mem's percentages DOUBLE; points/s = "
                    f"{use_case.fields_per_step} / {len(use_case.measurements)} x inserts/s), the host's ten tags and the measurement's own as tags of its first field; setup creates "
                    "every device before the timed phase", *storage]
        notes = [
            f"IoTDB counts data points (rows x measurements, seed 003's unit): an event is one row with {values} measured "
            f"value{'s' if values > 1 else ''} ({', '.join(names[1:])}), so points/s = {values} x inserts/s; "
            f"sequence_number is stored beside them as one more series ({values + 1} values per row on disk)", *storage,
        ]
        if self.series.tree:
            notes.append("tree model: setup creates the devices' aligned timeseries and the database's data regions (one "
                         f"point in root.{self.options.database}.{SETUP_MARKER}) before the timed phase")
        else:
            notes.append(f"table model: setup creates the database's data regions (one row in {SETUP_MARKER}); a device is "
                         "registered by the first insert that names it, inside the timed phase (--prefill absorbs it)")
        return notes

    def server_address(self) -> tuple[str, int] | None:
        return self.options.host, self.options.port  # the DataNode's client port: its process is the database's CPU

    # -- lifecycle -------------------------------------------------------------------------
    def connect(self) -> None:
        self.connection.connect()

    def close(self) -> None:
        self.connection.close()
