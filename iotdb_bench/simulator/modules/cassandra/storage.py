"""The disk space of the run's tables, from Cassandra's own files or its own accounting.

Where the server's data folder is on this machine (the local platform next to a local server), the
tables' SSTable files are summed there, to the byte: the folder named after each table and its id in
`data_file_directories` (read from `system_views.settings`), without its snapshots and backups.
Elsewhere (a server in another pod or host) Cassandra's own figure: `system_views.disk_usage`, each
table's live SSTable space in whole MiB, rounded up (Cassandra 4.0 and later).

Either way only what is flushed is counted: rows still in memtables are on disk only in the commit
log (shared by every table), and Cassandra flushes them when the memtables fill (a share of the heap)
or on `nodetool flush`, which CQL cannot ask for.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

MIB = 1 << 20
SKIPPED = frozenset({"snapshots", "backups"})


def table_folders(session: Any, keyspace: str, tables: list[str]) -> list[Path] | None:
    """The tables' data folders when they are on this machine (None when any is not found here)."""
    row = session.execute("SELECT value FROM system_views.settings WHERE name = 'data_file_directories'").one()
    if row is None or not row[0]:
        return None
    roots = [Path(part.strip()) for part in row[0].strip("[]").split(",") if part.strip()]
    ids = {r.table_name: r.id for r in session.execute(
        "SELECT table_name, id FROM system_schema.tables WHERE keyspace_name = %s", (keyspace,)) if r.table_name in tables}
    if set(ids) != set(tables):
        return None
    folders = [root / keyspace / f"{table}-{ids[table].hex}" for table in tables for root in roots]
    found = [folder for folder in folders if folder.is_dir()]
    # Every table's folder must be here: a folder of the same name elsewhere cannot hold its id.
    return found if {folder.name for folder in found} == {f"{table}-{ids[table].hex}" for table in tables} else None


def folder_bytes(folders: list[Path]) -> int:
    """Bytes of the files in the folders, without their snapshots and backups (files that vanish
    while counted, compacted away, are left out)."""
    total = 0
    for folder in folders:
        for path, subfolders, files in os.walk(folder):
            subfolders[:] = [name for name in subfolders if name not in SKIPPED]
            for name in files:
                with contextlib.suppress(FileNotFoundError):
                    total += os.stat(os.path.join(path, name)).st_size
    return total


def disk_usage_bytes(session: Any, keyspace: str, tables: list[str]) -> int:
    """Cassandra's live SSTable space of the tables (system_views.disk_usage: whole MiB, rounded up)."""
    rows = session.execute("SELECT table_name, mebibytes FROM system_views.disk_usage WHERE keyspace_name = %s", (keyspace,))
    return sum(int(row.mebibytes) * MIB for row in rows if row.table_name in tables)
