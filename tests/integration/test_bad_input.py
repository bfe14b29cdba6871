"""Bad input: one line on stderr, exit 2 for usage errors and 1 for failed runs, no traceback."""


import pytest

from iotdb_bench.cli.run.platforms.local import free_port
from tests.conftest import processes_with_env


def assert_one_line_error(result, code, *fragments):
    assert result.code == code, (result.code, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    error_lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(error_lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in error_lines[0], error_lines[0]


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["insert", "--target", "nope"], ["unknown target 'nope'", "sqlite"]),
        (["insert", "--target", "[bold]x[/bold]"], ["unknown target '[bold]x[/bold]'"]),  # printed as typed
        (["insert"], ["--target"]),
        (["insert", "--target", "sqlite", "-w", "0"], ["worker"]),
        (["insert", "--target", "sqlite", "-w", "1,x"], ["worker"]),
        (["insert", "--target", "sqlite", "-r", "0"], ["--runs"]),
        (["insert", "--target", "sqlite", "--primary-key", "auto"], ["--primary-key"]),
        (["insert", "--target", "sqlite", "--batch", "-5"], ["--batch"]),
        (["insert", "--target", "sqlite", "--extra-option", "novalue"], ["key=value"]),
        (["insert", "--target", "sqlite", "--extra-option", "colour=blue"], ["colour", "unknown option"]),
        (["insert", "--target", "sqlite", "--extra-option", "busy_timeout_ms=soon"], ["busy_timeout_ms"]),
        (["insert", "--target", "sqlite", "-w", "1,2", "-r", "1", "--steps", "2"], ["--steps needs exactly one worker count"]),
        (["insert", "--target", "sqlite", "-w", "1", "--steps", "2"], ["--steps needs exactly one run"]),
        (["insert", "--target", "sqlite", "-w", "1", "-r", "1", "--steps", "2", "--prefill", "10"], ["--prefill"]),
        (["insert", "--target", "sqlite", "--platform", "kubernetes"], ["only on the local platform"]),
        (["insert", "--target", "sqlite", "--config", "missing.yaml"], ["missing.yaml"]),
        (["query", "--target", "sqlite", "--queries", "count-events,fastest"], ["fastest"]),
        (["insert", "--target", "sqlite", "--timeout", "-1"], ["--timeout"]),
        (["insert", "--target", "sqlite", "--seed", "-1"], ["--seed"]),
        # TSBS's shapes and query types (docs/tsbs.md)
        (["insert", "--target", "arangodb", "--schema", "tsbs-cpu"], ["module 'arangodb' does not support --schema tsbs-cpu: not yet: "]),
        (["query", "--target", "berkeleydb", "--queries", "double-groupby-all"], ["module 'berkeleydb' does not answer TSBS's double-groupby-all: not yet"]),
        (["insert", "--target", "arangodb", "--schema", "tsbs-iot"],
         ["module 'arangodb' does not support --schema tsbs-iot: not yet: TSBS's use cases are written database by database"]),
        (["query", "--target", "influxdb-local", "--queries", "avg-daily-driving-session"],
         ["module 'influxdb' does not answer TSBS's avg-daily-driving-session: a session counts on the day it starts"]),
        (["query", "--target", "arangodb", "--queries", "last-loc"],
         ["module 'arangodb' does not answer TSBS's last-loc: not yet: TSBS's use cases are written database by database"]),
        (["insert", "--target", "mysql-local", "--schema", "tsbs-cpu", "--extra-option", "primary_key_constraint=PRIMARY KEY (time)"],
         ["module 'mysql': primary_key_constraint does not apply to --schema tsbs-cpu"]),
        (["insert", "--target", "sqlite", "--schema", "tsbs-cpu", "--num-inserts", "5"], ["--num-inserts does not apply to --schema tsbs-cpu"]),
        (["insert", "--target", "sqlite", "--schema", "tsbs-cpu", "--interval", "10x"], ["--interval: '10x' is not a duration like 10s"]),
        (["insert", "--target", "sqlite", "--time-range", "1h"], ["--interval, --time-range and --start apply to TSBS's shapes"]),
        (["query", "--target", "sqlite", "--queries", "tsbs-devops,fastest"], ["unknown query 'fastest'", "tsbs-devops"]),
    ],
)
def test_usage_errors_exit_2(cli, args, fragments):
    assert_one_line_error(cli(*args), 2, *fragments)


def test_invalid_config_names_the_field(cli, tmp_path):
    (tmp_path / "bad.yaml").write_text("targets:\n  x:\n    platform: local\n")
    assert_one_line_error(cli("insert", "--target", "x", "--config", "bad.yaml"), 2, "targets.x.module")


def test_target_whose_module_does_not_exist(cli, tmp_path):
    (tmp_path / "c.yaml").write_text("targets:\n  future:\n    module: futuredb\n    platform: local\n")
    assert_one_line_error(cli("insert", "--target", "future", "--config", "c.yaml"), 2, "futuredb", "unknown database module")


def test_missing_password_variable(cli, tmp_path):
    (tmp_path / "c.yaml").write_text(
        "targets:\n  pg:\n    module: postgres\n    platform: local\n    password: ${IOTB_UNSET_PASSWORD}\n")
    assert_one_line_error(cli("insert", "--target", "pg", "--config", "c.yaml"), 2, "IOTB_UNSET_PASSWORD")


def test_unreachable_database_names_host_and_port(cli, tmp_path):
    port = free_port()
    (tmp_path / "c.yaml").write_text(
        f"targets:\n  pg:\n    module: postgres\n    platform: local\n"
        f"    connection_string: host=127.0.0.1 port={port} user=postgres dbname=postgres connect_timeout=3\n")
    result = cli("insert", "--target", "pg", "--config", "c.yaml", "-w", "2", "-r", "1", env={"IOTB_TEST_TAG": "unreachable"})
    assert_one_line_error(result, 1, f"127.0.0.1:{port}")
    assert processes_with_env("unreachable") == []
    assert result.results()["status"] == "failed"


def test_sqlite_in_missing_folder(cli, tmp_path):
    (tmp_path / "c.yaml").write_text("targets:\n  s:\n    module: sqlite\n    platform: local\n    path: no/such/dir/x.db\n")
    assert_one_line_error(cli("insert", "--target", "s", "--config", "c.yaml", "-w", "1", "-r", "1"), 1, "no/such/dir")


def test_query_without_data(cli):
    assert_one_line_error(cli("query", "--target", "sqlite", "-r", "1"), 1, "run insert first")


def test_a_metrics_port_that_is_not_a_port_is_refused_before_anything_starts(cli):
    result = cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", env={"IOTBENCH_METRICS_PORT": "metrics"})
    assert_one_line_error(result, 2, "IOTBENCH_METRICS_PORT", "'metrics'")
    assert not result.results_folders()


def test_a_metrics_port_in_use_fails_the_run_saying_so(cli):
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", env={"IOTBENCH_METRICS_PORT": str(port), "IOTB_TEST_TAG": "port-taken"})
    assert_one_line_error(result, 1, "collector exited with code 1", f"cannot serve the metrics on 127.0.0.1:{port}")
    assert processes_with_env("port-taken") == []
