"""The iotdb module's series: the measurements each table's rows store, their types and nulls, and the
tree model's device paths (root.<database>.<table>.`<device id>`[.s<sensor>]; TSBS's hosts
root.<database>.<measurement>.host_<i>, its trucks root.<database>.<measurement>.truck_<i> and, for the
rows TSBS writes without the truck's name, root.<database>.<measurement>.unnamed.truck_<i>), shared by
every role."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from iotdb_bench.simulator.modules.iotdb.options import IotdbOptions
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import EventBatch, device_ids
from iotdb_bench.simulator.workload.shapes import Column, Layout
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.hosts import entity_names

# IoTDB's type of each kind of stored value, and the big-endian NumPy type of its tablet column.
# TSBS's cpu-only fields are whole numbers in [0, 100]: INT32, as the IoTDB target of benchANT's TSBS
# stores them; the devops data's are typed as TSBS's serializers type them: an int64 INT64, a float64 DOUBLE.
_TYPES = {"sequence": ("INT64", ">i8"), "float": ("DOUBLE", ">f8"), "tsbs": ("INT32", ">i4"), "int64": ("INT64", ">i8")}
# The node under a measurement that holds TSBS's IoT rows whose name tag is null, a device per truck: TSBS's
# loaders tie such a row to no truck (TimescaleDB's tags_id NULL), so the queries, which read
# root.<database>.<measurement>.*, never see them; the row count does.
UNNAMED = "unnamed"


class Device(NamedTuple):
    """One device of a run: its table, device id (a TSBS host's or truck's name), tree path, and whether its rows
    carry the truck's name (TSBS's IoT rows without it go to devices of their own, UNNAMED)."""

    table: str
    device: bytes
    path: str
    named: bool = True


@dataclass(frozen=True)
class Fields:
    """The measurements one table's rows store (an aligned device's timeseries) and their kinds (_TYPES)."""

    columns: tuple[Column, ...]
    kinds: tuple[str, ...]

    @property
    def names(self) -> list[str]:
        return [column.name for column in self.columns]

    def type_names(self) -> list[str]:
        """The measurements' types in IoTDB's SQL (CREATE TIMESERIES)."""
        return [_TYPES[kind][0] for kind in self.kinds]

    def types(self) -> list[Any]:
        from iotdb.utils.IoTDBConstants import TSDataType

        return [TSDataType[name] for name in self.type_names()]

    def big_endian(self, batch: EventBatch) -> list[np.ndarray]:
        """The measurements' columns as a tablet sends them (big-endian, in their IoTDB types; a null, NaN, as 0,
        as the driver's Tablet writes it: its place is marked in the tablet's bitmap, `nulls`)."""
        columns = []
        for column, kind in zip(self.columns, self.kinds):
            values = column.values(batch)
            if column.nullable:
                values = np.where(np.isnan(values), 0.0, values)
            columns.append(values.astype(_TYPES[kind][1]))
        return columns

    def nulls(self, batch: EventBatch) -> list[np.ndarray | None]:
        """Per measurement, which events hold a null (TSBS's IoT null fields), or None when none can."""
        return [column.nulls(batch) if column.nullable else None for column in self.columns]

    def python_values(self, batch: EventBatch) -> list[tuple[Any, ...]]:
        """Each event's measurements as Python numbers of their IoTDB types (ints for INT32 and INT64), None
        for a null (the driver's insert_aligned_record(s) leave those measurements out of the row)."""
        columns = [column.tolist() for column in self.big_endian(batch)]
        for values, nulls in zip(columns, self.nulls(batch)):
            for at in np.flatnonzero(nulls).tolist() if nulls is not None else ():
                values[at] = None
        return list(zip(*columns))


class Series:
    def __init__(self, spec: RunSpec, layouts: dict[str, Layout], options: IotdbOptions):
        self.spec, self.options = spec, options
        self.tree = options.model == "tree"
        self._paths: dict[tuple[str, bytes, int, bool], str] = {}  # (table, device id, sensor, named) -> device path
        # Each table's stored measurements: sequence_number (INT64), temperature and m1.. (DOUBLE); TSBS's
        # shapes: their measurement's fields.
        self.fields = {table: _fields(spec, table, layout) for table, layout in layouts.items()}
        self.measurement_names = next(iter(self.fields.values())).names

    def counted(self, table: str) -> str:
        """The measurement a count counts, one point per row: a TSBS measurement's first field, else temperature."""
        return self.fields[table].names[0] if self.spec.tsbs else "temperature"

    def path(self, table: str, device: bytes, sensor: int = 0, named: bool = True) -> str:
        """A device's tree path; `named` False: the device of a truck's rows that TSBS writes without its name."""
        path = self._paths.get((table, device, sensor, named))
        if path is None:
            path = (f"root.{self.options.database}.{table}.{'' if named else UNNAMED + '.'}`{device.decode()}`"
                    + (f".s{sensor}" if self.spec.sensors > 1 else ""))
            self._paths[(table, device, sensor, named)] = path
        return path

    def run_devices(self) -> list[Device]:
        """Every device (with --sensors: every sensor; TSBS's shapes: every host or truck, IoT's trucks twice: their
        named and unnamed rows) of the run, all workers."""
        tables = self.spec.table_names
        if self.spec.tsbs:  # every measurement of every entity
            entities = [bytes(name) for name in entity_names(USE_CASES[self.spec.shape].entity, 0, self.spec.all_devices)]
            kinds = (True, False) if self.spec.shape == "tsbs-iot" else (True,)
            return [Device(table, name, self.path(table, name, named=named), named) for table in tables for named in kinds for name in entities]
        devices = []
        for worker in range(self.spec.workers):
            for index, device in enumerate(device_ids(worker, self.spec.devices_of(worker))):
                table = tables[index % len(tables)]
                devices += [Device(table, bytes(device), self.path(table, bytes(device), sensor)) for sensor in range(self.spec.sensors)]
        return devices


def _fields(spec: RunSpec, table: str, layout: Layout) -> Fields:
    columns = tuple(column for column in layout.columns if column.kind in ("sequence", "float"))
    if not spec.tsbs:
        return Fields(columns, tuple(column.kind for column in columns))
    if spec.shape == "tsbs-cpu":
        return Fields(columns, ("tsbs",) * len(columns))
    integers = USE_CASES[spec.shape].measurement(table).integer_fields
    return Fields(columns, tuple("int64" if integer else "float" for integer in integers))


def device_of(path: str) -> str:
    """The device id of a tree path root.<database>.<table>.`<device id>`."""
    return path.rsplit(".", 1)[-1].strip("`")
