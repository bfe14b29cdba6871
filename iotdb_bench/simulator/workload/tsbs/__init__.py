"""TSBS's use cases (the Time Series Benchmark Suite's data, read from ../shared/vendor/tsbs) as shapes
of the tool's generator: the same rows and points as `tsbs_generate_data` at the same scale,
interval and time range, with TSBS's tags and value distributions, made in the timed phase.

- walks.py: TSBS's walks (clamped, unbounded, monotonic, refilling, lazy), in fixed point and
  computable at any step from the seed;
- usecases.py: entities, measurements, fields, how values are written; hosts.py: the DevOps hosts'
  tags and every entity's draws; devops.py and iot.py: the nine DevOps measurements and the trucks';
  iot_rows.py: the IoT rows TSBS leaves out, sends late or writes with nulls;
- data.py: what an insert run wrote (the record keeps it); generator.py: one worker's rows in TSBS's
  order; series.py: the same values recomputed for the checker.

USE_CASES names them by the tool's --schema.
"""

from iotdb_bench.simulator.workload.tsbs.devops import DEVOPS
from iotdb_bench.simulator.workload.tsbs.iot import IOT
from iotdb_bench.simulator.workload.tsbs.usecases import CPU, UseCase

CPU_ONLY = UseCase("cpu-only", "tsbs-cpu", "host", (CPU,))
USE_CASES = {use_case.shape: use_case for use_case in (CPU_ONLY, DEVOPS, IOT)}
