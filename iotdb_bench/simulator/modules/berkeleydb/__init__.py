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
import logging
from pathlib import Path
from typing import Any

from iotdb_bench.simulator.capabilities import Capabilities, Location, No, Pace
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, played_by
from iotdb_bench.simulator.modules.berkeleydb.environment import environment_file, reason, registered_processes
from iotdb_bench.simulator.modules.berkeleydb.options import LAYOUT_FILE, BerkeleydbOptions
from iotdb_bench.simulator.modules.berkeleydb.reader import BerkeleydbReader
from iotdb_bench.simulator.modules.berkeleydb.records import BerkeleydbRecords
from iotdb_bench.simulator.modules.berkeleydb.schema import BerkeleydbSchema
from iotdb_bench.simulator.modules.berkeleydb.writer import BerkeleydbWriter
from iotdb_bench.simulator.spec import PrimaryKey, RunSpec
from iotdb_bench.simulator.wire.kv_records import KeyOrder

log = logging.getLogger("berkeleydb")

__all__ = ["BerkeleydbOptions", "Module", "registered_processes"]


class Module(DatabaseModule):
    Options = BerkeleydbOptions
    options: BerkeleydbOptions
    capabilities = Capabilities(
        pace=Pace(batch_rows_per_s=30_000.0, btree=True),  # a transaction per batch through the Python binding
        # The key is seed 004's (device, sensor, timestamp): the events shape, with any sensors and measurements.
        primary_keys=frozenset({PrimaryKey.db, PrimaryKey.client}), measurements=True, sensors=True,
        transactions=No("a writer chosen as a deadlock victim would lose the whole interval's events, which cannot be sent again; "
                        "batches are one transaction each"),
        # BerkeleyDB runs inside the worker processes: their CPU is the database's work too.
        location=Location.embedded,
        kubernetes=No("BerkeleyDB is embedded: the run's processes share one environment folder, and its bindings are not in the image"),
        drivers=("berkeleydb",),
    )
    schema, writer, reader, records = played_by(BerkeleydbSchema, BerkeleydbWriter, BerkeleydbReader, BerkeleydbRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        # The environment, shared by the roles: the berkeleydb.db module (imported in connect()), the
        # environment's handle, one B-tree per table, and the key order the tables hold.
        self.db: Any = None
        self.env: Any = None
        self.tables: dict[str, Any] = {}
        self.home = Path(self.options.home)
        self.key_order: KeyOrder = self.options.key_order

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
        return f"{super().insert_mode()}, {self.key_order}-first keys"

    def notes(self) -> list[str]:
        return [
            "queries are cursor walks over the B-tree, aggregated in the client: BerkeleyDB has no query language",
            f"keys: {self.key_order} first; storage counts the B-tree files and the transaction log's files at the end of the run",
        ]

    # -- lifecycle -------------------------------------------------------------------------
    def connect(self) -> None:
        from berkeleydb import db

        self.db = db
        home = self.home
        if not home.parent.is_dir():
            raise ModuleError(f"cannot open the BerkeleyDB environment {home}: folder {home.parent} does not exist")
        if self.spec.task in ("query", "scan") and not home.is_dir():
            raise ModuleError(f"there is no BerkeleyDB environment {home}: insert events first")
        home.mkdir(exist_ok=True)
        foreign = [path.name for path in sorted(home.iterdir()) if not environment_file(path)]
        if foreign:
            raise ModuleError(f"{home} holds files that are not BerkeleyDB's (e.g. {foreign[0]}): the environment needs a folder of its own")
        self.open_environment()

    def open_environment(self) -> None:
        """Join (or create) the environment, running recovery if a process died in it, and open the tables."""
        db, options = self.db, self.options
        env = db.DBEnv()
        env.set_cachesize(options.cache_mb >> 10, (options.cache_mb & 1023) << 20, 1)
        env.set_lk_detect(db.DB_LOCK_DEFAULT)
        env.set_lk_max_locks(options.max_locks)
        env.set_lk_max_objects(options.max_locks)
        flags = (db.DB_CREATE | db.DB_INIT_MPOOL | db.DB_INIT_LOCK | db.DB_INIT_LOG | db.DB_INIT_TXN | db.DB_THREAD
                 | db.DB_REGISTER | db.DB_RECOVER)
        try:
            env.open(str(self.home), flags, 0o600)
        except db.DBError as error:
            with contextlib.suppress(db.DBError):
                env.close()
            raise ModuleError(f"cannot open the BerkeleyDB environment {self.home}: {reason(error)}") from None
        env.log_set_config(db.DB_LOG_AUTO_REMOVE, 1)
        self.env = env
        self.key_order = self._stored_key_order()
        self.tables = {name: self._open_table(name) for name in self.spec.table_names}

    def _open_table(self, name: str) -> Any:
        db = self.db
        table = db.DB(self.env)
        if self.options.page_size:
            table.set_pagesize(self.options.page_size)  # ignored by tables that exist
        create = db.DB_CREATE if self.spec.task == "insert" else 0
        try:
            table.open(f"{name}.db", None, db.DB_BTREE, create | db.DB_AUTO_COMMIT | db.DB_THREAD, 0o600)
        except db.DBNoSuchFileError:
            raise ModuleError(f"the BerkeleyDB environment {self.home} has no table {name} ({name}.db): insert events first") from None
        return table

    def _stored_key_order(self) -> KeyOrder:
        """The key order of the environment's tables; written by an insert, read back by queries and by
        inserts that keep the data (--no-clean), which must not mix two orders in one B-tree."""
        db, wanted = self.db, self.options.key_order
        layout = db.DB(self.env)
        create = db.DB_CREATE if self.spec.task == "insert" else 0
        try:
            try:
                layout.open(LAYOUT_FILE, None, db.DB_BTREE, create | db.DB_AUTO_COMMIT | db.DB_THREAD, 0o600)
            except db.DBNoSuchFileError:
                raise ModuleError(f"the BerkeleyDB environment {self.home} holds no tables: insert events first") from None
            stored = layout.get(b"key_order")
            if stored is None:
                if self.spec.task == "insert":
                    layout.put(b"key_order", wanted.encode())
                return wanted
            stored_order: KeyOrder = stored.decode()
            if self.spec.task == "insert" and not self.spec.clean and stored_order != wanted:
                raise ModuleError(f"the tables in {self.home} have {stored_order}-first keys: --no-clean needs key_order={stored_order}")
            if self.spec.task == "insert" and stored_order != wanted:
                layout.put(b"key_order", wanted.encode())  # --clean: the schema's setup() deletes the old tables
                return wanted
            return stored_order
        finally:
            layout.close()

    def close(self) -> None:
        if self.env is None:
            return
        db, env, tables = self.db, self.env, self.tables
        self.env, self.tables = None, {}
        try:
            for table in tables.values():
                table.close()
            env.txn_checkpoint()  # recovery after this process starts from here
        except db.DBError as error:  # e.g. the environment was recovered under us (DB_RUNRECOVERY)
            log.warning("closing the BerkeleyDB environment: %s", reason(error))
        with contextlib.suppress(db.DBError):
            env.close()
