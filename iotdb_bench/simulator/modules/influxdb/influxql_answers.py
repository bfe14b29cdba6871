"""A query file's InfluxQL answer as rows (docs/query-files.md, "Texts and languages"): InfluxQL answers
with series, each with its tags and a table whose first column is `time`. A row is the series' tag
values (sorted by the tags' names, as the server gives them), then `time` where it is a reading's time
or a bucket's start, then the other columns. `time` is left out where InfluxQL puts the start of the
queried range there instead (an aggregate, or several selectors, over the whole range with no
GROUP BY time(...)), so that `SELECT count(temperature) FROM events GROUP BY device_id` answers
(device, count) as SQL's `SELECT device_id, count(*) ... GROUP BY device_id` does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

# InfluxQL's selectors: alone in a query, the time of a row is the time of the point they select.
SELECTORS = frozenset({"bottom", "first", "last", "max", "min", "percentile", "sample", "top"})
_SELECT = re.compile(r"^\s*SELECT\s+(?P<fields>.*?)\s+FROM\s", re.IGNORECASE | re.DOTALL)
_FUNCTION = re.compile(r"\b([A-Za-z_]+)\s*\(")
_GROUP_BY_TIME = re.compile(r"\bGROUP\s+BY\b[^;]*?\btime\s*\(", re.IGNORECASE | re.DOTALL)


def keeps_time(statement: str) -> bool:
    """Whether the answer's `time` column says something about the data (see the module's docstring)."""
    if _GROUP_BY_TIME.search(statement):
        return True
    found = _SELECT.match(statement)
    functions = [name.lower() for name in _FUNCTION.findall(found.group("fields"))] if found else []
    return not functions or (len(functions) == 1 and functions[0] in SELECTORS)


def conversion(statement: str) -> Callable[[Sequence[dict[str, Any]]], list[tuple[Any, ...]]]:
    """The rows of the statement's series (influxql_series's answer)."""
    with_time = keeps_time(statement)

    def rows(series: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
        found = []
        for one in series:
            tags = tuple(value for _, value in sorted((one.get("tags") or {}).items()))
            for values in one.get("values", []):
                found.append((*tags, *(values if with_time else values[1:])))
        return found

    return rows
