"""How a figure is written, one function per kind, for every view (terminal, HTML, Markdown): the
catalogue (cli/results/tables/catalogue.py) names one of these for each figure.

A value that is absent is "-"; a figure the run could not measure is "n/m" (the notes say why).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from iotdb_bench.simulator.measurement.stats import Spread

DASH = "-"
NOT_MEASURED = "n/m"


def rate(value: float | None) -> str:
    """Events, rows or calls per second: whole numbers with thousands separators."""
    return DASH if value is None else f"{value:,.0f}"


def count(value: int | None) -> str:
    return DASH if value is None else f"{value:,}"


def ms(value: float | None) -> str:
    """Milliseconds with three significant digits below 100 (the null target's calls take microseconds),
    whole ones above."""
    if value is None:
        return DASH
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 1:
        return f"{value:.2f}" if value < 10 else f"{value:.1f}"
    if value == 0:
        return "0"
    return f"{value:.3g}"


def ms_of_seconds(value: float | None) -> str:
    """A time kept in seconds, written in milliseconds."""
    return ms(None if value is None else value * 1000)


def seconds(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}"


def share(value: float | None, digits: int = 0) -> str:
    return DASH if value is None else f"{value:.{digits}%}"


def signed_share(value: float | None) -> str:
    return DASH if value is None else f"{value:+.2%}"


def figure(value: float | None, digits: int = 3) -> str:
    """A derived figure with `digits` significant digits; "n/m" when it was not measured."""
    if value is None:
        return NOT_MEASURED
    return f"{value:,.0f}" if abs(value) >= 10 ** (digits - 1) else f"{value:.{digits}g}"


def megabytes(value: float | None) -> str:
    return NOT_MEASURED if value is None else f"{value / 1e6:,.0f}"


def bytes_per_event(value: float | None) -> str:
    return DASH if value is None else f"{value:,.1f}"


def ratio(value: float | None) -> str:
    return DASH if value is None else f"{value:.3g}x"


def text(value: str | None) -> str:
    return value or DASH


def answer(verdict: str | None, detail: str | None = None) -> str:
    """An answer check as every view writes it (WRONG in capitals), with its detail where it says more than ok."""
    shown = {"wrong": "WRONG", None: DASH}.get(verdict, verdict) or DASH
    return f"{shown}: {detail}" if detail and verdict != "ok" else shown


# -- spreads across runs: a single run has none ---------------------------------------------------

def cv(spread: Spread) -> str:
    """The coefficient of variation across runs; a dash for a single run (no spread to speak of)."""
    if spread.n < 2:
        return DASH
    return f"{spread.cv:.1%}" + (" unstable" if spread.unstable else "")


def min_max(spread: Spread, form: Callable[[float | None], str] = rate) -> str:
    return DASH if spread.n < 2 else f"{form(spread.min)}–{form(spread.max)}"


def ci(spread: Spread) -> str:
    return DASH if spread.n < 2 else f"±{rate(spread.ci95_high - spread.avg)}"


def unstable(spread: Spread | None) -> bool:
    """Only a spread over several runs can be unstable."""
    return spread is not None and spread.n >= 2 and spread.unstable


# -- words ----------------------------------------------------------------------------------------

def plural(number: int, noun: str, nouns: str | None = None) -> str:
    """'1 worker', '2 workers', '1,000 events'."""
    return f"{number:,} {noun if number == 1 else (nouns or noun + 's')}"


def workers(number: int) -> str:
    return plural(number, "worker")


def row_where(row: Any) -> str:
    """An insert row in words: its step or worker count, and its target rate."""
    where = f"step {row.step}" if row.step is not None else workers(row.workers)
    return where + (f" at {row.target_rate:,.0f}/s" if row.target_rate else "")


def judged_rows(verdict: Any) -> str:
    """The rows a threshold was judged on (cli/results/thresholds.py), each with its figure as the tables
    write it, those that failed marked; its problem when it has no row."""
    if not verdict.rows:
        return str(verdict.problem or "not judged")
    named = verdict.threshold.query is None  # else the threshold names the query
    return "; ".join(f"{row.query + ', ' if row.query and named else ''}{row.where}: {row.shown if row.value is not None else 'not measured'}"
                     + ("" if row.passed else " FAILED") for row in verdict.rows)
