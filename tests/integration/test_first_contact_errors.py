"""A new user's first mistakes end in one line: an --output folder that cannot be created, a query or
scan before any insert (an empty folder, a file that is no database, another program's database, an
empty PostgreSQL database); the null target runs here without a cluster."""

from __future__ import annotations

import sqlite3

import pytest

from iotdb_bench.cli.commands.launch import resolve
from iotdb_bench.cli.commands.reads import ScanOptions, scan
from iotdb_bench.cli.commands.run_options import TargetOptions, parse
from tests.conftest import dedicated_database, pg_connect
from tests.integration.test_bad_input import assert_one_line_error


@pytest.mark.parametrize("output", ["/proc/x", "/sys/x", "/proc/x/y"])
def test_an_output_folder_that_cannot_be_created_is_one_line(cli, output):
    result = cli("insert", "--target", "null", "-w", "1", "-r", "1", "--num-inserts", "10", "--output", output)
    assert_one_line_error(result, 2, f"--output {output}: cannot create the results folder")


@pytest.mark.slow
def test_the_null_target_runs_here_without_a_cluster(cli):
    result = cli("insert", "--target", "null", "-w", "1", "-r", "1", "--num-inserts", "100")
    assert result.code == 0, result.stderr
    assert result.results()["platform"] == "local"


def target(name: str, *args: str) -> TargetOptions:
    return parse(scan, ScanOptions, ["--target", name, *args], []).target


def test_the_null_target_still_goes_to_kubernetes_when_asked():
    assert resolve(target("null"))[2] == "local"
    assert resolve(target("null", "--platform", "kubernetes"))[2] == "kubernetes"
    assert resolve(target("postgresql"))[2] == "kubernetes"  # the config's platform for a target with a server


@pytest.mark.slow
@pytest.mark.parametrize("task", ["query", "scan"])
def test_reading_before_any_insert_says_to_insert_first(cli, tmp_path, task):
    result = cli(task, "--target", "sqlite", "-r", "1")
    assert_one_line_error(result, 1, "there is no SQLite database iotdb-bench.sqlite3 to read: run insert first")
    assert not (tmp_path / "iotdb-bench.sqlite3").exists()  # reading created nothing

    with sqlite3.connect(tmp_path / "iotdb-bench.sqlite3") as other:  # another program's database
        other.execute("CREATE TABLE readings (x)")
    other.close()
    result = cli(task, "--target", "sqlite", "-r", "1")
    assert_one_line_error(result, 1, "target 'sqlite' holds none of the tool's tables (events): run insert first")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["iotdb-bench.sqlite3", "results"]  # its journal mode untouched

    (tmp_path / "iotdb-bench.sqlite3").write_text("not a database\n" * 100)
    result = cli(task, "--target", "sqlite", "-r", "1")
    assert_one_line_error(result, 1, "cannot open SQLite database iotdb-bench.sqlite3: file is not a database")


@pytest.mark.slow
@pytest.mark.postgres
def test_a_query_of_an_empty_postgresql_database_says_to_insert_first(cli, pg_env):
    env = dedicated_database(pg_env, "iotbench_first_contact")
    with pg_connect(env, "iotbench_first_contact") as db:
        db.execute("DROP TABLE IF EXISTS iotbench_expected")
    result = cli("query", "--target", "postgresql-local", "-r", "1", env=env)
    assert_one_line_error(result, 1, "target 'postgresql-local' holds none of the tool's tables (events): run insert first")
