"""The victoriametrics module's series: what an event becomes (a series per device, table and
measured value, `<table>_<value>{device_id=...}`; TSBS's rows a series per host, measurement and
field), shared by every role."""

from __future__ import annotations

from typing import Literal

from iotdb_bench.simulator.modules.victoriametrics.options import VictoriametricsOptions
from iotdb_bench.simulator.spec import TSBS_START_MS, RunSpec
from iotdb_bench.simulator.workload.events import TIME_ORIGIN_MS
from iotdb_bench.simulator.workload.shapes import Layout, values_per_row
from iotdb_bench.simulator.workload.tsbs.iot import TAGS
from iotdb_bench.simulator.workload.tsbs.iot_rows import NULL_FIELD, NULL_TAG

# An IoT row's samples beyond its fields' count: the capacities (tags TSBS writes as fields), less the
# rows' null field or null capacity (iot_rows.py's shares: a mean, for the server counter's cross-check).
_CAPACITIES = sum(1 for _, kind in TAGS if kind != "text")
IOT_SAMPLES_BESIDE_FIELDS = _CAPACITIES - NULL_FIELD - NULL_TAG * _CAPACITIES / len(TAGS)


class Series:
    def __init__(self, spec: RunSpec, layouts: dict[str, Layout], options: VictoriametricsOptions):
        tables = spec.table_names
        # The measured values of an event, each a series of its own: temperature, m1... (TSBS's: its first measurement's fields)
        self.measures = [column for column in layouts[tables[0]].columns if column.kind == "float"]
        # The series the count counts, one sample per event: each table's first measured value's (TSBS's
        # devops: each measurement's first field, which every row of it has).
        self.temperature = [f"{table}_{layouts[table].value_columns[0].name}" for table in tables]
        # --clean removes every series of the run's tables, whatever this run stores (sequence numbers,
        # measurements of an earlier run): a table is its series.
        self.metrics = [f"{table}_.+" for table in tables]
        # Samples per event (TSBS's: its points per row, 101 / 9 for devops; IoT's rows add the three
        # capacities TSBS writes as fields, less the share of rows with a null field or capacity).
        self.samples_per_event: float = len(self.measures) + (1 if options.store_sequence_number else 0)
        if spec.tsbs:
            self.samples_per_event = values_per_row(spec) + (IOT_SAMPLES_BESIDE_FIELDS if spec.shape == "tsbs-iot" else 0)
        # TSBS's rows go to /write as TSBS's victoriametrics target sends them (line protocol).
        self.ingestion: Literal["import", "influx"] = "influx" if spec.tsbs else options.ingestion
        # The oldest time the run's data can have (it lies in the past): the events' origin, or TSBS's start.
        self.oldest_ms = (spec.start_ms or TSBS_START_MS) if spec.tsbs else TIME_ORIGIN_MS


def selector(metrics: list[str]) -> str:
    return '{__name__=~"' + "|".join(metrics) + '"}'
