"""The roles a database module plays, each a small typed protocol (in the manner of TSBS's target
interfaces). A module (modules/base.py) is its options, its connection and these four roles, plus one
`Capabilities` record (capabilities.py) saying which optional parts it has:

- `Schema`: prepares the tables and counts what they hold (the collector);
- `Writer`: stores batches and single events (the workers, the visibility probe);
- `Reader`: the named queries, the scan, the visibility probe's look-up (the read side);
- `RecordStore`: keeps the record of expected answers with the data (simulator/checks/expected.py).

Each protocol holds every call the simulator makes on that role (the collector, the workers, the
visibility probe, the record keeping), and nothing else; mypy checks each module's role classes
against them (pyproject.toml's [tool.mypy]). The simulator calls a method marked "only when" only
where the capabilities say yes. Everything a role needs from the worker arrives through one call,
`DatabaseModule.bind(WorkerHooks(...))`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from iotdb_bench.simulator.checks.answers import Query
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.report import IngestionWait
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.workload.events import EventBatch


def _no_call(events: int) -> Callable[[], None]:
    return _nothing


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class WorkerHooks:
    """What the worker hands a module for its timed phase (one explicit `bind`, never assigned):
    `begin_call(events)` marks a call sent and returns what to call once it has ended (modules whose
    capabilities say `marks_own_calls`); `while_waiting()` prepares the next batch once the module's
    request is on the wire (`prepare_next = during_call`; calling it again does nothing)."""

    begin_call: Callable[[int], Callable[[], None]] = _no_call
    while_waiting: Callable[[], None] = _nothing


class Schema(Protocol):
    # True where the counters count an insert before the database answers it: one read once the inserts
    # stopped is final (otherwise the collector reads them again until two reads agree).
    counters_final: bool

    def setup(self) -> None:
        """Insert only: prepare the tables: drop and create when `spec.clean`, create if missing otherwise."""

    def count(self) -> int | None:
        """Events stored in all of the run's tables (None: nothing is stored, the null target)."""

    def missing_tables(self) -> list[str] | None:
        """Query and scan only, before anything runs: the run's tables when the database holds neither
        them nor the record ([] when something is there; None where the module cannot tell cheaply)."""

    def server_version(self) -> str:
        """The server's version in its own words (e.g. `SELECT version()`), recorded with the figures."""

    def server_counters(self) -> dict[str, int] | None:
        """The database's own insert counters, where it exposes them (else None)."""

    def storage_bytes(self) -> int | None:
        """Bytes used by the run's tables and indexes, where it exposes them (else None)."""

    def wait_for_count(self, expected: int, run_ended_at: float) -> IngestionWait | None:
        """Queued ingestion only: wait, bounded, until `expected` events are stored (else None)."""

    def tidy_after_run(self) -> None:
        """Once every worker has ended and the figures are read: an embedded database leaves nothing
        large beside its data (e.g. SQLite's write-ahead log); the others do nothing."""


class Writer(Protocol):
    @property
    def retry(self) -> Retry | None:
        """The writer's retries of failed calls, where it retries them: `DatabaseModule.retries()`
        reports their count with the run's figures."""

    def prepare_batch(self, batch: EventBatch) -> Any:
        """Encode a batch for `insert_batch`; runs outside the timed calls."""

    def prepare_batches(self, chunk: EventBatch, size: int) -> list[Any]:
        """`prepare_batch` of each batch of `size` in the chunk (EventBatch.split), in order; a module
        may encode the whole chunk at once."""

    def insert_batch(self, prepared: Any) -> None:
        """One database call that stores a prepared batch."""

    def prepare_single(self, batch: EventBatch) -> Sequence[Any]:
        """Per-event items for `insert_single`, in the batch's order; outside the timed calls."""

    def insert_single(self, item: Any) -> None:
        """One database call that stores one event (autocommit, or into the open transaction)."""

    def commit(self) -> None:
        """Only when `capabilities.transactions`: commit the open transaction of single inserts."""

    def flush(self) -> None:
        """Wait until every call in flight has finished (async modules)."""

    def stored_events(self, batch: EventBatch) -> EventBatch:
        """The events as stored (the batch itself unless the module rewrites events)."""

    def write_marker(self, marker: EventBatch) -> None:
        """Store one marker event through the run's insert path and return once acknowledged."""


class Reader(Protocol):
    def queries(self) -> dict[str, Query]:
        """The named queries, each returning its rows as an `Answer` (simulator/checks/answers.py)."""

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """The parameterised query types it answers (TSBS's, by name): each renders its text for one
        execution's parameters and returns the query to run (simulator/queries/executions.py)."""

    def text_query(self, language: str, text: str) -> Query:
        """Only for `capabilities.query_languages`: the query that runs a query file's text, its
        parameters bound (simulator/queries/executions.py), and returns the driver's rows as an
        `Answer` (timestamps as datetimes where the driver says a value is one)."""

    def check_text(self, language: str, text: str) -> None:
        """Only for `capabilities.query_languages`: raise, in the database's words, when it refuses the
        text (EXPLAIN, prepare...); run before the timed phase, by the collector."""

    def scan_devices(self) -> list[str]:
        """Only when `capabilities.scans`: every device with readings in the run's tables, sorted."""

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        """Only when `capabilities.scans`: the device's readings' timestamps (int64 epoch ms) in
        time order, streamed a page of about `page_size` at a time."""

    def scan_reads_whole_table(self) -> bool:
        """Only when `capabilities.scans`: whether reading one device's readings reads every row of the
        tables (no key or index leads with the device): a scan then costs its rows times its devices.
        Asked by a study's estimate (cli/run/study_estimate.py), without a connection."""

    def marker_visible(self, marker: EventBatch) -> bool:
        """Only when `capabilities.markers`: whether a query sees the marker event now."""


class RecordStore(Protocol):
    def store_record(self, text: str) -> None:
        """Only when `capabilities.record`: save the record (JSON text), replacing the last one."""

    def stored_record(self) -> str | None:
        """Only when `capabilities.record`: the saved record; None when none is saved yet."""
