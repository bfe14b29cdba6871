"""The mysql module end to end through the CLI, against the real MariaDB of scripts/servers/start-mariadb.sh."""

from __future__ import annotations

import os

import pytest

from tests.conftest import WORKLOAD_OPTIONS, downsample_minutes, rows_per_query, verified_workload_run
from tests.read_side import assert_scan_ok, check_read_side

pytestmark = pytest.mark.mysql

HOST = os.environ.get("MYSQL_HOST", "127.0.0.1")
PORT = int(os.environ.get("MYSQL_PORT", "3306"))
USER = os.environ.get("MYSQL_USER", "bench")
DATABASE = os.environ.get("MYSQL_DATABASE", "bench")
PASSWORD = os.environ.get("MYSQL_PASSWORD", "bench")

CONFIG = """\
platform: local
targets:
  mysql:
    module: mysql
    platform: local
    host: {host}
    port: {port}
    user: {user}
    database: {database}
    password: "${{MYSQL_PASSWORD}}"
"""


def connect():
    import pymysql

    return pymysql.connect(host=HOST, port=PORT, user=USER, password=PASSWORD, database=DATABASE, autocommit=True, connect_timeout=5)


@pytest.fixture
def mysql(tmp_path):
    """Writes a config with a `mysql` target into the test folder; fails (never skips) without the server."""
    import pymysql

    try:
        connect().close()
    except pymysql.err.OperationalError as error:
        pytest.fail(f"MariaDB is not reachable at {HOST}:{PORT} ({error}); start it with scripts/servers/start-mariadb.sh")
    (tmp_path / "config.yaml").write_text(CONFIG.format(host=HOST, port=PORT, user=USER, database=DATABASE))
    return {"MYSQL_PASSWORD": PASSWORD}


def run(cli, env, *args):
    return cli(*args, "--config", "config.yaml", "--target", "mysql", "-r", "1", env=env, timeout=300)


def sql(statement: str) -> list[tuple]:
    with connect() as conn, conn.cursor() as cursor:
        cursor.execute(statement)
        return list(cursor.fetchall())


def assert_ok(result, expected_events: int) -> dict:
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    assert report["verification"]["ok"], report["verification"]
    assert report["verification"]["counted"] == expected_events
    return report


def test_mysql_single_inserts_autocommit(cli, mysql):
    report = assert_ok(run(cli, mysql, "insert", "-w", "1", "--num-inserts", "150"), 150)
    assert report["figures"]["latency"]["calls"] == 150  # one call per event
    assert sql("SELECT count(*), min(id), max(id) FROM events") == [(150, 1, 150)]


def test_mysql_batch_transactions_four_workers(cli, mysql):
    report = assert_ok(run(cli, mysql, "insert", "-w", "4", "--num-inserts", "600", "--batch", "200"), 2400)
    assert report["figures"]["latency"]["calls"] == 12
    assert report["figures"]["retries"] == 0
    assert report["server"]["storage_bytes"] > 0
    # Every worker's devices, each with its share of the events.
    assert sql("SELECT count(DISTINCT device_id), count(DISTINCT sequence_number) FROM events") == [(40, 600)]


def test_mysql_values_lists_client_keys_multiple_tables(cli, mysql):
    result = run(
        cli, mysql, "insert", "-w", "4", "--num-inserts", "500", "--batch", "250", "--primary-key", "client",
        "--tables", "multiple", "--extra-option", "use_values_lists=true",
    )
    assert_ok(result, 2000)
    per_table = [sql(f"SELECT count(*), count(DISTINCT id) FROM events{t}")[0] for t in range(4)]
    assert sum(count for count, _ in per_table) == 2000
    assert all(count == distinct and count > 0 for count, distinct in per_table)
    # A device writes to one table only.
    devices = [{row[0] for row in sql(f"SELECT DISTINCT device_id FROM events{t}")} for t in range(4)]
    assert sum(len(d) for d in devices) == len(set().union(*devices)) == 40
    key, device, sequence = sql("SELECT id, device_id, sequence_number FROM events0 LIMIT 1")[0]
    assert key == f"{device}-{sequence:012d}"


