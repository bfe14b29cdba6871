"""Parsing of the option values click cannot check on its own."""

from __future__ import annotations

import click
from pydantic import ValidationError

from iotdb_bench.simulator.spec import MAX_TABLES, QUERY_GROUPS, TABLE_ALIASES
from iotdb_bench.simulator.validation import validation_problems


class WorkerSet(click.ParamType):
    """A comma-separated set of worker counts, e.g. `1,4,8`; kept in the order given, duplicates removed."""

    name = "worker-set"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        counts: list[int] = []
        for part in str(value).split(","):
            part = part.strip()
            if not part.isdigit() or int(part) < 1:
                self.fail(f"'{value}' is not a comma-separated list of positive worker counts", param, ctx)
            if int(part) not in counts:
                counts.append(int(part))
        return tuple(counts)


class TableCount(click.ParamType):
    """How many tables: 1 to MAX_TABLES, or the original tool's names `single` (1) and `multiple` (4)."""

    name = "tables"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        text = str(value).strip().lower()
        count = TABLE_ALIASES.get(text, int(text) if text.isdigit() else None)
        if count is None or not 1 <= count <= MAX_TABLES:
            self.fail(f"'{value}' is not a number of tables from 1 to {MAX_TABLES} (or single, multiple)", param, ctx)
        return count


def spec_problems(error: ValidationError) -> str:
    """A run spec's validation error in one line: a rule's own sentence as it is, fields with their names."""
    rules = [str(item["ctx"]["error"]) for item in error.errors() if item["type"] == "value_error" and not item["loc"]]
    return "; ".join(rules) if rules else validation_problems(error)


def parse_extra_options(values: tuple[str, ...]) -> dict[str, str]:
    """`key=value` pairs from repeated --extra-option; a malformed one is a usage error."""
    options: dict[str, str] = {}
    for value in values:
        key, separator, setting = value.partition("=")
        key = key.strip()
        if not separator or not key or not key.replace("_", "").isalnum():
            raise click.BadParameter(f"'{value}' is not of the form key=value", param_hint="'--extra-option'")
        options[key] = setting.strip()
    return options


def parse_queries(value: str | None, default: tuple[str, ...], others: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The queries to run: `default` without a value, or a comma-separated list of those and `others`
    by name, and of groups (QUERY_GROUPS: tsbs-devops, tsbs-iot for all of a TSBS use case's query types)."""
    if not value:
        return default
    given = [name.strip() for name in value.split(",") if name.strip()]
    names = tuple(dict.fromkeys(member for name in given for member in QUERY_GROUPS.get(name, (name,))))
    unknown = [name for name in names if name not in default + others]
    if unknown or not names:
        known = ", ".join(dict.fromkeys((*default, *others, *QUERY_GROUPS)))
        raise click.BadParameter(f"unknown query {', '.join(unknown) or value!r}; known: {known}", param_hint="'--queries'")
    return names
