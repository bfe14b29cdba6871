"""What the IoT query types need that a database without window functions cannot say (TSBS's lag() and
lead() over a truck's 10-minute periods, the grouping of those periods by day), computed on the client
from the exact per-period figures a module fetched: Cassandra's and IoTDB's readers (modules/*/tsbs_iot*.py),
and Elasticsearch's and MongoDB's through tsbs_iot_documents.py, share it. The checker (tsbs_iot.py) keeps
its own computation, so that an answer built here is still judged by code that did not build it.

A period is (start in epoch ms, rows in it, sum and count of one field's non-null values there); a
truck's periods are those with rows, in any order."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

from iotdb_bench.simulator.queries.tsbs_iot import ACTIVE_STATUS, DAY_MS, DRIVING_VELOCITY, PERIODS_PER_DAY, SESSION_VELOCITY

Period = tuple[int, int, float, int]


def daily_driving_hours(periods: Iterable[Period]) -> float | None:
    """avg-daily-driving-duration of one truck: over the days it drove, the mean of its driving periods (mean
    velocity above 1) // 6, TSBS's integer division; None: it never drove."""
    days: dict[int, int] = {}
    for period, _, total, count in periods:
        if count and total > DRIVING_VELOCITY * count:
            days[period - period % DAY_MS] = days.get(period - period % DAY_MS, 0) + 1
    hours = [driving // 6 for driving in days.values()]
    return sum(hours) / len(hours) if hours else None


def mean_load_shares(trucks: Iterable[tuple[Any, Any, float | None, float, int]]) -> list[tuple[Any, ...]]:
    """avg-load from each truck with diagnostics' (fleet, model, load capacity, sum and count of its current
    loads): per fleet, model and capacity the mean over its trucks of their mean load / capacity (None: no
    truck has a load and a capacity)."""
    groups: dict[tuple[Any, Any, float | None], list[float]] = {}
    for fleet, model, capacity, total, count in trucks:
        shares = groups.setdefault((fleet, model, capacity), [])
        if count and capacity:
            shares.append(total / count / capacity)
    return [(*group, sum(shares) / len(shares) if shares else None) for group, shares in groups.items()]


def daily_sessions(periods: Sequence[Period]) -> list[tuple[int, float | None]]:
    """avg-daily-driving-session of one truck, in one pass over its velocity's periods: per day a driving
    session starts in, the mean length in seconds of those that end (None: none does). A period drives when
    its mean velocity is above 5 (null without a velocity); a change is a period whose driving differs from
    the period before's (`driving <> lag(driving)`, false where either is null); a session runs from a
    change to driving to the next change (`lead`)."""
    lengths: dict[int, list[float]] = {}
    before: bool | None = None
    session: int | None = None  # the start of the driving session the next change ends
    for period, _, total, count in sorted(periods):
        driving = None if not count else bool(total > SESSION_VELOCITY * count)
        if driving is not None and before is not None and driving != before:
            if session is not None:
                lengths[session - session % DAY_MS].append((period - session) / 1000)
            session = period if driving else None
            if driving:
                lengths.setdefault(period - period % DAY_MS, [])
        before = driving
    return [(day, sum(seconds) / len(seconds) if seconds else None) for day, seconds in lengths.items()]


def daily_activity(trucks: Iterable[tuple[Any, Any, Sequence[Period]]]) -> list[tuple[Any, ...]]:
    """daily-activity from each truck's (fleet, model, status's periods): per fleet, model and day the rows
    of the periods whose mean status is below 1, / 144."""
    days: dict[tuple[Any, Any, int], int] = {}
    for fleet, model, periods in trucks:
        for period, rows, total, count in periods:
            if count and total < ACTIVE_STATUS * count:
                key = (fleet, model, period - period % DAY_MS)
                days[key] = days.get(key, 0) + rows
    return [(*key, rows / PERIODS_PER_DAY) for key, rows in days.items()]


def breakdown_frequency(trucks: Iterable[tuple[Any, Sequence[Period]]]) -> list[tuple[Any, int]]:
    """breakdown-frequency from each truck's (model, status's periods): per model how often a truck's period
    is broken down after one that was not. Broken down is TSBS's count(status = 0) / count(*) >= 0.5 in
    integers: every row of the period has a status."""
    models: dict[Any, int] = {}
    for model, periods in trucks:
        broken = [count == rows for _, rows, _, count in sorted(periods)]
        turns = sum(1 for now, then in itertools.pairwise(broken) if not now and then)
        if turns:
            models[model] = models.get(model, 0) + turns
    return list(models.items())
