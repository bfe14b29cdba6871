"""The azure_data_explorer module's KQL: the six queries, which of their columns are times, and the
scan's and its device list's statements."""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME


def _kql_datetime(ms: int) -> str:
    return f"datetime({np.datetime_as_string(np.datetime64(ms, 'ms'), timezone='UTC')})"


# The five queries in KQL. newest-per-device uses arg_max, which needs no partition operator
# (the seed tool's `partition by` variant failed on large clusters: at most 64 partitions).
QUERIES = {
    "count-events": f"{SINGLE_TABLE_NAME} | count",
    "temperature-min-max": f"{SINGLE_TABLE_NAME} | summarize min(temperature), max(temperature)",
    "temperature-stats": f"{SINGLE_TABLE_NAME} | summarize min(temperature), avg(temperature), max(temperature)",
    "temperature-stats-per-device": (
        f"{SINGLE_TABLE_NAME} | summarize min(temperature), avg(temperature), max(temperature) by device_id"
    ),
    "newest-per-device": f"{SINGLE_TABLE_NAME} | summarize arg_max(timestamp, temperature) by device_id",
    "device-downsample": (
        f"{SINGLE_TABLE_NAME} | where device_id == '{DOWNSAMPLE_DEVICE}' and timestamp >= {_kql_datetime(DOWNSAMPLE_START_MS)} "
        f"and timestamp < {_kql_datetime(DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS)} "
        "| summarize min(temperature), avg(temperature), max(temperature) by bin(timestamp, 1m) | order by timestamp asc"
    ),
}
TIME_COLUMNS = {"newest-per-device": (1,), "device-downsample": (0,)}
SCAN = "{tables} | where device_id == '{device}' | order by timestamp asc | project ms = tolong((timestamp - datetime(1970-01-01)) / 1ms)"
DEVICES = "{tables} | distinct device_id"
