"""What the berkeleydb module knows of an environment folder beside the library: which files are
its, which processes have it open (DB_REGISTER's file), and the library's errors in one line."""

from __future__ import annotations

import fcntl
from pathlib import Path

from iotdb_bench.simulator.errors import described, one_line

REGISTRY_FILE = "__db.register"
REGISTRY_SLOT = 25  # bytes per process slot of DB_REGISTER's file (libdb's env_register.c)


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


def environment_file(path: Path) -> bool:
    """Files BerkeleyDB and this module keep in an environment folder."""
    return path.is_file() and (path.name.startswith(("__db.", "log.")) or path.suffix == ".db" or path.name == "DB_CONFIG")


def reason(error: BaseException) -> str:
    """BerkeleyDB's errors are (code, text) pairs: the text, on one line."""
    args = error.args
    return one_line(args[1]) if len(args) == 2 and isinstance(args[1], str) else described(error)