def test_mysql_values_lists_split_into_statements_under_the_packet_limit(cli, mysql):
    # 30,000 rows of ~60 bytes do not fit one 1 MiB statement: the batch becomes several INSERTs in one transaction.
    result = run(cli, mysql, "insert", "-w", "1", "--num-inserts", "30000", "--batch", "30000", "--extra-option", "use_values_lists=true")
    report = assert_ok(result, 30000)
    assert report["figures"]["latency"]["calls"] == 1


@pytest.mark.parametrize(
    ("mode", "key_type"),
    [("db", "bigint"), ("sql", "bigint"), ("uuid", "uuid"), ("none", None)],
)
def test_mysql_primary_key_modes(cli, mysql, mode, key_type):
    assert_ok(run(cli, mysql, "insert", "-w", "2", "--num-inserts", "100", "--batch", "50", "--primary-key", mode), 200)
    columns = dict(sql("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'events'"))
    assert columns.get("id") == key_type
    if key_type:
        assert sql("SELECT count(DISTINCT id) FROM events") == [(200,)]
        assert sql("SELECT column_name FROM information_schema.key_column_usage WHERE table_schema = DATABASE() "
                   "AND table_name = 'events' AND constraint_name = 'PRIMARY'") == [("id",)]


def test_mysql_primary_key_constraint_and_indices(cli, mysql):
    result = run(
        cli, mysql, "insert", "-w", "1", "--num-inserts", "100", "--batch", "100",
        "--extra-option", "primary_key_constraint=PRIMARY KEY (device_id, timestamp, sequence_number)",
        "--extra-option", "create_indices=true",
    )
    assert_ok(result, 100)
    primary = sql("SELECT column_name FROM information_schema.key_column_usage WHERE table_schema = DATABASE() "
                  "AND table_name = 'events' AND constraint_name = 'PRIMARY' ORDER BY ordinal_position")
    assert [row[0] for row in primary] == ["device_id", "timestamp", "sequence_number"]
    indexes = {row[0] for row in sql("SELECT DISTINCT index_name FROM information_schema.statistics "
                                     "WHERE table_schema = DATABASE() AND table_name = 'events'")}
    assert {"events_temperature", "events_device_temperature", "PRIMARY"} <= indexes


def test_mysql_queries_return_the_right_rows(cli, mysql):
    assert_ok(run(cli, mysql, "insert", "-w", "2", "--num-inserts", "300", "--batch", "100", "--devices-per-worker", "7"), 600)
    result = run(cli, mysql, "query")
    assert result.query_rows() == rows_per_query(14, downsample_minutes(300, 7))  # every answer checked and right


def test_mysql_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(cli, mysql):
    assert_ok(run(cli, mysql, "insert", "-w", "2", "--num-inserts", "3000", "--batch", "1000"), 6000)
    check_read_side(
        lambda task, *args: run(cli, mysql, task, *args),
        lambda device, value: sql(f"UPDATE events SET temperature = {value} WHERE device_id = '{device}' ORDER BY timestamp LIMIT 1"),
        lambda device: sql(f"DELETE FROM events WHERE device_id = '{device}' ORDER BY timestamp DESC LIMIT 1"),
        3000,
    )


def test_mysql_readings_stored_out_of_order_scan_in_order(cli, mysql):
    assert_ok(run(cli, mysql, "insert", "-w", "1", "--num-inserts", "2000", "--batch", "1000"), 2000)
    # One device's readings written again newest first: new AUTO_INCREMENT ids (InnoDB's clustering key) run against time.
    sql("DROP TABLE IF EXISTS moved_readings")
    sql("CREATE TABLE moved_readings AS SELECT timestamp, device_id, sequence_number, temperature FROM events WHERE device_id = 'w000000-d000006'")
    sql("DELETE FROM events WHERE device_id = 'w000000-d000006'")
    sql("INSERT INTO events (timestamp, device_id, sequence_number, temperature) SELECT * FROM moved_readings ORDER BY timestamp DESC")
    sql("DROP TABLE moved_readings")
    stored = [ts for (ts,) in sql("SELECT timestamp FROM events WHERE device_id = 'w000000-d000006' ORDER BY id")]
    assert stored == sorted(stored, reverse=True) and len(stored) == 200
    assert_scan_ok(run(cli, mysql, "scan", "-w", "2", "--page-size", "64"), 2000, 10)
    assert run(cli, mysql, "query").query_rows() == rows_per_query(10, downsample_minutes(2000))


