"""The base of every database module: options, connection, roles (simulator/roles.py) and capabilities.

A module is built from the run spec. Its options (the target's connection options from config.yaml,
overridden by `--extra-option key=value`) are validated by the module's own pydantic model, so a typo
or a bad value is reported up front, field by field, before anything starts. Drivers are imported
lazily inside `connect()`, so a missing driver only affects its own targets.

A module names the classes that play its four roles (`schema, writer, reader, records =
played_by(...)`), each built on its `Role[Module, ItsOptions]`; this base builds one object of each.
The collector uses the `schema` and `records` roles, the workers the `writer` and `reader` roles;
which optional parts a module has is its `capabilities` record (simulator/capabilities.py).
"""

from __future__ import annotations

import abc
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Annotated, Any, ClassVar, Generic, TypeVar, cast, overload

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from iotdb_bench.simulator import env_references
from iotdb_bench.simulator.capabilities import Capabilities
from iotdb_bench.simulator.checks.answers import Query as Query  # re-exported: what every reader returns
from iotdb_bench.simulator.queries.parameters import Parameters
from iotdb_bench.simulator.report import IngestionWait
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.roles import Reader, RecordStore, Schema, WorkerHooks, Writer
from iotdb_bench.simulator.spec import TSBS_QUERIES, PrimaryKey, RunSpec
from iotdb_bench.simulator.validation import validation_problems
from iotdb_bench.simulator.workload import shapes
from iotdb_bench.simulator.workload.events import EventBatch


def http_url(url: str) -> str:
    """An option naming an HTTP endpoint: http:// or https://, kept without its trailing slash."""
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"'{url}' is not an http:// or https:// URL")
    return url.rstrip("/")


HttpUrl = Annotated[str, AfterValidator(http_url)]


def timestamp_pages(timestamps: Iterable[int], page_size: int) -> Iterator[np.ndarray]:
    """A scan's streamed timestamps cut into pages of `page_size` (the last one may be shorter)."""
    page: list[int] = []
    for timestamp in timestamps:
        page.append(timestamp)
        if len(page) == page_size:
            yield np.array(page, dtype=np.int64)
            page = []
    if page:
        yield np.array(page, dtype=np.int64)

log = logging.getLogger("module")


class ModuleError(Exception):
    """A problem the user can fix (bad option, unreachable database); reported as one line."""


Handle = TypeVar("Handle")


def connected(handle: Handle | None, module: str) -> Handle:
    """What `connect()` opened and the module shares with its roles (a connection, a session...), for
    a role to use: a role is only called on a connected module."""
    if handle is None:
        raise ModuleError(f"module '{module}' is not connected")
    return handle


class ModuleOptions(BaseModel):
    """Base of every module's options model: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


# Where a module keeps the record of expected answers (its own table, collection, index...).
RECORD_NAME = "iotbench_expected"
RECORD_KEY = "last-insert"


class Part:
    """What every role reads: the run's spec, its layout (simulator/workload/shapes.py: `layouts` each
    table's, TSBS's shapes have one per measurement) and the module's options."""

    spec: RunSpec
    layout: shapes.Layout
    layouts: dict[str, shapes.Layout]
    options: ModuleOptions

    def not_capable(self, method: str) -> ModuleError:
        """The error of a role method the module's capabilities say it lacks (the simulator never calls
        one: these defaults only make every role class whole, as simulator/roles.py describes it)."""
        return ModuleError(f"module '{self.spec.module}' has no {method}(): its capabilities say so")

    def per_table(self, batch: EventBatch) -> list[tuple[str, EventBatch]]:
        """The batch's events per table of the run, as (table name, events); a device always writes to
        the same table."""
        names = self.spec.table_names
        return [(names[index], part) for index, part in batch.split_by_table(len(names))]

    def rows_per_table(self, batch: EventBatch, rows: Callable[[str, EventBatch], list[Any]]) -> list[tuple[str, Any]]:
        """(table, row) of every event in the batch's order, each row made by `rows` for its table (whose
        layout may differ from the others': TSBS's measurements)."""
        names = self.spec.table_names
        if len(names) == 1 or not self.spec.tsbs:
            return list(zip(self.table_of_each(batch), rows(names[0], batch)))
        items: list[tuple[str, Any]] = [("", None)] * len(batch)
        tables = batch.table_of_each(len(names))
        for index, part in batch.split_by_table(len(names)):
            for at, row in zip(np.flatnonzero(tables == index).tolist(), rows(names[index], part)):
                items[at] = (names[index], row)
        return items

    def table_of_each(self, batch: EventBatch) -> list[str]:
        """The table of every event of the batch, in the batch's order (as `per_table` splits them)."""
        names = self.spec.table_names
        if len(names) == 1:
            return names * len(batch)
        tables: list[str] = np.array(names)[batch.table_of_each(len(names))].tolist()
        return tables


