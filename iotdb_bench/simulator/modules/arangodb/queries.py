"""The arangodb module's AQL: the six queries over the single-table collection like the SQL ones,
the fields of their result documents, and the scan's and its device list's statements."""

from __future__ import annotations

from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME

# The six queries in AQL, over the single-table collection like the SQL ones.
QUERIES = {
    "count-events": f"FOR e IN {SINGLE_TABLE_NAME} COLLECT WITH COUNT INTO total RETURN total",
    "temperature-min-max": (
        f"FOR e IN {SINGLE_TABLE_NAME} COLLECT AGGREGATE low = MIN(e.temperature), high = MAX(e.temperature) "
        "RETURN {min: low, max: high}"
    ),
    "temperature-stats": (
        f"FOR e IN {SINGLE_TABLE_NAME} COLLECT AGGREGATE low = MIN(e.temperature), mean = AVG(e.temperature), "
        "high = MAX(e.temperature) RETURN {min: low, avg: mean, max: high}"
    ),
    "temperature-stats-per-device": (
        f"FOR e IN {SINGLE_TABLE_NAME} COLLECT device = e.device_id AGGREGATE low = MIN(e.temperature), "
        "mean = AVG(e.temperature), high = MAX(e.temperature) RETURN {device_id: device, min: low, avg: mean, max: high}"
    ),
    # Arrays compare element by element, so the maximum [timestamp, temperature] is the newest reading.
    "newest-per-device": (
        f"FOR e IN {SINGLE_TABLE_NAME} COLLECT device = e.device_id AGGREGATE newest = MAX([e.timestamp, e.temperature]) "
        "RETURN {device_id: device, timestamp: newest[0], temperature: newest[1]}"
    ),
    "device-downsample": (
        f"FOR e IN {SINGLE_TABLE_NAME} FILTER e.device_id == '{DOWNSAMPLE_DEVICE}' AND e.timestamp >= {DOWNSAMPLE_START_MS} "
        f"AND e.timestamp < {DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS} "
        f"COLLECT minute = e.timestamp - e.timestamp % {MINUTE_MS} AGGREGATE low = MIN(e.temperature), "
        "mean = AVG(e.temperature), high = MAX(e.temperature) SORT minute RETURN {minute: minute, min: low, avg: mean, max: high}"
    ),
}
# The fields of each query's result documents, in the order of the common answer form.
ANSWER_FIELDS = {
    "temperature-min-max": ("min", "max"),
    "temperature-stats": ("min", "avg", "max"),
    "temperature-stats-per-device": ("device_id", "min", "avg", "max"),
    "newest-per-device": ("device_id", "timestamp", "temperature"),
    "device-downsample": ("minute", "min", "avg", "max"),
}
SCAN = "FOR e IN @@collection FILTER e.device_id == @device SORT e.timestamp RETURN [e.timestamp, e.temperature]"
DEVICES = "FOR e IN @@collection COLLECT device = e.device_id RETURN device"
CURSOR_BATCH_SIZE = 10_000
