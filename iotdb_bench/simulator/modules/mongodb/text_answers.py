"""A query file's MongoDB text, an aggregation pipeline on the run's collection, and its answer as rows
(docs/query-files.md, "Texts and languages").

The text is MongoDB Extended JSON (a list of stages), so that it can name dates: `{"$date": "{{ day.start }}"}`.
Each result document is a row of its fields in the order the server gives them (a $group's `_id`
first, then its accumulators as written; an `_id` that is a document gives its fields, in order).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from iotdb_bench.simulator.modules.base import ModuleError


def pipeline(text: str) -> list[dict[str, Any]]:
    """The text as a pipeline; not a list of stages: ModuleError in one line."""
    from bson import json_util

    try:
        found = json_util.loads(text)
    except ValueError as error:
        raise ModuleError(f"not Extended JSON: {error}") from None
    if not isinstance(found, list) or not all(isinstance(stage, dict) for stage in found):
        raise ModuleError("not an aggregation pipeline (a JSON list of stages)")
    return found


def rows(documents: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    found = []
    for document in documents:
        cells: list[Any] = []
        for value in document.values():
            cells += list(value.values()) if isinstance(value, dict) else [value]
        found.append(tuple(cells))
    return found