class SchemaRole(Part, abc.ABC):
    """The `Schema` role (simulator/roles.py): what a module must write, and defaults for the rest."""

    counters_final: bool = False  # server_counters() may lag the inserts answered: read until two reads agree

    @abc.abstractmethod
    def setup(self) -> None:
        """Prepare the schema: drop and create when `spec.clean`, create if missing otherwise."""

    @abc.abstractmethod
    def count(self) -> int | None:
        """Events stored in all of the run's tables (None: nothing is stored, the null target)."""

    @abc.abstractmethod
    def server_version(self) -> str:
        """The database server's version as the server itself reports it (e.g. `SELECT version()`),
        recorded with the run's figures; called by the collector once connected."""

    def server_counters(self) -> dict[str, int] | None:
        """The database's own insert counters, if it exposes them (for the database-side cross-check)."""
        return None

    def storage_bytes(self) -> int | None:
        """Bytes used by the run's tables and their indexes, if the database exposes it."""
        return None

    def missing_tables(self) -> list[str] | None:
        """For a query or scan: the run's tables when the database holds neither them nor the tool's
        record (nothing was inserted here: the database is empty, or another program's); [] when
        something is there; None where the module cannot tell cheaply (its queries then fail with
        the database's own words)."""
        return None

    def tidy_after_run(self) -> None:
        """Called by the collector once every worker has ended its work and the run's figures are
        read: an embedded database leaves nothing large beside its data (SQLite's write-ahead log,
        BerkeleyDB's transaction logs)."""

    def wait_for_count(self, expected: int, run_ended_at: float) -> IngestionWait | None:
        """Modules whose acknowledged writes become visible later (queued ingestion) wait here until
        `expected` events are stored or their own limit passes, and describe the wait; others: None."""
        return None

def count_until(count: Callable[[], int], expected: int, run_ended_at: float, limit_s: float, poll_s: float) -> IngestionWait:
    """`count()` until `expected` events are stored or `limit_s` passes: the `wait_for_count` of modules
    whose acknowledged writes become visible later. `run_ended_at`: epoch end of the timed phase."""
    started = time.time()
    while True:
        counted = count()
        now = time.time()
        if counted >= expected or now - started >= limit_s:
            reached = counted >= expected
            return IngestionWait(expected=expected, counted=counted, reached=reached, waited_s=now - started, limit_s=limit_s,
                                 seconds_after_run=max(now - run_ended_at, 0.0) if reached else None)
        log.info("waiting for acknowledged events to be stored: %d of %d", counted, expected)
        time.sleep(min(poll_s, max(limit_s - (now - started), 0.0)))


class WriterRole(Part, abc.ABC):
    """The `Writer` role (simulator/roles.py): what a module must write, and defaults for the rest."""

    # A writer that retries failed calls sets its Retry here (DatabaseModule.retries() reports its count).
    retry: Retry | None = None

    def stored_events(self, batch: EventBatch) -> EventBatch:
        """The events as this module stores them, of which the expected answers are kept: the batch
        itself, unless the module rewrites events (TimescaleDB's restarted timestamps)."""
        return batch

    def prepare_batch(self, batch: EventBatch) -> Any:
        """Encode a batch for `insert_batch` (wire format, parameters); runs outside the timed calls."""
        return batch

    def prepare_batches(self, chunk: EventBatch, size: int) -> list[Any]:
        """`prepare_batch` of each batch of `size` in a chunk of the stream (EventBatch.split); a
        module whose encoding costs a fixed amount per call encodes the whole chunk at once."""
        return [self.prepare_batch(batch) for batch in chunk.split(size)]

    @abc.abstractmethod
    def insert_batch(self, prepared: Any) -> None:
        """One database call that stores a prepared batch (COPY, bulk request, batch statement...)."""

    def prepare_single(self, batch: EventBatch) -> Sequence[Any]:
        """Turn a batch into per-event items for `insert_single`, one per event in the batch's order (a
        run that ends by --duration stops between two of them); runs outside the timed calls."""
        return batch.rows(with_client_key=self.spec.primary_key is PrimaryKey.client)

    @abc.abstractmethod
    def insert_single(self, item: Any) -> None:
        """One database call that stores one event and makes it durable (autocommit), or, with
        --commit-interval, adds it to the open transaction."""

    def commit(self) -> None:
        """Only when `capabilities.transactions`: commit the open transaction of single inserts."""
        raise self.not_capable("commit")

    def flush(self) -> None:
        """Wait until every call in flight has finished (async modules)."""

    def write_marker(self, marker: EventBatch) -> None:
        """Store a marker event through the run's own insert path (batch call or single insert, with
        its commit) and return once the database acknowledged it."""
        if self.spec.batch:
            self.insert_batch(self.prepare_batch(marker))
        else:
            for item in self.prepare_single(marker):
                self.insert_single(item)
            if self.spec.commit_interval_s:
                self.commit()
        self.flush()


