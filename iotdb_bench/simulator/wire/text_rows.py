"""Building the text of a whole batch (NDJSON, line protocol) with NumPy, without a Python loop per event.

Each event is one row of a uint8 matrix; zero bytes are padding (the leading zeros of numbers, the
unused width of names), dropped when the rows are joined.
"""

from __future__ import annotations

import numpy as np


def text_rows(columns: list[np.ndarray], count: int) -> np.ndarray:
    return np.concatenate([np.broadcast_to(column, (count, column.shape[1])) for column in columns], axis=1)


def compact(rows: np.ndarray) -> bytes:
    return rows[rows != 0].tobytes()


def constant(text: str) -> np.ndarray:
    return np.frombuffer(text.encode(), dtype=np.uint8)[None, :]


def fixed(values: np.ndarray) -> np.ndarray:
    """Fixed-width byte strings (S dtype) as rows of bytes."""
    values = np.ascontiguousarray(values)
    return values.view(np.uint8).reshape(len(values), values.dtype.itemsize)


def integers(values: np.ndarray) -> np.ndarray:
    """Decimal digits of int64 values, sign first."""
    magnitude = np.abs(values)
    width = len(str(int(magnitude.max()))) if len(values) else 1
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    digits = ((magnitude[:, None] // powers) % 10 + ord("0")).astype(np.uint8)
    digits[:, :-1][magnitude[:, None] < powers[:-1]] = 0  # leading zeros
    sign = np.where(values < 0, ord("-"), 0).astype(np.uint8)[:, None]
    return np.concatenate([sign, digits], axis=1)


def decimals(values: np.ndarray) -> np.ndarray:
    """float64 values: fixed two decimals when that is exact (the generator's temperatures), else shortest repr."""
    hundredths = np.rint(values * 100)
    if not np.array_equal(hundredths / 100, values):
        return fixed(values.astype("S32"))
    hundredths = hundredths.astype(np.int64)
    text = integers(np.abs(hundredths) // 100)
    text[:, 0] = np.where(hundredths < 0, ord("-"), 0)
    fraction = np.abs(hundredths) % 100
    decimals = np.stack([np.full(len(values), ord(".")), fraction // 10 + ord("0"), fraction % 10 + ord("0")], axis=1)
    return np.concatenate([text, decimals.astype(np.uint8)], axis=1)


def value(kind: str, values: np.ndarray) -> list[np.ndarray]:
    """The text of a column of one of the shapes' kinds (simulator/shapes.py) as JSON writes it:
    strings quoted (the generator's strings need no escaping), numbers as they are."""
    if kind in ("device", "text"):
        return [constant('"'), fixed(values), constant('"')]
    if kind == "float":
        return [decimals(values)]
    return [integers(values)]
