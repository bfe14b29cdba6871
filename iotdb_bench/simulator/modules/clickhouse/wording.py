"""The clickhouse module's one-line wording of the server's refusals."""

from __future__ import annotations

from iotdb_bench.simulator.errors import one_line


class ClickhouseError(Exception):
    """The server refused a statement: its code and the first line of its message (no stack trace)."""


def first_line(error: Exception) -> str:
    """A ClickHouse server exception's text without the C++ stack trace it carries."""
    text = str(getattr(error, "message", "") or error)
    head = text.split("Stack trace:", 1)[0]
    code = getattr(error, "code", None)
    line = one_line(head.splitlines()[0] if head.strip() else head, limit=300)
    return f"Code {code}: {line}" if code is not None and not line.startswith("Code:") else line
