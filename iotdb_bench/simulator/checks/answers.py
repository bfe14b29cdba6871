"""Query answers in one common form, and their check against the expected answers.

Every module's query returns an `Answer`: the rows as the driver gave them and, where needed, how to
turn them into the common form (plain tuples of str, int and float, timestamps as epoch
milliseconds). The conversion runs after the timed call. So does the driver's decoding into Python
values where the driver holds the whole answer when the call returns (psycopg: `Rows` is then what
decodes them): the timed call ends when the database's answer has arrived, as in TSBS's runners, which
read the answer and decode none of it. The common form of each query:

    count-events                   (count,)
    temperature-min-max            (min, max)
    temperature-stats              (min, avg, max)
    temperature-stats-per-device   (device, min, avg, max)         one row per device
    newest-per-device              (device, timestamp_ms, value)   one row per device
    device-downsample              (minute_ms, min, avg, max)      one row per minute with readings

Counts, minima, maxima and timestamps must equal the expected ones exactly (the values are the very
doubles that were sent); averages must lie within AVG_RELATIVE_TOLERANCE of the exact sum / count,
room for a database's floating-point summation and nothing more. Parameterised queries (TSBS's) name
their own columns (`Columns`) and their expected answer for each execution's parameters
(`ParameterisedAnswers`, e.g. simulator/queries/tsbs_devops.py); they are compared the same way.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from iotdb_bench.simulator.checks.expected import Expected, ExpectedRecord
from iotdb_bench.simulator.queries.parameters import Parameters, iso_ms

AVG_RELATIVE_TOLERANCE = 1e-9
Verdict = Literal["ok", "wrong", "not checked"]
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


# A query's rows as fetched, or what decodes the answer the driver holds into them (called once, after the timed call).
Rows = Sequence[Any] | Callable[[], Sequence[Any]]


@dataclass
class Answer:
    """A query's rows, and the conversion to the common form (None: rows are tuples already)."""

    rows: Rows
    convert: Callable[[Sequence[Any]], list[tuple]] | None = None

    def normalised(self) -> list[tuple]:
        rows = self.rows() if callable(self.rows) else self.rows
        return self.convert(rows) if self.convert else [tuple(row) for row in rows]


Query = Callable[[], Answer]

# What each column of a query's rows is, which says how it is compared. Rows are matched by their
# leading key columns (KEY: compared as text, TIME_KEY: as a timestamp), if they have any.
KEY, TIME_KEY, COUNT, EXACT, AVERAGE, TIME, NEWEST = "key", "time key", "count", "exact", "average", "time", "newest"
# Seconds a database computed as an average of intervals (rounded to its microseconds).
DURATION = "duration"
DURATION_TOLERANCE_S = 1e-6
Columns = tuple[tuple[str, str], ...]
_SHAPES: dict[str, Columns] = {
    "count-events": (("count", COUNT),),
    "temperature-min-max": (("min", EXACT), ("max", EXACT)),
    "temperature-stats": (("min", EXACT), ("avg", AVERAGE), ("max", EXACT)),
    "temperature-stats-per-device": (("device", KEY), ("min", EXACT), ("avg", AVERAGE), ("max", EXACT)),
    "newest-per-device": (("device", KEY), ("newest timestamp", TIME), ("value at the newest timestamp", NEWEST)),
    "device-downsample": (("minute", TIME_KEY), ("min", EXACT), ("avg", AVERAGE), ("max", EXACT)),
}
# Opt-in variants answer the same question as their canonical query.
_SAME_AS = {"newest-per-device (loose index scan)": "newest-per-device"}


def epoch_ms(value: Any) -> int:
    """Epoch milliseconds from what drivers return for a timestamp: a datetime (naive = UTC), an
    ISO-8601 string, or a number of milliseconds."""
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return (aware - _EPOCH) // dt.timedelta(milliseconds=1)
    if isinstance(value, str):
        return epoch_ms(dt.datetime.fromisoformat(value))
    return int(value)


def with_times(*columns: int) -> Callable[[Sequence[Any]], list[tuple]]:
    """A conversion to the common form: the given columns are timestamps (to epoch milliseconds)."""

    def convert(rows: Sequence[Any]) -> list[tuple]:
        converted = []
        for row in rows:
            row = list(row)
            for column in columns:
                if row[column] is not None:
                    row[column] = epoch_ms(row[column])
            converted.append(tuple(row))
        return converted

    return convert


def number(value: Any) -> float | None:
    """A float from what drivers return for a double (float, int, Decimal), None for NULL."""
    return None if value is None else float(value)


def expected_rows(query: str, expected: Expected) -> list[tuple]:
    """The exact answer of `query` in the common form (averages as exact sum / count)."""
    query = _SAME_AS.get(query, query)
    devices = expected.devices
    if query == "count-events":
        return [(expected.count,)]
    if query in ("temperature-min-max", "temperature-stats"):
        if not expected.count:
            return []
        low, high = min(devices.min), max(devices.max)
        if query == "temperature-min-max":
            return [(low, high)]
        return [(low, sum(devices.sum_hundredths) / 100 / expected.count, high)]
    if query == "temperature-stats-per-device":
        return [(d, low, total / 100 / count, high)
                for d, count, low, high, total in zip(devices.device, devices.count, devices.min, devices.max, devices.sum_hundredths)]
    if query == "newest-per-device":
        return [(d, newest, (low, high)) for d, newest, low, high in zip(devices.device, devices.newest_ms, devices.newest_low, devices.newest_high)]
    if query == "device-downsample":
        minutes = expected.downsample
        return [(m, low, total / 100 / count, high)
                for m, count, low, high, total in zip(minutes.minute_ms, minutes.count, minutes.min, minutes.max, minutes.sum_hundredths)]
    raise KeyError(query)