class ReaderRole(Part, abc.ABC):
    """The `Reader` role (simulator/roles.py): the queries; `scan_devices`, `scan` and
    `marker_visible` where the capabilities say so."""

    @abc.abstractmethod
    def queries(self) -> dict[str, Query]:
        """The named queries (spec.QUERY_NAMES, and any variants), each fetching all its rows and
        returning them as an `Answer` the check can read (see simulator/checks/answers.py)."""

    def parameterised_queries(self) -> dict[str, Callable[[Parameters], Query]]:
        """The parameterised query types it answers, each rendering its text for one execution's
        parameters (simulator/queries/executions.py): TSBS's, where its capabilities name TSBS shapes."""
        return {}

    def text_query(self, language: str, text: str) -> Query:
        """Only for `capabilities.query_languages`: the query running a query file's bound text."""
        raise self.not_capable("text_query")

    def check_text(self, language: str, text: str) -> None:
        """Only for `capabilities.query_languages`: raise in the database's words when it refuses the text."""
        raise self.not_capable("check_text")

    def one_table_queries(self) -> None:
        """For modules whose queries read the table `events` alone: data written with --tables N (the
        record's tables, which a query follows) is refused in one line rather than answered in part. A TSBS
        shape's tables are its measurements, which the tool's six queries are refused on anyway (by the shape)."""
        tables = self.spec.table_names
        if len(tables) > 1 and not self.spec.tsbs:
            raise ModuleError(f"module '{self.spec.module}' queries one table, and the data is in {len(tables)} "
                              f"({','.join(tables)}, written with --tables {len(tables)}): insert with --tables 1 to query it")

    def scan_devices(self) -> list[str]:
        """Only when `capabilities.scans`: every device with readings in the run's tables, sorted."""
        raise self.not_capable("scan_devices")

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        """Only when `capabilities.scans`: the device's readings' timestamps in time order, by pages."""
        raise self.not_capable("scan")

    def scan_reads_whole_table(self) -> bool:
        """Only when `capabilities.scans`: whether one device's readings are found by reading every row
        (the modules whose layout can say so: the SQL ones by their key and indices, Berkeley DB by its key order)."""
        return False

    def marker_visible(self, marker: EventBatch) -> bool:
        """Only when `capabilities.markers`: whether a query sees the marker event now."""
        raise self.not_capable("marker_visible")

    def marker_key(self, marker: EventBatch) -> tuple[str, str, int]:
        """(table, device id, sequence number) of a one-event marker batch."""
        table = self.per_table(marker)[0][0]
        return table, marker.device_id[0].decode(), int(marker.sequence_number[0])


class RecordsRole(Part):
    """The `RecordStore` role (simulator/roles.py): `store_record` and `stored_record` where the
    capabilities say so."""

    def record_key(self) -> str:
        """The key of the database's one record: the last insert's, whatever its tables and workload (a
        query or scan has no --tables or --schema option: it finds the record and reads its tables)."""
        return RECORD_KEY

    def store_record(self, text: str) -> None:
        """Only when `capabilities.record`: save the record (JSON text), replacing the last one."""
        raise self.not_capable("store_record")

    def stored_record(self) -> str | None:
        """Only when `capabilities.record`: the saved record; None when none is saved yet."""
        raise self.not_capable("stored_record")


ModuleT = TypeVar("ModuleT", bound="DatabaseModule")
OptionsT = TypeVar("OptionsT", bound=ModuleOptions)


class Role(Part, Generic[ModuleT, OptionsT]):
    """A role object of a module split into roles (e.g. modules/cassandra/): it reads the module's
    spec, layout, options, connection and the worker's hooks through `module`. A module's roles build
    on `Role[Module, ItsOptions]` (named once, in its options.py: `SqliteRole`), which types `module`
    and `options` as that module's."""

    module: ModuleT
    options: OptionsT

    def __init__(self, module: DatabaseModule):
        # The module that builds a role is the one whose class names it (PlayedBy): its own.
        self.module, self.options = cast(ModuleT, module), cast(OptionsT, module.options)
        self.spec, self.layout, self.layouts = module.spec, module.layout, module.layouts

    @property
    def hooks(self) -> WorkerHooks:
        return self.module.hooks


