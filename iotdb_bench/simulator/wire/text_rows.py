"""Building the text of a whole batch (NDJSON, line protocol, SQL values lists) with NumPy, without a Python loop per event.

Each event is one row of a uint8 matrix; zero bytes are padding (the leading zeros of numbers, the
unused width of names, the sign of positive numbers), dropped when the rows are joined.
"""

from __future__ import annotations

import numpy as np

# The four ASCII digits of 0..9999 as one uint32 each (their bytes in memory order): numbers are
# written four digits per lookup, with a divmod per four digits instead of two operations per digit.
_QUADS = np.frombuffer(b"".join(b"%04d" % i for i in range(10_000)), dtype=np.uint32)
# 0..9999 right-aligned in four bytes, their leading zeros as zero bytes (padding): the digits of small
# numbers in one lookup, without the divisions and the masking of the leading zeros.
_SMALL = np.frombuffer(b"".join(b"%4d" % i for i in range(10_000)).replace(b" ", b"\0"), dtype=np.uint32)
_POWERS = 10 ** np.arange(19, dtype=np.int64)  # 1, 10, ..., 10**18: digit counts by searchsorted
_DAY_MS = 86_400_000
_FIRST_DAY, _LAST_DAY = (int(np.datetime64(day, "D").astype(np.int64)) for day in ("0000-01-01", "9999-12-31"))


def text_rows(columns: list[np.ndarray], count: int) -> np.ndarray:
    """The columns side by side (a column of one row, a constant, is repeated on every row). The
    constants are copied as one row repeated, the other columns one by one."""
    template = np.concatenate([column[0] if len(column) == 1 else np.zeros(column.shape[1], dtype=np.uint8) for column in columns])
    rows = np.empty((count, len(template)), dtype=np.uint8)
    rows[:] = template
    start = 0
    for column in columns:
        if len(column) != 1:
            rows[:, start : start + column.shape[1]] = column
        start += column.shape[1]
    return rows


def merged(parts: list[tuple[np.ndarray, np.ndarray]], count: int) -> np.ndarray:
    """The rows of a batch made part by part (each part: the mask of its rows in the batch, their rows)
    as one matrix in the batch's order, the narrower parts padded with zero bytes."""
    rows = np.zeros((count, max(part.shape[1] for _, part in parts)), dtype=np.uint8)
    for chosen, part in parts:
        rows[chosen, : part.shape[1]] = part
    return rows


def compact(rows: np.ndarray) -> bytes:
    """The rows joined, without their zero bytes (often none: a batch's numbers tend to have the
    same number of digits, and looking for a zero byte costs a tenth of removing them)."""
    text = rows.tobytes()
    return text.translate(None, b"\0") if b"\0" in text else text


def constant(text: str) -> np.ndarray:
    return np.frombuffer(text.encode(), dtype=np.uint8)[None, :]


def fixed(values: np.ndarray) -> np.ndarray:
    """Fixed-width byte strings (S dtype) as rows of bytes."""
    values = np.ascontiguousarray(values)
    return values.view(np.uint8).reshape(len(values), values.dtype.itemsize)


def integers(values: np.ndarray) -> np.ndarray:
    """Decimal digits of int64 values of any shape (the digits a last axis), a sign first where any is negative."""
    if values.size and values.min() < 0:
        return np.concatenate([_signs(values), _digits(np.abs(values), least=1)], axis=-1)
    return _digits(values, least=1)


def decimals(values: np.ndarray) -> np.ndarray:
    """float64 values: fixed two decimals when that is exact (the generator's temperatures), else shortest repr."""
    hundredths = np.rint(values * 100)
    if not np.array_equal(hundredths / 100, values):
        return fixed(values.astype("S32"))
    hundredths = hundredths.astype(np.int64)
    negative = len(values) and hundredths.min() < 0
    digits = _digits(np.abs(hundredths) if negative else hundredths, least=3)  # at least "0.0d"
    whole = digits.shape[1] - 2
    text = np.empty((len(values), whole + 3), dtype=np.uint8)  # whole part, ".", two decimals
    text[:, :whole] = digits[:, :whole]
    text[:, whole] = ord(".")
    text[:, whole + 1 :] = digits[:, whole:]
    return np.concatenate([_signs(hundredths), text], axis=1) if negative else text


