"""One-line wording of the server's error answers."""

from __future__ import annotations

from typing import Any

from iotdb_bench.simulator.errors import one_line


def error_type(answer: dict[str, Any]) -> str:
    error = answer.get("error")
    return error.get("type", "") if isinstance(error, dict) else ""


def reason(answer: dict[str, Any], fallback: str) -> str:
    """The most telling part of an error answer: root cause type and reason."""
    error = answer.get("error")
    if isinstance(error, dict):
        cause = (error.get("root_cause") or [error])[0]
        return f"{cause.get('type', 'error')}: {cause.get('reason', '')}".strip()
    if isinstance(error, str):
        return error
    return one_line(fallback, limit=300) or "no details"
