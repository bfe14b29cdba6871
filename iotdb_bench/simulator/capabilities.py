"""What a database module can do, declared once: one frozen, typed record per module.

"Optional" has one idiom here: an ability is either `True` or `No("the reason")`, and the reason is
what the user reads when a run asks for it ("module 'x' does not support --commit-interval: <reason>").
The simulator only calls a role's method for an ability that is `True`; nothing signals a missing
ability by raising. The CLI, the worker, the collector and the capability tables of README.md and
docs/workloads.md (tests/contract/test_capabilities.py) all read this record.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal

from iotdb_bench.simulator.spec import TSBS_QUERIES, TSBS_QUERIES_OF, PrimaryKey


@dataclass(frozen=True)
class No:
    """An ability the module lacks, and why (shown to the user as is)."""

    because: str

    def __bool__(self) -> bool:
        return False


Ability = Literal[True] | No


class PrepareNext(enum.Enum):
    """When the worker prepares (generates and encodes) the next batch."""

    helper_thread = "helper_thread"  # in a second thread while the current call is in flight
    in_turn = "in_turn"  # between calls (nothing to overlap)
    # in the worker's thread once the module's request is on the wire: the module calls
    # `hooks.while_waiting()` (see roles.WorkerHooks) and the database works meanwhile
    during_call = "during_call"


class Location(enum.Enum):
    """Where the database's work happens, for the resource figures."""

    server = "server"  # processes or pods of its own, found from the module's server address
    embedded = "embedded"  # inside the worker processes
    managed = "managed"  # a cloud service whose machines the tool cannot see
    none = "none"  # nothing stores anything (the null target)


ALL_SHAPES = frozenset({"events", "slim", "light", "large"})
# Why a module does not store a TSBS shape it does not name (simulator/workload/tsbs/): the work is
# done database by database, each with its TSBS target's layout.
TSBS_NOT_YET = "not yet: TSBS's use cases are written database by database (docs/tsbs.md's table says which)"


@dataclass(frozen=True)
class Pace:
    """How fast this database does what a study's --dry-run estimate times, where that is further than 2x from
    the estimate's rough rates (cli/run/study_estimate.py), as measured here on 2 cores against the local servers
    (docs/scale.md); None: the rough rate."""

    batch_rows_per_s: float | None = None  # batched inserts per worker (up to 2)
    batch_values_per_s: float | None = None  # the same, where it stores each value of a row as a point
    tsbs_query_s: float | None = None  # a TSBS query type's execution under many workers, per core
    scan_rows_per_s: float | None = None  # a device's rows read back in order
    btree: bool = False  # its tables are B-trees ordered by their key: random keys slow once the tree outgrows memory


@dataclass(frozen=True)
class Capabilities:
    # What of the workload it can store (simulator/workload/shapes.py); a run asking for more is refused before it starts.
    shapes: frozenset[str] = frozenset({"events"})
    # TSBS's shapes it stores in its TSBS target's layout, and whose query types it answers (docs/tsbs.md);
    # the others are refused with TSBS_NOT_YET.
    tsbs_shapes: frozenset[str] = frozenset()
    # TSBS query types it cannot express, each with why (TSBS's README: VictoriaMetrics has no lastpoint...).
    tsbs_queries_refused: tuple[tuple[str, str], ...] = ()
    primary_keys: frozenset[PrimaryKey] = frozenset(PrimaryKey)
    measurements: Ability = No("it stores one measurement per event")  # --measurements N > 1
    sensors: Ability = No("it stores one sensor per device")  # --sensors M > 1
    # Single inserts inside a transaction committed every S seconds (--commit-interval).
    transactions: Ability = No("its database has no transactions to commit")
    # Whether one event can be looked up by table, device id and sequence number (--visibility).
    markers: Ability = No("it cannot look up one event by device and sequence number")
    # Whether it keeps the record of expected answers with the data (else answers are not checked).
    record: Ability = True
    # The query languages of query files (simulator/queries/query_file.py LANGUAGES) it runs texts of,
    # most specific first: a query runs the first of them it has a text for (`Reader.text_query`).
    query_languages: tuple[str, ...] = ()
    # Whether it reads every reading of a device back in time order (`scan`).
    scans: Ability = True
    # Whether it runs on Kubernetes too (else: local only, and why).
    kubernetes: Ability = True
    location: Location = Location.server
    # The distributions (as pip names them) of its drivers: their versions are recorded with every run.
    drivers: tuple[str, ...] = ()
    prepare_next: PrepareNext = PrepareNext.helper_thread
    # True when it keeps several calls in flight (async drivers) and marks each call's start and end
    # through `hooks.begin_call` itself; the worker then times neither insert call.
    marks_own_calls: bool = False
    pace: Pace = Pace()

    def tsbs_query(self, name: str) -> Ability:
        """Whether it answers the TSBS query type `name` (it stores data the type reads), or why not."""
        if not any(name in TSBS_QUERIES_OF[shape] for shape in self.tsbs_shapes):
            return No(self.tsbs_not_yet())
        return next((No(reason) for refused, reason in self.tsbs_queries_refused if refused == name), True)

    def answered(self, queries: tuple[str, ...]) -> tuple[str, ...]:
        """`queries` less the TSBS types it refuses: a data's own types when none are named."""
        return tuple(name for name in queries if name not in TSBS_QUERIES or self.tsbs_query(name) is True)

    def tsbs_not_yet(self) -> str:
        """Why a TSBS shape it does not name (or a query type of one) is refused: what it stores instead, if anything."""
        stored = ", ".join(sorted(self.tsbs_shapes))
        return f"not yet: it stores TSBS's {stored} only (docs/tsbs.md's table says which each database stores)" if stored else TSBS_NOT_YET
