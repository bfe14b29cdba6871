"""The mongodb module's six queries as aggregation pipelines over the `events` collection, and the
fields of their result documents in the order of the common answer form (simulator/checks/answers.py)."""

from __future__ import annotations

from typing import Any

from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS

# The five queries as aggregation pipelines over the `events` collection.
QUERIES: dict[str, list[dict[str, Any]]] = {
    "count-events": [{"$count": "events"}],
    "temperature-min-max": [{"$group": {"_id": None, "min": {"$min": "$temperature"}, "max": {"$max": "$temperature"}}}],
    "temperature-stats": [
        {"$group": {"_id": None, "min": {"$min": "$temperature"}, "avg": {"$avg": "$temperature"}, "max": {"$max": "$temperature"}}}
    ],
    "temperature-stats-per-device": [
        {"$group": {"_id": "$device_id", "min": {"$min": "$temperature"}, "avg": {"$avg": "$temperature"}, "max": {"$max": "$temperature"}}}
    ],
    # Newest first within each device, then the first document of each group: MongoDB's documented
    # "last point" pattern, which an index on (device_id, timestamp) turns into one seek per device.
    "newest-per-device": [
        {"$sort": {"device_id": 1, "timestamp": -1}},
        {"$group": {"_id": "$device_id", "timestamp": {"$first": "$timestamp"}, "temperature": {"$first": "$temperature"}}},
    ],
}

# The fields of each query's result documents, in the order of the common answer form (simulator/checks/answers.py).
ANSWER_FIELDS = {
    "count-events": ("events",),
    "temperature-min-max": ("min", "max"),
    "temperature-stats": ("min", "avg", "max"),
    "temperature-stats-per-device": ("_id", "min", "avg", "max"),
    "newest-per-device": ("_id", "timestamp", "temperature"),
    "device-downsample": ("_id", "min", "avg", "max"),
}
TIME_FIELDS = {"newest-per-device": 1, "device-downsample": 0}


def pipelines() -> dict[str, list[dict[str, Any]]]:
    """The five pipelines and device-downsample, whose hour bounds are BSON dates (the driver's type:
    built here, so that bson is imported only when queries run)."""
    from bson.datetime_ms import DatetimeMS

    hour = {"$gte": DatetimeMS(DOWNSAMPLE_START_MS), "$lt": DatetimeMS(DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS)}
    return {**QUERIES, "device-downsample": [
        {"$match": {"device_id": DOWNSAMPLE_DEVICE, "timestamp": hour}},
        {"$group": {"_id": {"$dateTrunc": {"date": "$timestamp", "unit": "minute"}},
                    "min": {"$min": "$temperature"}, "avg": {"$avg": "$temperature"}, "max": {"$max": "$temperature"}}},
        {"$sort": {"_id": 1}},
    ]}
