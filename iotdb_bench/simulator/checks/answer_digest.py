"""The answer of a query-file query, normalised so that two databases holding the same data give the
same answer to the same question, hashed and kept with its first rows (docs/query-files.md).

Normal form, after the timed call: every cell is null, text or a number; numbers (int, float, Decimal)
are floats rounded to the query's significant `digits` (9 by default: 3, 3.0 and Decimal('3.00') are
one number, and two sums of the same doubles in another order agree); timestamps (the driver's
datetimes, naive ones being UTC, and the columns the query declares `time`: ISO text or integer epoch
milliseconds) are ISO 8601 in UTC with milliseconds; rows are sorted unless the query says its order is
part of the answer (`ordered`). The digest is a SHA-256 of that form; the first FIRST_ROWS rows are kept
to show where two answers differ.
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from iotdb_bench.simulator.queries.parameters import iso_ms

FIRST_ROWS = 5
CELL_CHARACTERS = 120
# Distinct answers a worker keeps of one query (one per parameters and digest); further ones are counted only.
MAX_KEPT = 50
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
Cell = str | float | None


class KeptAnswer(BaseModel):
    """One execution's answer (or several executions' with the same parameters and the same answer)."""

    parameters: str = Field("", description="the execution's parameters in words ('' for none): the same seed draws the same on every target")
    digest: str = Field(description="SHA-256 of the normalised rows (first 16 hex digits)")
    rows: int
    first_rows: list[list[Cell]] = Field(default_factory=list, description=f"the first {FIRST_ROWS} normalised rows")
    executions: int = 1


def normalised(rows: Sequence[Sequence[Any]], kinds: Mapping[int, str], ordered: bool, digits: int) -> list[list[Cell]]:
    """The rows in normal form (see the module's docstring)."""
    found = [[_cell(value, kinds.get(index), digits) for index, value in enumerate(row)] for row in rows]
    return found if ordered else sorted(found, key=_sort_key)


def kept(rows: list[list[Cell]], parameters: str) -> KeptAnswer:
    text = json.dumps(rows, separators=(",", ":"), ensure_ascii=False)
    first = [[_short(cell) for cell in row] for row in rows[:FIRST_ROWS]]
    return KeptAnswer(parameters=parameters, digest=hashlib.sha256(text.encode()).hexdigest()[:16], rows=len(rows), first_rows=first)


def add(answers: list[KeptAnswer], answer: KeptAnswer) -> None:
    """Keep one more execution's answer: counted with an equal one, else added (up to MAX_KEPT)."""
    for known in answers:
        if (known.parameters, known.digest) == (answer.parameters, answer.digest):
            known.executions += answer.executions
            return
    if len(answers) < MAX_KEPT:
        answers.append(answer)


def first_difference(one: KeptAnswer, other: KeptAnswer) -> str:
    """Where two different answers to the same question part (one line)."""
    for index, (row, theirs) in enumerate(zip(one.first_rows, other.first_rows)):
        if row != theirs:
            return f"row {index + 1}: {show(row)} vs {show(theirs)}"
    if one.rows != other.rows:
        return f"{one.rows} rows vs {other.rows}"
    return f"the first {min(one.rows, FIRST_ROWS)} rows agree, later rows differ"


def show(row: Sequence[Cell]) -> str:
    return "(" + ", ".join("null" if cell is None else repr(cell) for cell in row) + ")"


def _cell(value: Any, kind: str | None, digits: int) -> Cell:
    if value is None:
        return None
    if kind == "time" or isinstance(value, dt.datetime):
        return _time(value)
    if kind == "text":
        return value if isinstance(value, str) else str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | decimal.Decimal):
        return _number(float(value), digits)
    if kind == "number":
        return _number(float(value), digits)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def _number(value: float, digits: int) -> Cell:
    if math.isnan(value) or math.isinf(value):
        return str(value)
    rounded = float(f"{value:.{digits}g}")
    return rounded + 0.0  # -0.0 is 0.0


def _time(value: Any) -> str:
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return iso_ms((aware - _EPOCH) // dt.timedelta(milliseconds=1))
    if isinstance(value, str):
        return _time(dt.datetime.fromisoformat(value))
    return iso_ms(int(value))


def _short(cell: Cell) -> Cell:
    return cell[:CELL_CHARACTERS] + "..." if isinstance(cell, str) and len(cell) > CELL_CHARACTERS else cell


def _sort_key(row: list[Cell]) -> str:
    return json.dumps(row, ensure_ascii=False)
