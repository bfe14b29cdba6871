"""The berkeleydb module's write path: a batch is one transaction of puts, a single insert a
transaction of one put, committed as `durability` says; a deadlock victim's transaction is retried."""

from __future__ import annotations

from iotdb_bench.simulator.modules.base import DatabaseModule, WriterRole
from iotdb_bench.simulator.modules.berkeleydb.options import BerkeleydbRole
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.wire import kv_records
from iotdb_bench.simulator.workload.events import EventBatch

# Records per table: (table, keys, values), encoded outside the timed calls.
Records = list[tuple[str, list[bytes], list[bytes]]]


class BerkeleydbWriter(BerkeleydbRole, WriterRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self.retry: Retry = Retry(self.options.max_retries, self._deadlocked)

    def prepare_batch(self, batch: EventBatch) -> Records:
        return [(table, *kv_records.encode(part, self.module.key_order)) for table, part in self.per_table(batch)]

    def insert_batch(self, prepared: Records) -> None:
        self.retry.call(lambda: self._transaction(prepared))

    def prepare_single(self, batch: EventBatch) -> list[Records]:
        keys, values = kv_records.encode(batch, self.module.key_order)
        return [[(table, [key], [value])] for table, key, value in zip(self.table_of_each(batch), keys, values)]

    def insert_single(self, item: Records) -> None:
        self.retry.call(lambda: self._transaction(item))

    def _transaction(self, records: Records) -> None:
        """Every record in one transaction, committed as `durability` says; aborted on any error."""
        db, tables = self.module.db, self.module.tables
        txn = self.module.env.txn_begin()
        try:
            for table, keys, values in records:
                put = tables[table].put
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
        fields = kv_records.decode_keys([key], kv_records.key_layout(self.module.key_order))[0]
        return f"the event of device {fields['device_id'].decode()} at {int(fields['timestamp'])} ms"

    def _commit_flags(self) -> int:
        db = self.module.db
        flags: int = {"sync": db.DB_TXN_SYNC, "write_nosync": db.DB_TXN_WRITE_NOSYNC, "nosync": db.DB_TXN_NOSYNC}[self.options.durability]
        return flags

    def _deadlocked(self, error: BaseException) -> bool:
        db = self.module.db
        return db is not None and isinstance(error, (db.DBLockDeadlockError, db.DBLockNotGrantedError))
