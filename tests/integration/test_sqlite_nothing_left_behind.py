"""SQLite leaves nothing large behind: its write-ahead log is counted in the storage figure while the
run holds it, and checkpointed to nothing when the run ends (the quick start used to leave a 630 MB
`iotdb-bench.sqlite3-wal` in the current folder)."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.workload.events import EventGenerator
from tests import factories

pytestmark = pytest.mark.slow


def wal_bytes(folder: Path) -> int:
    path = folder / "iotdb-bench.sqlite3-wal"
    return path.stat().st_size if path.exists() else 0


def data_bytes(folder: Path) -> int:
    with contextlib.closing(sqlite3.connect(folder / "iotdb-bench.sqlite3")) as db:
        pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
        return pages * db.execute("PRAGMA page_size").fetchone()[0]


def test_the_storage_figure_counts_the_log_and_the_end_of_a_run_empties_it(tmp_path):
    spec = factories.spec(extra={"path": str(tmp_path / "iotdb-bench.sqlite3")}, batch=100)
    module = module_class("sqlite")(spec)
    module.connect()
    try:
        module.schema.setup()
        for batch in EventGenerator(1, 0, 10).batches(0, 2000, 100):
            module.writer.insert_batch(module.writer.prepare_batch(batch))
        held = wal_bytes(tmp_path)
        assert held > 0  # fewer pages than an automatic checkpoint waits for: the rows are in the log
        assert module.schema.storage_bytes() == data_bytes(tmp_path) + held
        module.schema.tidy_after_run()
        assert wal_bytes(tmp_path) == 0 and module.schema.count() == 2000
        assert module.schema.storage_bytes() == data_bytes(tmp_path)
    finally:
        module.close()


def test_an_insert_run_leaves_no_write_ahead_log(cli, tmp_path):
    result = cli("insert", "--target", "sqlite", "-w", "2", "-r", "2", "--num-inserts", "3000")
    assert result.code == 0, result.stderr
    assert wal_bytes(tmp_path) == 0
    for left in tmp_path.iterdir():
        assert left.name in {"iotdb-bench.sqlite3", "results"}, f"{left.name} left behind"
    reports = [run["report"] for run in result.results()["runs"]]
    # 6,000 commits of two writers at once grew the log; the figure read at the run's end counted it
    assert all(report["server"]["storage_bytes"] > data_bytes(tmp_path) for report in reports)


# A writer killed in the middle of its work leaves its write-ahead log behind (no checkpoint on exit).
KILLED_WRITER = """
import os, signal, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode = wal")
db.execute("PRAGMA wal_autocheckpoint = 0")
db.execute("CREATE TABLE IF NOT EXISTS stale (x BLOB)")
for _ in range(200):
    db.execute("INSERT INTO stale VALUES (zeroblob(10000))")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_clean_starts_from_an_empty_log_after_a_killed_writer(cli, tmp_path):
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(tmp_path / "iotdb-bench.sqlite3")], check=False)
    assert killed.returncode == -signal.SIGKILL and wal_bytes(tmp_path) > 1_000_000
    result = cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "500")
    assert result.code == 0, result.stderr
    assert wal_bytes(tmp_path) == 0
    assert not (tmp_path / "iotdb-bench.sqlite3-shm").exists()
    assert os.path.getsize(tmp_path / "iotdb-bench.sqlite3") > 2_000_000  # the killed writer's rows were kept, not lost
