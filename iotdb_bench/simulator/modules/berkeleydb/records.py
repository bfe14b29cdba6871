"""The berkeleydb module's record of expected answers, kept in `layout.db` beside the key order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from iotdb_bench.simulator.modules.base import RecordsRole
from iotdb_bench.simulator.modules.berkeleydb.options import LAYOUT_FILE, BerkeleydbRole


class BerkeleydbRecords(BerkeleydbRole, RecordsRole):
    def store_record(self, text: str) -> None:
        self._with_layout(lambda layout: layout.put(self._record_key(), text.encode(), txn=None))

    def stored_record(self) -> str | None:
        found = self._with_layout(lambda layout: layout.get(self._record_key()))
        return None if found is None else found.decode()

    def _record_key(self) -> bytes:
        return b"expected:" + self.record_key().encode()

    def _with_layout(self, use: Callable[[Any], Any]) -> Any:
        db = self.module.db
        layout = db.DB(self.module.env)
        try:
            layout.open(LAYOUT_FILE, None, db.DB_BTREE, db.DB_AUTO_COMMIT | db.DB_THREAD, 0o600)
            return use(layout)
        finally:
            layout.close()
