"""The one small interface every database module implements.

A module is built from the run spec. Its options (the target's connection options from config.yaml,
overridden by `--extra-option key=value`) are validated by the module's own pydantic model, so a typo
or a bad value is reported up front, field by field, before anything starts. Drivers are imported
lazily inside `connect()`, so a missing driver only affects its own targets.

The collector calls `setup()`, `count()` and, with issue-5 style cross-checks, `server_counters()`;
workers call `insert_batch()` / `insert_single()` and the query callables.
"""

from __future__ import annotations

import abc
import os
import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from simulator.events import EventBatch
from simulator.spec import PrimaryKey, RunSpec


class ModuleError(Exception):
    """A problem the user can fix (bad option, unreachable database); reported as one line."""


class ModuleOptions(BaseModel):
    """Base of every module's options model: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_env(value: Any) -> Any:
    """Replace ${VAR} and ${VAR:-default} in strings; a missing variable without default is an error."""
    if not isinstance(value, str):
        return value

    def replace(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        raise ModuleError(f"environment variable {name} is not set (referenced as ${{{name}}} in the target's options)")

    return _ENV_REFERENCE.sub(replace, value)


def format_validation_error(error: ValidationError, what: str) -> str:
    problems = []
    for item in error.errors():
        location = ".".join(str(part) for part in item["loc"]) or what
        message = "unknown option" if item["type"] == "extra_forbidden" else item["msg"]
        problems.append(f"{location}: {message}")
    return f"invalid {what}: " + "; ".join(problems)


# A query runs against the database and returns the number of rows it fetched.
Query = Callable[[], int]


class DatabaseModule(abc.ABC):
    """Base class; subclasses set `Options` and implement the operations they support."""

    Options: ClassVar[type[ModuleOptions]] = ModuleOptions
    # Primary-key modes the module can honour; others are rejected before the run starts.
    primary_keys: ClassVar[frozenset[PrimaryKey]] = frozenset(PrimaryKey)
    # True when the module keeps several calls in flight and reports each call's latency itself
    # through `on_call_done` (async drivers); the worker then times neither `insert_batch` nor `insert_single`.
    times_own_calls: ClassVar[bool] = False
    # When the worker prepares the next batch: "helper_thread" (while the current call is in flight,
    # in a second thread), "in_turn" (between calls), or "during_call": the module calls
    # `self.while_waiting()` once its request is on the wire, and the next batch is prepared in the
    # same thread while the database works on the current one.
    prepare_next: ClassVar[str] = "helper_thread"

    def __init__(self, spec: RunSpec):
        self.spec = spec
        self.options = self.parse_options(spec)
        self.on_call_done: Callable[[int, float], None] = lambda events, seconds: None
        self.while_waiting: Callable[[], None] = lambda: None
        self.validate()

    @classmethod
    def parse_options(cls, spec: RunSpec) -> ModuleOptions:
        raw = {**spec.connection, **spec.extra}
        try:
            return cls.Options.model_validate({key: expand_env(value) for key, value in raw.items()})
        except ValidationError as error:
            raise ModuleError(format_validation_error(error, f"options for module '{spec.module}'")) from None

    def validate(self) -> None:
        """Reject combinations of spec and options this module cannot run; raise ModuleError."""
        if self.spec.primary_key not in self.primary_keys:
            allowed = ", ".join(sorted(mode.value for mode in self.primary_keys))
            raise ModuleError(f"module '{self.spec.module}' does not support --primary-key {self.spec.primary_key.value} (supported: {allowed})")

    # -- lifecycle -------------------------------------------------------------------------
    @abc.abstractmethod
    def connect(self) -> None:
        """Open the connection(s); raise ModuleError naming host and port when unreachable."""

    def close(self) -> None:
        pass

    # -- collector -------------------------------------------------------------------------
    @abc.abstractmethod
    def setup(self) -> None:
        """Prepare the schema: drop and create when `spec.clean`, create if missing otherwise."""

    @abc.abstractmethod
    def count(self) -> int:
        """Events stored in all of the run's tables."""

    def server_counters(self) -> dict[str, int] | None:
        """The database's own insert counters, if it exposes them (for the database-side cross-check)."""
        return None

    def storage_bytes(self) -> int | None:
        """Bytes used by the run's tables and their indexes, if the database exposes it."""
        return None

    def wait_for_count(self, expected: int, run_ended_at: float) -> BaseModel | None:
        """Modules whose acknowledged writes become visible later (queued ingestion) wait here until
        `expected` events are stored or their own limit passes, and describe the wait; others: None."""
        return None

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> Any:
        """Encode a batch for `insert_batch` (wire format, parameters); runs outside the timed calls."""
        return batch

    @abc.abstractmethod
    def insert_batch(self, prepared: Any) -> None:
        """One database call that stores a prepared batch (COPY, bulk request, batch statement...)."""

    def prepare_single(self, batch: EventBatch) -> Sequence[Any]:
        """Turn a batch into per-event items for `insert_single`; runs outside the timed calls."""
        return batch.rows(with_client_key=self.spec.primary_key is PrimaryKey.client)

    @abc.abstractmethod
    def insert_single(self, item: Any) -> None:
        """One database call that stores one event and makes it durable (autocommit)."""

    def flush(self) -> None:
        """Wait until every call in flight has finished (async modules)."""

    @abc.abstractmethod
    def queries(self) -> dict[str, Query]:
        """The five named queries, each fetching all its rows."""

    def retries(self) -> int:
        """How many calls had to be retried (serialisation failures and the like)."""
        return 0
