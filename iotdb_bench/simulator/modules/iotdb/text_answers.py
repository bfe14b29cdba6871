"""A query file's text in IoTDB's SQL (tree model) and its answer as rows (docs/query-files.md, "Texts
and languages").

The texts name the tool's series as the default database holds them, `root.iotbench.events.*`; a
target with another `database` option reads them with `root.iotbench.` replaced by its own
`root.<database>.` (as Cassandra's texts run in the target's keyspace). The answer's rows are IoTDB's,
made comparable with SQL's: a device path (ALIGN BY DEVICE's `Device`) becomes the device's id and
comes first; SELECT LAST's rows (time, series, value as text, type) become (device, time, value); and
the rows IoTDB lists for a device or a time bucket without readings (every aggregate null or NaN, a
count 0), which SQL's GROUP BY does not, are left out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from iotdb_bench.simulator.modules.iotdb.series import device_of

DEFAULT_ROOT = "root.iotbench."
_LAST_COLUMNS = ["Time", "Timeseries", "Value", "DataType"]
_ROOT = re.compile(re.escape(DEFAULT_ROOT), re.IGNORECASE)


def in_database(text: str, database: str) -> str:
    return _ROOT.sub(f"root.{database}.", text)


def rows(answer: Sequence[Any]) -> list[tuple[Any, ...]]:
    """(column names, rows) as fetched: the rows as the module's docstring says."""
    names: list[str] = answer[0]
    fetched: Sequence[list[Any]] = answer[1]
    if names == _LAST_COLUMNS:
        return [(device_of(series.rsplit(".", 1)[0]), int(time), float(value)) for time, series, value, _ in fetched]
    device = names.index("Device") if "Device" in names else None
    found = []
    for row in fetched:
        cells = [None if isinstance(cell, float) and math.isnan(cell) else cell for cell in row]
        values = [cell for index, cell in enumerate(cells) if index != device and names[index] != "Time"]
        counts = [names[index].lower().startswith("count(") for index in range(len(names)) if index != device and names[index] != "Time"]
        if values and all(cell is None or (is_count and cell == 0) for cell, is_count in zip(values, counts)):
            continue  # no readings there
        if device is not None:
            cells = [device_of(str(cells[device])), *cells[:device], *cells[device + 1 :]]
        found.append(tuple(cells))
    return found
