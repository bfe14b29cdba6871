"""The victoriametrics module's series: what an event becomes (a series per device, table and
measured value, `<table>_<value>{device_id=...}`), shared by every role."""

from __future__ import annotations

from iotdb_bench.simulator.modules.victoriametrics.options import VictoriametricsOptions
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.shapes import Layout


class Series:
    def __init__(self, spec: RunSpec, layout: Layout, options: VictoriametricsOptions):
        tables = spec.table_names
        self.temperature = [f"{table}_temperature" for table in tables]
        # The measured values of an event, each a series of its own: temperature, m1...
        self.measures = [column for column in layout.columns if column.kind == "float"]
        # --clean removes every series of the run's tables, whatever this run stores (sequence numbers,
        # measurements of an earlier run): a table is its series.
        self.metrics = [f"{table}_.+" for table in tables]
        self.samples_per_event = len(self.measures) + (1 if options.store_sequence_number else 0)


def selector(metrics: list[str]) -> str:
    return '{__name__=~"' + "|".join(metrics) + '"}'
