"""The quick start as a new user types it (one run per worker count, for CI's time): worker counts up to
the machine's CPUs, timed phases of seconds, no row flagged, a table that fits an 80-column terminal,
nothing large left in the current folder."""

from __future__ import annotations

import pytest

from iotdb_bench.cli.commands.insert import LOCAL_DURATION_S, local_worker_counts
from iotdb_bench.cli.results.host import usable_cpus

pytestmark = [pytest.mark.slow, pytest.mark.plots]  # the quick start exactly as a user runs it


def test_the_quick_start_gives_a_first_table_worth_reading(cli, tmp_path):
    result = cli("insert", "--target", "sqlite", "-r", "1", env={"COLUMNS": "80"})
    assert result.code == 0, result.stderr
    document = result.results()
    assert document["worker_counts"] == list(local_worker_counts(usable_cpus()))
    assert document["spec"]["duration_s"] == LOCAL_DURATION_S
    assert all(run["report"]["figures"]["duration_s"] >= LOCAL_DURATION_S for run in document["runs"])
    assert [row["flags"] for row in document["inserts"]] == [[] for _ in document["inserts"]]
    table = [line for line in result.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and all(len(line) <= 80 for line in table) and "…" not in result.stdout
    assert not any(cell.strip().endswith("!") for line in table for cell in line.split("│")[1:2])  # no row marked
    assert sorted(path.name for path in tmp_path.iterdir()) == ["iotdb-bench.sqlite3", "results"]
