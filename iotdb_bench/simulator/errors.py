"""One-line error text, the form every message to the user and every log line about a failure takes."""

from __future__ import annotations


def one_line(value: object, limit: int | None = None) -> str:
    """`value` (an exception or any text) on one line, whitespace collapsed; an exception with no text
    is named by its type. `limit` cuts very long server answers."""
    text = " ".join(str(value).split())
    if not text and isinstance(value, BaseException):
        text = type(value).__name__
    return text[:limit] if limit else text


def described(error: BaseException) -> str:
    """`Type: text` for errors whose type says what went wrong (a driver's exception class)."""
    text = one_line(error)
    name = type(error).__name__
    return f"{name}: {text}" if text and text != name else name
