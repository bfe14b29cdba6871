"""The iotdb module's series: the measurements a row stores, their types, and the tree model's
device paths (root.<database>.<table>.`<device id>`[.s<sensor>]), shared by every role."""

from __future__ import annotations

from typing import Any

from iotdb_bench.simulator.modules.iotdb.options import IotdbOptions
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import device_ids
from iotdb_bench.simulator.workload.shapes import Layout


class Series:
    def __init__(self, spec: RunSpec, layout: Layout, options: IotdbOptions):
        self.spec, self.options = spec, options
        self.tree = options.model == "tree"
        self._paths: dict[tuple[str, bytes, int], str] = {}  # (table, device id, sensor) -> device path
        # The stored measurements of a row: sequence_number (INT64), temperature and m1.. (DOUBLE).
        self.measurements = [column for column in layout.columns if column.kind in ("sequence", "float")]
        self.measurement_names = [column.name for column in self.measurements]

    def types(self) -> list[Any]:
        from iotdb.utils.IoTDBConstants import TSDataType

        return [TSDataType.INT64 if column.kind == "sequence" else TSDataType.DOUBLE for column in self.measurements]

    def path(self, table: str, device: bytes, sensor: int = 0) -> str:
        path = self._paths.get((table, device, sensor))
        if path is None:
            path = f"root.{self.options.database}.{table}.`{device.decode()}`" + (f".s{sensor}" if self.spec.sensors > 1 else "")
            self._paths[(table, device, sensor)] = path
        return path

    def run_devices(self) -> dict[tuple[str, bytes, int], str]:
        """Every device (with --sensors: every sensor) of the run, all workers, keyed by (table, device id,
        sensor), with its tree path."""
        tables = self.spec.table_names
        devices = {}
        for worker in range(self.spec.workers):
            for index, device in enumerate(device_ids(worker, self.spec.devices_of(worker))):
                table = tables[index % len(tables)]
                for sensor in range(self.spec.sensors):
                    devices[(table, bytes(device), sensor)] = self.path(table, bytes(device), sensor)
        return devices


def device_of(path: str) -> str:
    """The device id of a tree path root.<database>.<table>.`<device id>`."""
    return path.rsplit(".", 1)[-1].strip("`")
