"""A query file's PromQL / MetricsQL text and its answer as rows (docs/query-files.md, "Texts and
languages"). The text is an instant query, evaluated after the newest possible event (a text names the
times it reads with `@ {{ window.end_s }}`, its windows' lengths with `[{{ window.length_ms }}ms]`).

A row per series (per sample of a range vector, a subquery's): its labels' values (sorted by the
labels' names, without __name__ and `column`), the sample's time in epoch milliseconds where the result
is a range vector, then its value. Several values of one row come from series labelled `column`
(`label_set(expression, "column", "max")`): series with the same other labels are one row, their
values in the order the text names the columns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

COLUMN = "column"
_NAMED = re.compile(r'"column"\s*,\s*"([^"]*)"')


def conversion(text: str) -> Callable[[Sequence[dict[str, Any]]], list[tuple[Any, ...]]]:
    """The rows of the text's result (connection.answer's series)."""
    columns = list(dict.fromkeys(_NAMED.findall(text)))

    def rows(result: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
        found: dict[tuple[Any, ...], dict[str, float]] = {}
        for series in result:
            labels = series.get("metric", {})
            key = tuple(value for name, value in sorted(labels.items()) if name not in ("__name__", COLUMN))
            samples = series["values"] if "values" in series else [series["value"]]
            for at, value in samples:
                row = (*key, round(float(at) * 1000)) if "values" in series else key
                found.setdefault(row, {})[labels.get(COLUMN, "")] = float(value)
        named = columns or [""]
        return [(*key, *(values.get(name) for name in named)) for key, values in found.items()]

    return rows