def datetimes(epoch_ms: np.ndarray) -> np.ndarray:
    """'YYYY-MM-DD HH:MM:SS.mmm' (UTC) of epoch milliseconds: the dates looked up in a table of the
    batch's days (a batch spans a few), the clock written from two-digit groups."""
    count = len(epoch_ms)
    days, in_day = np.divmod(epoch_ms, _DAY_MS)
    first = int(days.min()) if count else 0
    span = int(days.max()) - first + 1 if count else 0
    if span > count or first < _FIRST_DAY or first + span > _LAST_DAY:  # days far apart, or years of more than 4 digits
        text = fixed(np.datetime_as_string(epoch_ms.astype("datetime64[ms]")).astype("S")).copy()
        text[text == ord("T")] = ord(" ")
        return text
    seconds, milliseconds = np.divmod(in_day, 1000)
    minutes, second = np.divmod(seconds, 60)
    hour, minute = np.divmod(minutes, 60)
    text = np.empty((count, 23), dtype=np.uint8)
    dates = np.datetime_as_string(np.arange(first, first + span).astype("datetime64[D]")).astype("S10")
    text[:, :10] = fixed(dates[days - first])  # picked as whole strings: a tenth of picking rows of bytes
    text[:, [10, 13, 16, 19]] = np.frombuffer(b" ::.", dtype=np.uint8)
    for start, part in ((11, hour), (14, minute), (17, second)):
        text[:, start : start + 2] = _QUADS[part].view(np.uint8).reshape(count, 4)[:, 2:]
    text[:, 20:] = _QUADS[milliseconds].view(np.uint8).reshape(count, 4)[:, 1:]
    return text


def value(kind: str, values: np.ndarray, quote: str = '"', nulls: np.ndarray | None = None) -> list[np.ndarray]:
    """The text of a column of one of the shapes' kinds (simulator/workload/shapes.py) as JSON (SQL, with
    quote="'") writes it: strings quoted (the generator's strings need no escaping), numbers as they are;
    `nulls`: the rows written NULL (SQL) instead. A json column (TSBS's own tags, padded with spaces) is
    for SQL only: its text is quoted as it is, without the padding."""
    if kind in ("device", "text"):
        return [constant(quote), fixed(values), constant(quote)]
    if kind == "json":
        text = fixed(values).copy()
        text[np.arange(text.shape[1]) >= np.char.str_len(np.char.rstrip(values))[:, None]] = 0
        return [constant(quote), text, constant(quote)]
    if nulls is not None and nulls.any():
        [text] = value(kind, np.where(nulls, 0, values))
        return [_null_where(text, nulls)]
    if kind == "float":
        return [decimals(values)]
    return [integers(values)]


def _null_where(text: np.ndarray, nulls: np.ndarray) -> np.ndarray:
    """The rows of `nulls` as NULL (the others as they are, widened to four bytes at least)."""
    widened = np.zeros((len(text), max(4, text.shape[1])), dtype=np.uint8)
    widened[:, widened.shape[1] - text.shape[1] :] = text
    widened[nulls] = 0
    widened[nulls, :4] = np.frombuffer(b"NULL", dtype=np.uint8)
    return widened


def _signs(values: np.ndarray) -> np.ndarray:
    return np.where(values < 0, ord("-"), 0).astype(np.uint8)[..., None]


def _digits(magnitude: np.ndarray, least: int) -> np.ndarray:
    """ASCII digits of non-negative int64 values (any shape: the digits a last axis), right-aligned,
    at least `least` of each; the leading zeros beyond those are zero bytes."""
    if not magnitude.size:
        return np.zeros((*magnitude.shape, least), dtype=np.uint8)
    top = int(magnitude.max())
    width = max(len(str(top)), least)
    if top < 10_000 and least == 1:
        return _SMALL[magnitude].view(np.uint8).reshape(*magnitude.shape, 4)[..., 4 - width :]
    groups = -(-width // 4)
    quads = np.empty((*magnitude.shape, groups), dtype=np.uint32)
    rest = magnitude
    for group in range(groups - 1, 0, -1):
        rest, low = np.divmod(rest, 10_000)
        quads[..., group] = _QUADS[low]
    quads[..., 0] = _QUADS[rest]
    digits = quads.view(np.uint8)[..., 4 * groups - width :]
    if max(len(str(int(magnitude.min()))), least) < width:  # some have fewer digits
        lengths = np.maximum(np.searchsorted(_POWERS, magnitude, side="right"), least)
        digits *= np.arange(width) >= (width - lengths)[..., None]
    return digits