RoleT = TypeVar("RoleT", covariant=True)


class PlayedBy(Generic[RoleT]):
    """One of a module's roles, declared in the module's class by the class that plays it (all four at
    once with `played_by`). Each module object gets one object of that class (built when the module
    is, by DatabaseModule), and `module.writer` is that object, typed as that class; mypy checks the
    class against the role's protocol (simulator/roles.py)."""

    def __init__(self, role_class: Callable[[DatabaseModule], RoleT]):
        self.role_class = role_class

    def __set_name__(self, owner: type[DatabaseModule], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, module: None, owner: type[DatabaseModule]) -> PlayedBy[RoleT]: ...

    @overload
    def __get__(self, module: DatabaseModule, owner: type[DatabaseModule]) -> RoleT: ...

    def __get__(self, module: DatabaseModule | None, owner: type[DatabaseModule]) -> PlayedBy[RoleT] | RoleT:
        if module is None:
            return self
        # Built on the first look, then found in the module's own attributes (this is not called again).
        played: RoleT = self.role_class(module)
        module.__dict__[self.name] = played
        return played


SchemaT = TypeVar("SchemaT")
WriterT = TypeVar("WriterT")
ReaderT = TypeVar("ReaderT")
RecordsT = TypeVar("RecordsT")


def played_by(schema: Callable[[DatabaseModule], SchemaT], writer: Callable[[DatabaseModule], WriterT],
              reader: Callable[[DatabaseModule], ReaderT],
              records: Callable[[DatabaseModule], RecordsT]) -> tuple[PlayedBy[SchemaT], PlayedBy[WriterT], PlayedBy[ReaderT], PlayedBy[RecordsT]]:
    """A module's four roles by the classes that play them, in its class:
    `schema, writer, reader, records = played_by(SqliteSchema, SqliteWriter, SqliteReader, SqliteRecords)`."""
    return PlayedBy(schema), PlayedBy(writer), PlayedBy(reader), PlayedBy(records)


# The roles every module plays (simulator/roles.py), in the order DatabaseModule builds them.
ROLE_NAMES = ("schema", "writer", "reader", "records")


