"""Durations and timestamps in the words TSBS's flags (and query files) use for them."""

from __future__ import annotations

import datetime as dt
import re

_DURATION_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def duration_ms(text: str) -> int:
    """Milliseconds of a duration as TSBS's flags write them: `10s`, `500ms`, `1m30s`, `12h`, `3d`."""
    parts = re.fullmatch(r"(?:\s*\d+(?:\.\d+)?\s*(?:ms|s|m|h|d)\s*)+", text)
    if not parts:
        raise ValueError(f"'{text}' is not a duration like 10s, 500ms, 12h or 3d")
    total = sum(float(number) * _DURATION_UNITS_MS[unit] for number, unit in re.findall(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)", text))
    if total != int(total) or total < 1:
        raise ValueError(f"'{text}' is not a whole number of milliseconds of at least 1")
    return int(total)


def timestamp_ms(text: str) -> int:
    """Epoch milliseconds of an RFC 3339 timestamp (`2016-01-01T00:00:00Z`; without a zone: UTC)."""
    try:
        moment = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"'{text}' is not a timestamp like 2016-01-01T00:00:00Z") from None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    return (moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(milliseconds=1)
