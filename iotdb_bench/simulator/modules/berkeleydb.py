"""BerkeleyDB (seed 004), embedded: one B-tree per table in a transactional environment that the
run's processes share, through Debian's libdb 5.3 and the `berkeleydb` bindings.

The environment (a folder, option `home`) has a shared cache, locking, logging and transactions
(INIT_MPOOL | INIT_LOCK | INIT_LOG | INIT_TXN), so the workers, separate processes, write into the same
B-tree at once. Page locks make concurrent writers deadlock now and then (page splits): the deadlock
detector picks a victim, whose transaction is aborted and retried (counted as retries).

Records (simulator/wire/kv_records.py): the key is device, sensor and timestamp as big-endian bytes
(`key_order=device`, seed 004's clustered layout: a cursor walks one device in time order) or
timestamp first (`key_order=time`, the sorted layout); the value packs sequence number and
temperature in 16 bytes (and with --measurements N the other N-1 values, 8 bytes each). Workloads:
the events shape with --sensors (the key's sensor) and --measurements; seed 002's slim, light and
large tables have no device and time to key a record by, so they are refused, as is
--commit-interval (see no_transactions_because). The key order is stored in the environment (`layout.db`): queries read the
data as it was written, and an insert with `--no-clean` refuses another order.

Inserts: a batch is one transaction of puts; a single insert is a transaction of one put. Commits
are durable (`durability=sync`, the default) or leave the log in the OS's buffers
(`write_nosync`) or in BerkeleyDB's (`nosync`, seed 004's SQLite ran with sync off).

Processes and recovery: every process joins the environment with DB_REGISTER | DB_RECOVER. BerkeleyDB
then records each process that has it open, and the first process to open it after one of them
died without closing it (a crashed or killed worker, or the collector, which is always stopped with
a signal) runs recovery: committed transactions are kept, the dead process's open transaction is
rolled back, its locks are gone. The collector opens first and alone (workers wait until it has
prepared the database), so recovery runs while no worker is in the environment. A worker that
dies during a run fails the run (the others may wait on its locks until the CLI stops them); the
next run's collector recovers the environment. `--clean` closes the collector's handle, refuses
while another process still has the environment open, and deletes the environment's files (every
table in it) before creating it again. Workers checkpoint when they close, so recovery reads
little log; log files no longer needed are removed automatically, and once the run's figures are
read the collector checkpoints and removes every log file recovery no longer needs. The storage
figure counts the B-tree files and the log files on disk at the end of the run.

Queries are cursor walks over the `events` B-tree, aggregated in the client (NumPy over chunks of
records): BerkeleyDB has no query language. newest-per-device with the device-first layout jumps from
device to device (set_range past a device's keys, then one step back) instead of reading every record;
device-downsample seeks to the device's hour (device-first) or to the hour (time-first) and walks it.
Scans are seed 004's: with device-first keys a cursor walks one device's range in time order; with
time-first keys every device's scan walks the whole tree (the price of that layout). The record of
expected answers is kept in `layout.db`, beside the key order.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator

from iotdb_bench.simulator.answers import Answer
from iotdb_bench.simulator.capabilities import Capabilities, Location, No
from iotdb_bench.simulator.errors import described, one_line
from iotdb_bench.simulator.events import EventBatch
from iotdb_bench.simulator.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_MINUTES, DOWNSAMPLE_START_MS, MINUTE_MS
from iotdb_bench.simulator.modules.base import ModuleError, ModuleOptions, OneClassModule, Query
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.spec import SINGLE_TABLE_NAME, PrimaryKey
from iotdb_bench.simulator.wire import kv_records
from iotdb_bench.simulator.wire.kv_records import KeyOrder

log = logging.getLogger("berkeleydb")

LAYOUT_FILE = "layout.db"
REGISTRY_FILE = "__db.register"
REGISTRY_SLOT = 25  # bytes per process slot of DB_REGISTER's file (libdb's env_register.c)
WALK_CHUNK = 10_000  # records decoded at a time by the query walks


class BerkeleydbOptions(ModuleOptions):
    home: str = Field("iotdb-bench-berkeleydb", min_length=1, description="the environment's folder (created if missing; a folder of its own)")
    key_order: KeyOrder = Field("device", description="device: device, sensor, timestamp (clustered); time: timestamp first (sorted)")
    cache_mb: int = Field(64, ge=1, le=1 << 20, description="the environment's shared cache")
    page_size: int | None = Field(None, description="B-tree page size of new tables, a power of two from 512 to 65536 (seed 004: 65536)")
    durability: Literal["sync", "write_nosync", "nosync"] = "sync"
    max_retries: int = Field(100, ge=0, description="retries of a transaction chosen as a deadlock victim")
    max_locks: int = Field(200_000, ge=1000, description="lock table size: a transaction locks every page it writes")

    @field_validator("page_size")
    @classmethod
    def _power_of_two(cls, size: int | None) -> int | None:
        if size is not None and (size < 512 or size > 65536 or size & (size - 1)):
            raise ValueError(f"{size} is not a power of two from 512 to 65536")
        return size


class Module(OneClassModule):
    Options = BerkeleydbOptions
    options: BerkeleydbOptions
    capabilities = Capabilities(
        # The key is seed 004's (device, sensor, timestamp): the events shape, with any sensors and measurements.
        primary_keys=frozenset({PrimaryKey.db, PrimaryKey.client}), measurements=True, sensors=True,
        transactions=No("a writer chosen as a deadlock victim would lose the whole interval's events, which cannot be sent again; "
                        "batches are one transaction each"),
        # BerkeleyDB runs inside the worker processes: their CPU is the database's work too.
        location=Location.embedded,
        kubernetes=No("BerkeleyDB is embedded: the run's processes share one environment folder, and its bindings are not in the image"),
        drivers=("berkeleydb",),
    )

    def __init__(self, spec):
        super().__init__(spec)
        self._db: Any = None  # the berkeleydb.db module, imported in connect()
        self._env: Any = None
        self._tables: dict[str, Any] = {}
        self._home = Path(self.options.home)
        self._key_order: KeyOrder = self.options.key_order
        self.retry = Retry(self.options.max_retries, self._deadlocked)

    def validate(self) -> None:
        # The bindings are optional (no wheel: they compile against libdb): say so before the run.
        try:
            import berkeleydb  # noqa: F401
        except ImportError:
            raise ModuleError("the berkeleydb target needs its optional driver, which compiles against Berkeley DB: "
                              "apt install libdb5.3-dev gcc, then BERKELEYDB_DIR=/usr pip install -r requirements-berkeleydb.txt") from None
        self.validate_workload()
        if self.spec.primary_key not in self.capabilities.primary_keys:
            raise ModuleError(
                f"module 'berkeleydb' does not support --primary-key {self.spec.primary_key.value}: a record's key is built from "
                "the event (device, sensor, timestamp); use db or client, which mean the same"
            )

    def batch_kind(self) -> str:
        return "puts in one transaction"

    def insert_mode(self) -> str:
        return f"{super().insert_mode()}, {self._key_order}-first keys"

    def notes(self) -> list[str]:
        return [
            "queries are cursor walks over the B-tree, aggregated in the client: BerkeleyDB has no query language",
            f"keys: {self._key_order} first; storage counts the B-tree files and the transaction log's files at the end of the run",
        ]

    # -- lifecycle -------------------------------------------------------------------------
    def connect(self) -> None:
        from berkeleydb import db

        self._db = db
        home = self._home
        if not home.parent.is_dir():
            raise ModuleError(f"cannot open the BerkeleyDB environment {home}: folder {home.parent} does not exist")
        if self.spec.task in ("query", "scan") and not home.is_dir():
            raise ModuleError(f"there is no BerkeleyDB environment {home}: insert events first")
        home.mkdir(exist_ok=True)
        foreign = [path.name for path in sorted(home.iterdir()) if not _environment_file(path)]
        if foreign:
            raise ModuleError(f"{home} holds files that are not BerkeleyDB's (e.g. {foreign[0]}): the environment needs a folder of its own")
        self._open()

    def _open(self) -> None:
        db, options = self._db, self.options
        env = db.DBEnv()
        env.set_cachesize(options.cache_mb >> 10, (options.cache_mb & 1023) << 20, 1)
        env.set_lk_detect(db.DB_LOCK_DEFAULT)
        env.set_lk_max_locks(options.max_locks)
        env.set_lk_max_objects(options.max_locks)
        flags = (db.DB_CREATE | db.DB_INIT_MPOOL | db.DB_INIT_LOCK | db.DB_INIT_LOG | db.DB_INIT_TXN | db.DB_THREAD
                 | db.DB_REGISTER | db.DB_RECOVER)
        try:
            env.open(str(self._home), flags, 0o600)
        except db.DBError as error:
            with contextlib.suppress(db.DBError):
                env.close()
            raise ModuleError(f"cannot open the BerkeleyDB environment {self._home}: {_reason(error)}") from None
        env.log_set_config(db.DB_LOG_AUTO_REMOVE, 1)
        self._env = env
        self._key_order = self._stored_key_order()
        self._tables = {name: self._open_table(name) for name in self.spec.table_names}

    def _open_table(self, name: str):
        db = self._db
        table = db.DB(self._env)
        if self.options.page_size:
            table.set_pagesize(self.options.page_size)  # ignored by tables that exist
        create = db.DB_CREATE if self.spec.task == "insert" else 0
        try:
            table.open(f"{name}.db", None, db.DB_BTREE, create | db.DB_AUTO_COMMIT | db.DB_THREAD, 0o600)
        except db.DBNoSuchFileError:
            raise ModuleError(f"the BerkeleyDB environment {self._home} has no table {name} ({name}.db): insert events first") from None
        return table

    def _stored_key_order(self) -> KeyOrder:
        """The key order of the environment's tables; written by an insert, read back by queries and by
        inserts that keep the data (--no-clean), which must not mix two orders in one B-tree."""
        db, wanted = self._db, self.options.key_order
        layout = db.DB(self._env)
        create = db.DB_CREATE if self.spec.task == "insert" else 0
        try:
            try:
                layout.open(LAYOUT_FILE, None, db.DB_BTREE, create | db.DB_AUTO_COMMIT | db.DB_THREAD, 0o600)
            except db.DBNoSuchFileError:
                raise ModuleError(f"the BerkeleyDB environment {self._home} holds no tables: insert events first") from None
            stored = layout.get(b"key_order")
            if stored is None:
                if self.spec.task == "insert":
                    layout.put(b"key_order", wanted.encode())
                return wanted
            stored_order = stored.decode()
            if self.spec.task == "insert" and not self.spec.clean and stored_order != wanted:
                raise ModuleError(f"the tables in {self._home} have {stored_order}-first keys: --no-clean needs key_order={stored_order}")
            if self.spec.task == "insert" and stored_order != wanted:
                layout.put(b"key_order", wanted.encode())  # --clean: setup() deletes the old tables
                return wanted
            return stored_order
        finally:
            layout.close()

    # -- the record of expected answers, in layout.db ------------------------------------------
    def store_record(self, text: str) -> None:
        self._with_layout(lambda layout: layout.put(self._record_key(), text.encode(), txn=None))

    def stored_record(self) -> str | None:
        found = self._with_layout(lambda layout: layout.get(self._record_key()))
        return None if found is None else found.decode()

    def _record_key(self) -> bytes:
        return b"expected:" + self.record_key().encode()

    def _with_layout(self, use: Callable[[Any], Any]) -> Any:
        db = self._db
        layout = db.DB(self._env)
        try:
            layout.open(LAYOUT_FILE, None, db.DB_BTREE, db.DB_AUTO_COMMIT | db.DB_THREAD, 0o600)
            return use(layout)
        finally:
            layout.close()

    def close(self) -> None:
        if self._env is None:
            return
        db, env, tables = self._db, self._env, self._tables
        self._env, self._tables = None, {}
        try:
            for table in tables.values():
                table.close()
            env.txn_checkpoint()  # recovery after this process starts from here
        except db.DBError as error:  # e.g. the environment was recovered under us (DB_RUNRECOVERY)
            log.warning("closing the BerkeleyDB environment: %s", _reason(error))
        with contextlib.suppress(db.DBError):
            env.close()

    # -- collector -------------------------------------------------------------------------
    def setup(self) -> None:
        if not self.spec.clean:
            return
        self.close()
        others = registered_processes(self._home)
        if others:
            raise ModuleError(f"--clean would delete the BerkeleyDB environment {self._home} while process(es) "
                              f"{', '.join(map(str, others))} still have it open: stop them first")
        for path in self._home.iterdir():
            if _environment_file(path) and path.name != "DB_CONFIG":
                path.unlink()
        self._open()
        self._env.txn_checkpoint()

    def server_version(self) -> str | None:
        # Embedded: the library the bindings were built against is the database engine.
        return self._db.DB_VERSION_STRING

    def count(self) -> int:
        return sum(table.stat()["ndata"] for table in self._tables.values())

    def server_counters(self) -> dict[str, int] | None:
        # BerkeleyDB counts transactions, not records; the record count read by the library stands in.
        return {"rows": self.count()}

    def storage_bytes(self) -> int | None:
        self._env.memp_sync()  # pages still in the shared cache reach the files first
        tables = sum((self._home / f"{name}.db").stat().st_size for name in self._tables)
        # A log file is created at its full size and filled as the log grows: the blocks it holds count.
        return tables + sum(path.stat().st_blocks * 512 for path in self._home.glob("log.*"))

    def tidy_after_run(self) -> None:
        """A checkpoint, then every log file recovery no longer needs is removed (the current one
        stays); the last process out also removes the shared regions (their largest file is the size
        of the cache): the next process to open the environment creates them again."""
        db = self._db
        self._env.txn_checkpoint(0, 0, db.DB_FORCE)
        self._env.log_archive(db.DB_ARCH_REMOVE)
        self.close()
        if not registered_processes(self._home):
            db.DBEnv().remove(str(self._home))

    # -- workers ---------------------------------------------------------------------------
    def prepare_batch(self, batch: EventBatch) -> list[tuple[str, list[bytes], list[bytes]]]:
        return [(table, *kv_records.encode(part, self._key_order)) for table, part in self.per_table(batch)]

    def insert_batch(self, prepared: list[tuple[str, list[bytes], list[bytes]]]) -> None:
        self.retry.call(lambda: self._transaction(prepared))

    def prepare_single(self, batch: EventBatch) -> list[list[tuple[str, list[bytes], list[bytes]]]]:
        keys, values = kv_records.encode(batch, self._key_order)
        return [[(table, [key], [value])] for table, key, value in zip(self.table_of_each(batch), keys, values)]

    def insert_single(self, item: list[tuple[str, list[bytes], list[bytes]]]) -> None:
        self.retry.call(lambda: self._transaction(item))

    def _transaction(self, records: list[tuple[str, list[bytes], list[bytes]]]) -> None:
        """Every record in one transaction, committed as `durability` says; aborted on any error."""
        db = self._db
        txn = self._env.txn_begin()
        try:
            for table, keys, values in records:
                put = self._tables[table].put
                for key, value in zip(keys, values):
                    put(key, value, txn=txn, flags=db.DB_NOOVERWRITE)
        except db.DBKeyExistError:
            txn.abort()
            raise RuntimeError(f"{table}: {self._describe(key)} is stored already (a new command with --no-clean starts the "
                               "event streams from their beginning again: continue them with --steps, or use --clean)") from None
        except BaseException:
            txn.abort()
            raise
        txn.commit(self._commit_flags())  # a failed commit has aborted the transaction itself

    def _describe(self, key: bytes) -> str:
        fields = kv_records.decode_keys([key], kv_records.key_layout(self._key_order))[0]
        return f"the event of device {fields['device_id'].decode()} at {int(fields['timestamp'])} ms"

    def _commit_flags(self) -> int:
        db = self._db
        return {"sync": db.DB_TXN_SYNC, "write_nosync": db.DB_TXN_WRITE_NOSYNC, "nosync": db.DB_TXN_NOSYNC}[self.options.durability]

    def _deadlocked(self, error: BaseException) -> bool:
        db = self._db
        return db is not None and isinstance(error, (db.DBLockDeadlockError, db.DBLockNotGrantedError))

    # -- queries ---------------------------------------------------------------------------
    def queries(self) -> dict[str, Query]:
        self.one_table_queries()
        return {
            "count-events": self._timed(self._count_events),
            "temperature-min-max": self._timed(lambda deadline: self._temperature_stats(deadline, with_avg=False)),
            "temperature-stats": self._timed(lambda deadline: self._temperature_stats(deadline, with_avg=True)),
            "temperature-stats-per-device": self._timed(self._stats_per_device),
            "newest-per-device": self._timed(self._newest_per_device),
            "device-downsample": self._timed(self._downsample),
        }

    def _timed(self, walk: Callable[[float | None], list[tuple]]) -> Query:
        def run() -> Answer:
            timeout = self.spec.query_timeout if self.spec.task == "query" else 0
            return Answer(walk(time.monotonic() + timeout if timeout else None))

        return run

    def _chunks(self, deadline: float | None, first: bytes | None = None) -> Iterator[tuple[list[bytes], list[bytes]]]:
        """The records of the events table in key order (from the first key at or after `first`),
        WALK_CHUNK (keys, values) at a time."""
        cursor = self._tables[SINGLE_TABLE_NAME].cursor()
        try:
            keys: list[bytes] = []
            values: list[bytes] = []
            step, add_key, add_value = cursor.next, keys.append, values.append
            record = cursor.first() if first is None else cursor.set_range(first)
            while record is not None:
                add_key(record[0])
                add_value(record[1])
                if len(keys) == WALK_CHUNK:
                    yield keys, values
                    _check(deadline, self.spec.query_timeout)
                    keys.clear()
                    values.clear()
                record = step()
            if keys:
                yield keys, values
        finally:
            cursor.close()

    # Each query walks the records and computes its answer in the client.
    def _count_events(self, deadline: float | None) -> list[tuple]:
        return [(sum(len(keys) for keys, _ in self._chunks(deadline)),)]

    def _temperature_stats(self, deadline: float | None, with_avg: bool) -> list[tuple]:
        low, high, total, count = np.inf, -np.inf, 0.0, 0
        for _, values in self._chunks(deadline):
            temperature = kv_records.decode_values(values)["temperature"]
            low, high = min(low, temperature.min()), max(high, temperature.max())
            count += len(temperature)
            if with_avg:
                total += float(temperature.sum())
        if not count:
            return []
        return [(float(low), total / count, float(high))] if with_avg else [(float(low), float(high))]

    def _stats_per_device(self, deadline: float | None) -> list[tuple]:
        layout = kv_records.key_layout(self._key_order)
        per_device: dict[bytes, list[float]] = {}  # device -> [min, max, sum, count]
        for keys, values in self._chunks(deadline):
            devices, which = np.unique(kv_records.decode_keys(keys, layout)["device_id"], return_inverse=True)
            temperature = kv_records.decode_values(values)["temperature"]
            low, high = np.full(len(devices), np.inf), np.full(len(devices), -np.inf)
            np.minimum.at(low, which, temperature)
            np.maximum.at(high, which, temperature)
            sums, counts = np.bincount(which, temperature, len(devices)), np.bincount(which, minlength=len(devices))
            for device, *figures in zip(devices.tolist(), low.tolist(), high.tolist(), sums.tolist(), counts.tolist()):
                known = per_device.setdefault(device, [np.inf, -np.inf, 0.0, 0])
                known[0], known[1] = min(known[0], figures[0]), max(known[1], figures[1])
                known[2] += figures[2]
                known[3] += figures[3]
        return [(device.decode(), low, total / count, high) for device, (low, high, total, count) in per_device.items()]

    def _newest_per_device(self, deadline: float | None) -> list[tuple]:
        layout = kv_records.key_layout(self._key_order)
        if self._key_order == "device":
            newest = self._last_record_per_device(layout, deadline)
        else:
            newest: dict[bytes, tuple[int, float]] = {}
            for keys, values in self._chunks(deadline):  # time order: a device's last record in the walk is its newest
                decoded = kv_records.decode_keys(keys, layout)
                devices, from_end = np.unique(decoded["device_id"][::-1], return_index=True)
                last = len(keys) - 1 - from_end
                temperature = kv_records.decode_values(values)["temperature"][last]
                newest.update(zip(devices.tolist(), zip(decoded["timestamp"][last].tolist(), temperature.tolist())))
        return [(device.decode(), timestamp, value) for device, (timestamp, value) in newest.items()]

    def _last_record_per_device(self, layout: np.dtype, deadline: float | None) -> dict[bytes, tuple[int, float]]:
        """Device-first keys: from each device's first record, set_range past its keys and step back
        once to its last (newest) record; one seek per device instead of a walk over every record."""
        width = layout["device_id"].itemsize
        newest: dict[bytes, tuple[int, float]] = {}
        cursor = self._tables[SINGLE_TABLE_NAME].cursor()
        try:
            record = cursor.first()
            while record is not None:
                device = record[0][:width]
                following = cursor.set_range(kv_records.device_range_end(device, layout))
                last = cursor.prev() if following is not None else cursor.last()
                key = kv_records.decode_keys([last[0]], layout)[0]
                newest[device] = (int(key["timestamp"]), float(kv_records.decode_values([last[1]])["temperature"][0]))
                record = cursor.next() if following is not None else None
                _check(deadline, self.spec.query_timeout)
        finally:
            cursor.close()
        return newest

    def _downsample(self, deadline: float | None) -> list[tuple]:
        """The device's readings of the hour per minute: one seek to the hour (of the device, with
        device-first keys), then a walk until the hour (or the device's range) ends."""
        layout = kv_records.key_layout(self._key_order)
        end_ms = DOWNSAMPLE_START_MS + DOWNSAMPLE_MINUTES * MINUTE_MS
        buckets: dict[int, list[float]] = {}  # minute -> [min, max, sum, count]
        for keys, values in self._chunks(deadline, first=kv_records.seek_key(DOWNSAMPLE_DEVICE.encode(), DOWNSAMPLE_START_MS, layout)):
            decoded = kv_records.decode_keys(keys, layout)
            inside = (decoded["timestamp"] < end_ms) & (decoded["device_id"] == DOWNSAMPLE_DEVICE.encode())
            temperature = kv_records.decode_values(values)["temperature"]
            for ms, value in zip(decoded["timestamp"][inside].tolist(), temperature[inside].tolist()):
                bucket = buckets.setdefault(ms - ms % MINUTE_MS, [value, value, 0.0, 0])
                bucket[0], bucket[1], bucket[2], bucket[3] = min(bucket[0], value), max(bucket[1], value), bucket[2] + value, bucket[3] + 1
            # Keys are sorted: once the chunk's last key is past the hour (or past the device), the walk is done.
            past_device = self._key_order == "device" and decoded["device_id"][-1] != DOWNSAMPLE_DEVICE.encode()
            if past_device or decoded["timestamp"][-1] >= end_ms:
                break
        return [(minute, low, total / count, high) for minute, (low, high, total, count) in sorted(buckets.items())]

    # -- scans -----------------------------------------------------------------------------
    def scan_devices(self) -> list[str]:
        layout = kv_records.key_layout(self._key_order)
        if self._key_order == "device":
            return sorted(device.decode() for device in self._last_record_per_device(layout, None))
        found: set[bytes] = set()
        for keys, _ in self._chunks(None):
            found.update(np.unique(kv_records.decode_keys(keys, layout)["device_id"]).tolist())
        return sorted(device.decode() for device in found)

    def scan(self, device: str, page_size: int) -> Iterator[np.ndarray]:
        """Device-first keys: a cursor from the device's first key to its last, in time order. Time-first
        keys: a walk over the whole tree, keeping the device's records."""
        layout = kv_records.key_layout(self._key_order)
        wanted = device.encode()
        cursor = self._tables[SINGLE_TABLE_NAME].cursor()
        try:
            keys: list[bytes] = []
            record = cursor.set_range(kv_records.seek_key(wanted, 0, layout))
            while record is not None:
                if self._key_order == "device" and not record[0].startswith(wanted):
                    break
                keys.append(record[0])
                if len(keys) >= page_size:
                    yield self._times_of(keys, layout, wanted)
                    keys = []
                record = cursor.next()
            if keys:
                yield self._times_of(keys, layout, wanted)
        finally:
            cursor.close()

    def _times_of(self, keys: list[bytes], layout: np.dtype, device: bytes) -> np.ndarray:
        decoded = kv_records.decode_keys(keys, layout)
        times = decoded["timestamp"].astype(np.int64)
        return times if self._key_order == "device" else times[decoded["device_id"] == device]


def registered_processes(home: Path) -> list[int]:
    """Processes that have the environment open, from DB_REGISTER's file: a slot whose lock is held.
    The caller must not have it open itself (closing this file drops the process's own fcntl locks)."""
    path = home / REGISTRY_FILE
    if not path.exists():
        return []
    alive = []
    with open(path, "rb") as registry:
        slots = registry.read()
        for offset in range(0, len(slots) - REGISTRY_SLOT + 1, REGISTRY_SLOT):
            slot = slots[offset : offset + REGISTRY_SLOT].strip()
            if not slot.isdigit():
                continue  # an empty slot ("X ... 0")
            try:
                fcntl.lockf(registry, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, offset)
                fcntl.lockf(registry, fcntl.LOCK_UN, 1, offset)
            except OSError:
                alive.append(int(slot))
    return alive


def _environment_file(path: Path) -> bool:
    """Files BerkeleyDB and this module keep in an environment folder."""
    return path.is_file() and (path.name.startswith(("__db.", "log.")) or path.suffix == ".db" or path.name == "DB_CONFIG")


def _check(deadline: float | None, timeout: float) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise TimeoutError(f"query timed out after {timeout:g} s")


def _reason(error: BaseException) -> str:
    """BerkeleyDB's errors are (code, text) pairs: the text, on one line."""
    args = getattr(error, "args", ())
    return one_line(args[1]) if len(args) == 2 and isinstance(args[1], str) else described(error)