def test_mysql_steps_continue_without_cleaning(cli, mysql):
    result = run(cli, mysql, "insert", "-w", "2", "--num-inserts", "100", "--batch", "50", "--steps", "2", "--primary-key", "client")
    assert result.code == 0, result.stderr
    levels = [run_["report"]["verification"]["count_before"] for run_ in result.results()["runs"]]
    assert levels == [0, 200]
    assert sql("SELECT count(*), count(DISTINCT id) FROM events") == [(400, 400)]


# -- workloads (issue 10) ------------------------------------------------------------------------

@pytest.mark.parametrize("workload", sorted(WORKLOAD_OPTIONS))
def test_mysql_workload_options(cli, mysql, workload):
    report = verified_workload_run(run(cli, mysql, "insert", "-w", "2", *WORKLOAD_OPTIONS[workload]))
    stored = report["verification"]["counted"]
    assert sql("SELECT count(*) FROM events") == [(stored,)]
    names = [row[0] for row in sql("SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() "
                                   "AND table_name = 'events' ORDER BY ordinal_position")]
    if workload == "light":
        assert names == ["id", "timestamp", "val1", "val2"]
        assert ("events_val1",) in sql("SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'events'")
    elif workload == "measurements":
        assert names[-4:] == ["temperature", "m1", "m2", "m3"] and report["figures"]["values_per_event"] == 4
    else:  # every worker's sequence numbers: each once, none missing below the highest (late events were sent too)
        per_worker = sql("SELECT count(*), count(DISTINCT sequence_number), max(sequence_number) FROM events GROUP BY left(device_id, 7)")
        for count, distinct, highest in per_worker:
            assert count == distinct and (highest + 1 == count or workload == "duration")


def test_mysql_myisam_engine_with_a_commit_interval_and_duration(cli, mysql):
    result = run(cli, mysql, "insert", "-w", "2", "--duration", "2", "--commit-interval", "0.5", "--extra-option", "engine=MyISAM")
    report = verified_workload_run(result)
    assert report["insert_mode"] == "single inserts, commit every 0.5 s"
    assert sql("SELECT engine FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'events'") == [("MyISAM",)]
    assert sql("SELECT count(*) FROM events") == [(report["verification"]["counted"],)]
    assert "MyISAM has no transactions" in result.stdout


@pytest.mark.parametrize(("mode", "commits_per_batch"), [("values", 0), ("transaction", 1)])
def test_mysql_values_lists_into_one_table_commit_on_the_server_without_a_commit_round_trip(mysql, mode, commits_per_batch):
    """A batch that is one multi-row INSERT runs in autocommit: the server commits it, and the client
    saves the COMMIT's round trip (the session's own counters say which statements it sent)."""
    from iotdb_bench.simulator.modules import module_class
    from iotdb_bench.simulator.spec import RunSpec
    from iotdb_bench.simulator.workload import shapes

    spec = RunSpec(run_id=f"autocommit-{mode}", task="insert", target="mysql", module="mysql", workers=1, batch=500, num_inserts=5000,
                   connection={"host": HOST, "port": PORT, "user": USER, "password": PASSWORD, "database": DATABASE},
                   extra={"batch_mode": mode})
    setup = module_class("mysql")(spec)  # the table, made on a connection of its own as the collector does
    setup.connect()
    setup.schema.setup()
    setup.close()
    module = module_class("mysql")(spec)
    module.connect()
    try:
        writer = module.writer

        def session(name: str) -> int:
            with module.conn.cursor() as cursor:
                cursor.execute(f"SHOW SESSION STATUS LIKE '{name}'")
                return int(cursor.fetchone()[1])

        before = {name: session(name) for name in ("Com_commit", "Com_insert")}
        for chunk in shapes.generator(spec, 0).chunks(0, 5000, 500):
            for prepared in writer.prepare_batches(chunk, 500):
                writer.insert_batch(prepared)
        grown = {name: session(name) - before[name] for name in before}
        assert module.conn.get_autocommit() is (mode == "values")
        assert grown["Com_commit"] == 10 * commits_per_batch
        assert grown["Com_insert"] == (10 if mode == "values" else 5000)
        assert sql(f"SELECT COUNT(*) FROM {spec.table_names[0]}") == [(5000,)]  # committed: another session sees every row
    finally:
        module.close()
