"""A query file's declaration of the answer the tool computes itself (docs/query-files.md, "Answers the tool computes").

    answer: {per: device, window: hour, above: limit, columns: [device, count, max]}

reads: the readings (the tool's `temperature`) in the window drawn for the parameter `hour`, above the
threshold drawn for `limit`, grouped per device; each row is the device, how many readings, the
highest. The declaration is data: it names the query's own parameters and says, column by column,
what the query's answer holds; simulator/checks/computed.py computes those rows from the generator
for each execution's parameters and checks the database's rows as the built-in queries' are checked.

    per       device, worker (the first 7 characters of a device's id, w000001: the worker that wrote it)
              and/or a bucket's length (1m, 1h: epoch-aligned); none: one row over every reading
    device    a device parameter: its readings only       window  a window parameter: the readings in it
    above     a threshold parameter: the readings above it
    columns   the groups' keys first (device, worker, bucket: its start), then statistics:
              count, sum, min, max, mean, newest (the newest reading's time), newest_value (its value)
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from iotdb_bench.simulator.durations import duration_ms

KEYS = ("device", "worker", "bucket")
STATISTICS = ("count", "sum", "min", "max", "mean", "newest", "newest_value")
Column = Literal["device", "worker", "bucket", "count", "sum", "min", "max", "mean", "newest", "newest_value"]
# The kind (query_file.ColumnKind) a query's column declared for each computed column must have.
COLUMN_KINDS: dict[str, str] = {"device": "text", "worker": "text", "bucket": "time", "newest": "time",
                                **dict.fromkeys(("count", "sum", "min", "max", "mean", "newest_value"), "number")}
# What each filter names: a parameter of that kind.
FILTERS = {"device": "device", "window": "window", "above": "threshold"}


class ComputedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    per: list[str] = Field(default_factory=list, description="device, worker and/or a bucket length (1m); none: one row")
    device: str | None = Field(None, description="a device parameter: that device's readings only")
    window: str | None = Field(None, description="a window parameter: the readings inside it (none: all written)")
    above: str | None = Field(None, description="a threshold parameter: the readings above it")
    columns: list[Column] = Field(min_length=1, description="what each column of the query's answer is, in order: the groups' keys first")

    @field_validator("per", mode="before")
    @classmethod
    def _one_or_more(cls, per: Any) -> Any:
        return [per] if isinstance(per, str) else per

    @field_validator("per")
    @classmethod
    def _groups(cls, per: list[str]) -> list[str]:
        for group in per:
            if group not in ("device", "worker"):
                try:
                    duration_ms(group)
                except ValueError:
                    raise ValueError(f"'{group}' is no group: device, worker or a bucket's length (1m, 1h)") from None
        if len(per) != len(set(per)) or len([group for group in per if group not in ("device", "worker")]) > 1:
            raise ValueError("each group once, and one bucket length at most")
        return per

    @property
    def bucket_ms(self) -> int | None:
        return next((duration_ms(group) for group in self.per if group not in ("device", "worker")), None)

    def key_columns(self) -> list[str]:
        """The key columns the groups give, in the order of `per`."""
        return [group if group in ("device", "worker") else "bucket" for group in self.per]

    def problem(self, parameters: dict[str, Any], declared: list[str | dict[str, str]]) -> str | None:
        """Why the declaration does not fit its query (its parameters' kinds, its columns), one line; None when it does."""
        for field, kind in FILTERS.items():
            name = getattr(self, field)
            if name is not None and getattr(parameters.get(name), "kind", None) != kind:
                return f"answer.{field}: {name} is not a {kind} parameter of the query"
        keys = self.key_columns()
        if self.columns[: len(keys)] != keys or any(column in KEYS for column in self.columns[len(keys):]):
            return f"answer.columns: the groups' keys ({', '.join(keys) or 'none: per is empty'}) come first, each once, then statistics"
        if declared and len(declared) != len(self.columns):
            return f"answer.columns: {len(self.columns)} columns, and the query's columns are {len(declared)}"
        for index, (column, kind) in enumerate(zip(self.columns, declared)):
            given = next(iter(kind.values())) if isinstance(kind, dict) else None
            if given is not None and given != COLUMN_KINDS[column]:
                return f"answer.columns: {column} (column {index + 1}) is a {COLUMN_KINDS[column]}, and the query declares a {given}"
        return None