def first_difference(query: str, actual: list[tuple], expected: list[tuple]) -> str | None:
    """The first way `actual` differs from `expected` (one line), or None when it is right."""
    return difference(_SHAPES[_SAME_AS.get(query, query)], actual, expected)


def difference(columns: Columns, actual: list[tuple], expected: list[tuple]) -> str | None:
    """The first way rows of these columns differ from the expected ones (one line), or None: keyed
    rows in any order, the others in order."""
    actual = [row for row in actual if not all(cell is None for cell in row)]  # an aggregate of no rows: NULLs
    keys = next((i for i, (_, kind) in enumerate(columns) if kind not in (KEY, TIME_KEY)), len(columns))
    if not keys:
        if len(actual) != len(expected):
            return f"{len(actual)} rows, expected {len(expected)}"
        for row, want in zip(actual, expected):
            problem = _row_difference(columns, row, want, "")
            if problem:
                return problem
        return None
    by_key: dict[Any, tuple] = {}
    for row in actual:
        key = tuple(_key(row[i], kind) for i, (_, kind) in enumerate(columns[:keys]))
        if key in by_key:
            return f"{_show_key(key, columns)} appears in more than one row"
        by_key[key] = row
    wanted = {want[:keys]: want for want in expected}
    missing = sorted(set(wanted) - set(by_key))
    if missing:
        return f"{_show_key(missing[0], columns)} is missing ({len(by_key)} rows, expected {len(wanted)})"
    extra = sorted(set(by_key) - set(wanted), key=str)
    if extra:
        return f"{_show_key(extra[0], columns)} is not expected ({len(by_key)} rows, expected {len(wanted)})"
    for key in sorted(wanted):
        problem = _row_difference(columns, by_key[key], wanted[key], f"{_show_key(key, columns)}: ")
        if problem:
            return problem
    return None


def _key(value: Any, kind: str) -> Any:
    return epoch_ms(value) if kind == TIME_KEY else str(value)


def _show_key(key: tuple, columns: Columns) -> str:
    return " ".join(f"{name} {_time(part) if kind == TIME_KEY else part}" for part, (name, kind) in zip(key, columns))


def _row_difference(columns: Columns, row: tuple, want: tuple, where: str) -> str | None:
    if len(row) != len(columns):
        return f"{where}a row of {len(row)} columns, expected {len(columns)}"
    for (name, kind), got, expected in zip(columns, row, want):
        if kind in (KEY, TIME_KEY):
            continue
        if not _matches(kind, got, expected):
            return f"{where}{name} is {_show(kind, got)}, expected {_show(kind, expected)}" + (
                f" (within a relative {AVG_RELATIVE_TOLERANCE:g})" if kind == AVERAGE and expected is not None else "")
    return None


def _matches(kind: str, got: Any, expected: Any) -> bool:
    if expected is None:  # a NULL (TSBS's IoT data has null fields; a query file's computed aggregate of no readings): only a NULL matches it
        return got is None
    try:
        if kind in (COUNT, TIME):
            return got is not None and (epoch_ms(got) if kind == TIME else int(got)) == expected
        value = number(got)
        if value is None or math.isnan(value):
            return False
        if kind == EXACT:
            return value == expected
        if kind == AVERAGE:
            return abs(value - expected) <= AVG_RELATIVE_TOLERANCE * abs(expected)
        if kind == DURATION:
            return abs(value - expected) <= DURATION_TOLERANCE_S
        low, high = expected
        return low <= value <= high
    except (TypeError, ValueError, OverflowError):
        return False


def _show(kind: str, value: Any) -> str:
    if kind == NEWEST and isinstance(value, tuple):
        low, high = value
        return repr(low) if low == high else f"one of the values at that instant ({low!r} to {high!r})"
    if kind == TIME and isinstance(value, int):
        return _time(value)
    return repr(value)


def _time(ms: int) -> str:
    return f"{iso_ms(ms)} ({ms})"


@dataclass(frozen=True)
class Check:
    answer: Verdict
    detail: str | None = None  # the first difference, or why the answer was not checked


class ParameterisedAnswers(Protocol):
    def expected(self, query: str, parameters: Parameters) -> tuple[Columns, list[tuple]]:
        """The columns of `query`'s answer and its rows for these parameters, in the common form."""


class AnswerChecker:
    """Checks query answers against the record saved with the data (if it describes the data)."""

    def __init__(self, record: ExpectedRecord | None, missing: str | None = None, parameterised: ParameterisedAnswers | None = None):
        """`missing`: why there is no record, when the module says (else: data the tool did not write);
        `parameterised`: the expected answers of the parameterised queries over the record's data."""
        self.record, self.parameterised = record, parameterised
        if record is None:
            self.reason = missing or "no record of what the tool inserted is stored with this data (inserted by something else, or nothing is stored)"
        else:
            self.reason = record.usable()
        self._expected: dict[str, list[tuple]] = {}

    def check(self, query: str, rows: list[tuple], parameters: Parameters | None = None) -> Check:
        """The check of one execution's answer (`parameters`: those it was run with, if any)."""
        if self.reason:
            return Check("not checked", self.reason)
        if parameters is not None and self.parameterised is not None:
            columns, expected = self.parameterised.expected(query, parameters)
            problem = difference(columns, rows, expected)
            if problem is None:
                return Check("ok")
            return Check("wrong", f"with {parameters}: {problem}" if parameters.values else problem)
        if _SAME_AS.get(query, query) not in _SHAPES:
            return Check("not checked", f"no expected answer is kept for the query '{query}'")
        if query not in self._expected:
            self._expected[query] = expected_rows(query, self.record.expected)
        problem = first_difference(query, rows, self._expected[query])
        return Check("ok") if problem is None else Check("wrong", problem)