class DatabaseModule(abc.ABC):
    """A database module: its options, its connection, and its roles (simulator/roles.py: `schema`,
    `writer`, `reader`, `records`), with one `capabilities` record saying what it can do
    (simulator/capabilities.py). A module names the class that plays each role (`schema, writer,
    reader, records = played_by(...)`: `Role` subclasses, each a small class of its own,
    modules/null.py in one file, modules/cassandra/ as a package); this base builds one object of each."""

    Options: ClassVar[type[ModuleOptions]] = ModuleOptions
    capabilities: Capabilities = Capabilities()
    # Its roles: each module names the classes playing them (`played_by`), narrowing these types.
    schema: Schema
    writer: Writer
    reader: Reader
    records: RecordStore

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        missing = [name for name in ROLE_NAMES if not hasattr(cls, name)]
        if missing:
            raise TypeError(f"{cls.__module__}.{cls.__qualname__} names no class for its role(s) {', '.join(missing)} "
                            "(schema, writer, reader, records = played_by(...))")

    def __init__(self, spec: RunSpec):
        self.spec = spec
        self.layout = shapes.layout(spec)
        self.layouts = shapes.table_layouts(spec)
        self.options = self.parse_options(spec)
        self.hooks = WorkerHooks()
        self.validate()
        # The roles (PlayedBy builds each on its first look), once the options are known to be good: a
        # role's constructor reads the spec, layout and options; what the module shares with its roles
        # (its connection...) it sets after this, and they read it when called.
        for name in ROLE_NAMES:
            getattr(self, name)

    def bind(self, hooks: WorkerHooks) -> None:
        """The worker's one hand-over before its timed phase (see roles.WorkerHooks)."""
        self.hooks = hooks

    @classmethod
    def parse_options(cls, spec: RunSpec) -> ModuleOptions:
        raw = {**spec.connection, **spec.extra}
        try:
            return cls.Options.model_validate({key: env_references.expand(value) for key, value in raw.items()})
        except env_references.MissingVariable as error:
            raise ModuleError(str(error)) from None
        except ValidationError as error:
            raise ModuleError(f"invalid options for module '{spec.module}': {validation_problems(error)}") from None

    def validate(self) -> None:
        """Reject combinations of spec and options this module cannot run; raise ModuleError."""
        self.validate_workload()
        keys = self.capabilities.primary_keys
        if self.spec.primary_key not in keys and self.layout.has_key:
            allowed = ", ".join(sorted(mode.value for mode in keys))
            raise ModuleError(f"module '{self.spec.module}' does not support --primary-key {self.spec.primary_key.value} (supported: {allowed})")

    def validate_workload(self) -> None:
        """Refuse the workload options this module cannot store (ModuleError naming module and option)."""
        spec, name, can = self.spec, self.spec.module, self.capabilities
        if spec.tsbs and spec.shape not in can.tsbs_shapes:
            raise ModuleError(f"module '{name}' does not support --schema {spec.shape}: {can.tsbs_not_yet()}")
        if not spec.tsbs and spec.shape not in can.shapes:
            supported = ", ".join(sorted(can.shapes))
            raise ModuleError(f"module '{name}' does not support --schema {spec.shape} (supported: {supported})")
        for query in (spec.queries if spec.task == "query" or spec.query_workers else ()):
            answers = can.tsbs_query(query) if query in TSBS_QUERIES else True
            if answers is not True:
                raise ModuleError(f"module '{name}' does not answer TSBS's {query}: {answers.because}")
        asked = [("--measurements above 1", spec.measurements > 1, can.measurements), ("--sensors above 1", spec.sensors > 1, can.sensors),
                 ("--commit-interval", bool(spec.commit_interval_s), can.transactions), ("--visibility", spec.visibility, can.markers)]
        for option, wanted, ability in asked:
            if wanted and ability is not True:
                raise ModuleError(f"module '{name}' does not support {option}: {ability.because}")
        if spec.visibility and spec.shape != "events":
            raise ModuleError(f"--visibility needs --schema events (markers are found by device id and sequence number), not {spec.shape}")

    def check_tsbs_layout_options(self, given: dict[str, object]) -> None:
        """Module options that would change the tables of a TSBS shape, which are its TSBS target's (no
        key column): refused in one line when a run writes or reads one."""
        chosen = next((option for option, value in given.items() if value), None)
        if self.spec.tsbs and chosen:
            raise ModuleError(f"module '{self.spec.module}': {chosen} does not apply to --schema {self.spec.shape}: its tables are TSBS's "
                              "TimescaleDB target's, without a key column (docs/tsbs.md)")

    def check_query_indices(self, create_indices: bool) -> None:
        """The query indices (create_indices) are on temperature and device_id: only the events shape has them."""
        if create_indices and self.layout.shape != "events":
            raise ModuleError(f"module '{self.spec.module}': create_indices (on temperature and device_id) needs --schema events, not {self.layout.shape}")

    # -- how the module describes its runs -------------------------------------------------
    def insert_mode(self) -> str:
        """How this run's events reach the database, as tables and comparisons name it (e.g. "COPY, size
        1000", "single inserts", "UNLOGGED batches per device, size 1000, async, 8 in flight")."""
        if not self.spec.batch:
            if self.spec.commit_interval_s:
                return f"single inserts, commit every {self.spec.commit_interval_s:g} s"
            return "single inserts"
        return f"{self.batch_kind()}, size {self.spec.batch}"

    def batch_kind(self) -> str:
        """What one batch call is in this database (COPY, values lists, _bulk request...)."""
        return "batch"

    def server_address(self) -> tuple[str, int] | None:
        """Host (or a Unix socket's path) and port of the database server, for finding its processes
        on this machine; None when the module cannot tell."""
        return None

    @staticmethod
    def url_address(url: str, default_port: int) -> tuple[str, int]:
        """(host, port) of an http(s) URL, for `server_address()`."""
        from urllib.parse import urlsplit

        parts = urlsplit(url if "//" in url else f"http://{url}")
        return parts.hostname or "localhost", parts.port or default_port

    def notes(self) -> list[str]:
        """What a reader of this run's figures must know about the module (shown under the tables)."""
        return []

    # -- lifecycle -------------------------------------------------------------------------
    @abc.abstractmethod
    def connect(self) -> None:
        """Open the connection(s); raise ModuleError naming host and port when unreachable."""

    def close(self) -> None:
        pass

    def retries(self) -> int:
        """How many calls had to be retried (serialisation failures and the like): the writer's retries."""
        retry = self.writer.retry
        return retry.count if retry is not None else 0
