"""A query file's Elasticsearch (OpenSearch) text, the JSON body of a _search request on the run's
indices, and its answer as rows (docs/query-files.md, "Texts and languages").

With aggregations, the rows are read from them in the order the body names them: a bucket aggregation
(terms, composite, date_histogram, histogram, range...) gives one row per bucket holding documents, its
key first (a composite's keys in the order of its sources; a date's key in epoch milliseconds), then
the cells of its sub-aggregations; metric aggregations give cells: one value (min, max, avg, sum,
value_count, cardinality...), `stats`'s count, min, max, avg and sum, `top_hits`' first hit's fields
in the order of its `_source` list. One level holds one bucket aggregation or metrics only. Without
aggregations, each hit is a row of its `_source` fields, in the order of the body's `_source` list.
"""

from __future__ import annotations

import json
from typing import Any

from iotdb_bench.simulator.modules.base import ModuleError

Row = tuple[Any, ...]
_NESTED = ("aggs", "aggregations")


def body(text: str) -> dict[str, Any]:
    """The text as a request body; not a JSON object: ModuleError in one line."""
    try:
        found = json.loads(text)
    except ValueError as error:
        raise ModuleError(f"not JSON: {error}") from None
    if not isinstance(found, dict):
        raise ModuleError("not a JSON object (the body of a _search request)")
    return found


def aggregations(request: dict[str, Any]) -> dict[str, Any]:
    return next((request[key] for key in _NESTED if key in request), {})


def rows(request: dict[str, Any], answer: dict[str, Any]) -> list[Row]:
    """The answer's rows (see the module's docstring)."""
    asked = aggregations(request)
    if asked:
        return _level(asked, answer.get("aggregations", {}))
    fields = _source_fields(request.get("_source"))
    return [_fields(hit.get("_source", {}), fields) for hit in answer.get("hits", {}).get("hits", [])]


def _level(asked: dict[str, Any], found: dict[str, Any]) -> list[Row]:
    cells: list[Any] = []
    bucket_rows: list[Row] | None = None
    for name, definition in asked.items():
        kind = next((key for key in definition if key not in (*_NESTED, "meta")), None)
        result = found.get(name, {})
        if "buckets" in result:
            if bucket_rows is not None or cells:
                raise ModuleError(f"aggregation {name}: one level holds one bucket aggregation or metrics only")
            bucket_rows = _buckets(result["buckets"], aggregations(definition))
        elif bucket_rows is not None:
            raise ModuleError(f"aggregation {name}: one level holds one bucket aggregation or metrics only")
        else:
            cells += _metric(name, kind, definition.get(kind) or {}, result)
    return bucket_rows if bucket_rows is not None else [tuple(cells)]


def _buckets(buckets: list[dict[str, Any]] | dict[str, dict[str, Any]], sub: dict[str, Any]) -> list[Row]:
    listed = [{"key": key, **bucket} for key, bucket in buckets.items()] if isinstance(buckets, dict) else buckets
    found = []
    for bucket in listed:
        if bucket.get("doc_count", 1) == 0:  # SQL's GROUP BY has no empty groups
            continue
        key = bucket["key"]
        keys = tuple(key.values()) if isinstance(key, dict) else (key,)
        found += [(*keys, *row) for row in (_level(sub, bucket) if sub else [()])]
    return found


def _metric(name: str, kind: str | None, definition: dict[str, Any], result: dict[str, Any]) -> list[Any]:
    if "value" in result:
        return [result["value"]]
    if kind in ("stats", "extended_stats"):
        return [result.get(part) for part in ("count", "min", "max", "avg", "sum")]
    if kind == "top_hits":
        hits = result.get("hits", {}).get("hits", [])
        fields = _source_fields(definition.get("_source"))
        return list(_fields(hits[0].get("_source", {}), fields)) if hits else [None] * len(fields or [None])
    raise ModuleError(f"aggregation {name}: a {kind} aggregation's answer is not read as cells (single values, stats, top_hits)")


def _source_fields(source: Any) -> list[str] | None:
    listed = source.get("includes") if isinstance(source, dict) else source
    return [str(field) for field in listed] if isinstance(listed, list) else None


def _fields(source: dict[str, Any], fields: list[str] | None) -> Row:
    return tuple(source.get(field) for field in fields) if fields is not None else tuple(source[key] for key in sorted(source))
