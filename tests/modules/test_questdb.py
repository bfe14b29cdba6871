"""The questdb module end to end through the CLI, against the real QuestDB 9 of
scripts/servers/start-questdb.sh (ILP over HTTP on 9000, PostgreSQL wire protocol on 8812). The tests
read what was stored with psycopg themselves."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import textwrap
import time

import psycopg
import pytest

from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import EventGenerator
from tests.conftest import REPO_ROOT, WORKLOAD_OPTIONS, assert_verified, downsample_minutes, rows_per_query, verified_workload_run
from tests.read_side import check_read_side

pytestmark = pytest.mark.questdb

HOST = os.environ.get("QUESTDB_HOST", "127.0.0.1")
HTTP_PORT = int(os.environ.get("QUESTDB_HTTP_PORT", "9000"))
PG_PORT = int(os.environ.get("QUESTDB_PG_PORT", "8812"))
UNUSED_PORT = 9098

CONFIG = """\
platform: local
targets:
  quest:
    module: questdb
    host: {host}
    http_port: {http_port}
    pg_port: {pg_port}
"""


def connect() -> psycopg.Connection:
    return psycopg.connect(host=HOST, port=PG_PORT, user="admin", password="quest", dbname="qdb", autocommit=True, connect_timeout=10)


@pytest.fixture
def questdb(tmp_path):
    """A config with a `quest` target in the test folder; fails (never skips) without the server."""
    try:
        connect().close()
    except psycopg.OperationalError as error:
        pytest.fail(f"QuestDB is not reachable at {HOST}:{PG_PORT} ({error}); start it with scripts/servers/start-questdb.sh")
    (tmp_path / "config.yaml").write_text(CONFIG.format(host=HOST, http_port=HTTP_PORT, pg_port=PG_PORT))


def run(cli, *args):
    return cli(*args, "--config", "config.yaml", "--target", "quest", "--platform", "local", timeout=300)


def rows(statement: str, *params) -> list[tuple]:
    with connect() as conn:
        return conn.execute(statement, params or None).fetchall()


def table_info(table: str) -> tuple:
    return rows("SELECT designatedTimestamp, partitionBy, walEnabled, dedup FROM tables() WHERE table_name = %s", table)[0]


def generated(worker: int, count: int, devices: int = 10) -> list[tuple]:
    batch = EventGenerator(1, worker, devices).batch(0, count)
    return list(zip(batch.timestamp_ms.tolist(), batch.device_id.astype("U15").tolist(), batch.sequence_number.tolist(), batch.temperature.tolist()))


def stored(table: str, worker: int) -> list[tuple]:
    """(epoch ms, device_id, sequence_number, temperature) of one worker's events, in time order."""
    found = rows(f"SELECT timestamp, device_id, sequence_number, temperature FROM {table} WHERE device_id LIKE %s ORDER BY timestamp",
                 f"w{worker:06d}-%")
    # TIMESTAMP comes back as a naive datetime in UTC.
    return [(round(ts.replace(tzinfo=dt.UTC).timestamp() * 1000), device, sequence, temperature)
            for ts, device, sequence, temperature in found]


def test_numpy_batches_one_and_four_workers_then_the_five_queries(cli, questdb):
    reports = assert_verified(run(cli, "insert", "-w", "1,4", "-r", "1", "--batch", "1000", "--num-inserts", "3000"), [3000, 12000])
    assert [r["figures"]["latency"]["calls"] for r in reports] == [3, 12]  # one ILP request per batch
    assert rows("SELECT count() FROM events") == [(12000,)]
    # The commit wait is measured and reported (WAL tables apply asynchronously).
    assert all(r["ingestion"]["reached"] and r["ingestion"]["counted"] == r["ingestion"]["expected"] for r in reports)
    assert reports[0]["insert_mode"] == "ILP/HTTP request (NumPy), size 1000"
    # The table was made by the module: designated timestamp, partitioned by day, WAL, no dedup.
    assert table_info("events") == ("timestamp", "DAY", True, False)
    assert stored("events", 0) == generated(0, 3000)
    assert stored("events", 3) == generated(3, 3000)
    assert reports[1]["server"]["counters_at_end"] == {"rows": 12000}
    assert reports[1]["server"]["storage_bytes"] > 0

    result = run(cli, "query", "-w", "1", "-r", "2")
    assert result.query_rows() == rows_per_query(40, downsample_minutes(3000))  # every answer checked and right


def wait_until(condition, what: str, limit_s: float = 30) -> None:
    """WAL tables apply changes asynchronously: wait until the change is visible."""
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"QuestDB did not show {what} within {limit_s} s"
        time.sleep(0.05)


def test_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(cli, questdb):
    assert_verified(run(cli, "insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "3000"), [6000])

    def change(device, value):
        [(first,)] = rows("SELECT min(timestamp) FROM events WHERE device_id = %s", device)
        with connect() as conn:
            conn.execute(f"UPDATE events SET temperature = {value} WHERE device_id = '{device}' AND timestamp = '{first.isoformat()}Z'")
        wait_until(lambda: rows("SELECT max(temperature) FROM events WHERE device_id = %s", device) == [(value,)], "the update")

    def delete(device):  # QuestDB has no DELETE: the table is written again without the device's newest row
        [(newest,)] = rows("SELECT max(timestamp) FROM events WHERE device_id = %s", device)
        kept = "events_kept"
        with connect() as conn:
            conn.execute(f"DROP TABLE IF EXISTS {kept}")
            conn.execute(f"CREATE TABLE {kept} AS (SELECT * FROM events WHERE NOT (device_id = '{device}' AND timestamp = '{newest.isoformat()}Z')) "
                         "TIMESTAMP(timestamp) PARTITION BY DAY WAL")
            conn.execute("DROP TABLE events")
            conn.execute(f"RENAME TABLE {kept} TO events")
        wait_until(lambda: rows("SELECT count() FROM events") == [(5999,)], "the rewritten table")

    check_read_side(lambda task, *args: run(cli, task, "-r", "1", *args), change, delete, 3000)


def test_single_rows_one_and_four_workers(cli, questdb):
    reports = assert_verified(run(cli, "insert", "-w", "1,4", "-r", "1", "--num-inserts", "150"), [150, 600])
    assert [r["figures"]["latency"]["calls"] for r in reports] == [150, 600]  # one request per event
    assert reports[0]["insert_mode"] == "single inserts"
    assert rows("SELECT count() FROM events") == [(600,)]
    assert stored("events", 2) == generated(2, 150)


def test_single_rows_into_four_tables(cli, questdb):
    assert_verified(run(cli, "insert", "-w", "2", "-r", "1", "--num-inserts", "100", "--tables", "multiple"), [200])
    for table in range(4):
        devices = rows(f"SELECT device_id, count() FROM events{table}")
        assert devices and all(int(device[-6:]) % 4 == table and count == 10 for device, count in devices)


def test_dataframe_batches_store_the_generated_events(cli, questdb):
    reports = assert_verified(run(cli, "insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "2000",
                                  "--extra-option", "batch_encoding=dataframe"), [4000])
    assert reports[0]["insert_mode"] == "ILP/HTTP request (DataFrame), size 1000"
    assert stored("events", 1) == generated(1, 2000)


@pytest.mark.parametrize(("encoding", "mode"), [("rows", "rows"), ("numpy", "NumPy")])
def test_batches_four_tables_client_keys_dedup_and_hour_partitions(cli, questdb, encoding, mode):
    result = run(cli, "insert", "-w", "1,4", "-r", "1", "--batch", "500", "--num-inserts", "2000", "--tables", "multiple",
                 "--primary-key", "client", "--extra-option", f"batch_encoding={encoding}", "--extra-option", "dedup=true",
                 "--extra-option", "partition_by=HOUR")
    reports = assert_verified(result, [2000, 8000])
    assert reports[0]["insert_mode"] == f"ILP/HTTP request ({mode}), size 500"
    total = 0
    for table in range(4):
        assert table_info(f"events{table}") == ("timestamp", "HOUR", True, True)
        devices = rows(f"SELECT DISTINCT device_id FROM events{table}")
        assert devices and all(int(device[-6:]) % 4 == table for (device,) in devices)  # a device stays in one table
        total += rows(f"SELECT count() FROM events{table}")[0][0]
    assert total == 8000
    # The worker's key is stored with each event (worker 1's devices 1, 5, 9 are in events1).
    expected = EventGenerator(1, 1, 10).batch(0, 2000)
    keys = dict(zip(expected.sequence_number.tolist(), expected.client_key.astype("U28").tolist()))
    stored_keys = rows("SELECT sequence_number, id FROM events1 WHERE device_id LIKE 'w000001-%'")
    assert len(stored_keys) == 600 and all(keys[sequence] == key for sequence, key in stored_keys)


def _module(**options: str) -> object:
    spec = RunSpec(run_id="questdb-test", task="insert", target="quest", module="questdb", workers=1, batch=1000,
                   connection={"host": HOST, "http_port": HTTP_PORT, "pg_port": PG_PORT}, extra=options)
    module = module_class("questdb")(spec)
    module.connect()
    module.schema.setup()
    return module


def _stored_after_two_writes(**options: str) -> int:
    module = _module(**options)
    try:
        batch = EventGenerator(7, 0, 10).batch(0, 1000)
        module.writer.insert_batch(module.writer.prepare_batch(batch))
        module.writer.insert_batch(module.writer.prepare_batch(batch))  # the same events again
        wait = module.schema.wait_for_count(2000, time.time())
        return wait.counted
    finally:
        module.close()


def test_dedup_replaces_repeated_events_and_without_it_they_add_up(questdb):
    assert _stored_after_two_writes(commit_wait_s="3") == 2000
    # With dedup the second write replaces the first: the count never reaches 2000 and the wait gives up at its limit.
    assert _stored_after_two_writes(dedup="true", commit_wait_s="1") == 1000
    assert rows("SELECT count(), count_distinct(sequence_number) FROM events") == [(1000, 1000)]


def test_commit_wait_is_bounded(questdb):
    module = _module(commit_wait_s="0.3", commit_poll_s="0.05")
    try:
        module.writer.insert_batch(module.writer.prepare_batch(EventGenerator(1, 0, 10).batch(0, 1000)))
        started = time.time()
        wait = module.schema.wait_for_count(1001, started)
    finally:
        module.close()
    assert not wait.reached and wait.counted == 1000 and wait.limit_s == 0.3
    assert 0.3 <= wait.waited_s < 2.0
    assert wait.sentence() == "only 1,000 of 1,001 events stored within 0.3 s"


def test_a_refused_ilp_request_fails_the_run_with_the_servers_error(cli, questdb):
    """The NumPy path checks QuestDB's answer: a batch the table cannot take (doubles into a BOOLEAN
    column) is refused with 400 and QuestDB's JSON error, and the run fails in one line naming both."""
    with connect() as conn:
        conn.execute("DROP TABLE IF EXISTS events")
        conn.execute("CREATE TABLE events (timestamp TIMESTAMP, device_id SYMBOL, sequence_number LONG, temperature BOOLEAN) "
                     "TIMESTAMP(timestamp) PARTITION BY DAY WAL")
    result = run(cli, "insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "200", "--no-clean")
    assert result.code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "ILP write failed with 400" in lines[0] and "column: temperature; cast error" in lines[0], result.stderr
    assert rows("SELECT count() FROM events") == [(0,)]


def test_ilp_over_tcp_stores_the_generated_events(cli, questdb):
    reports = assert_verified(run(cli, "insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "3000",
                                  "--extra-option", "transport=tcp"), [6000])
    assert reports[0]["insert_mode"] == "ILP/TCP write (NumPy, unacknowledged), size 1000"
    assert any("ILP over TCP has no acknowledgement" in note for note in reports[0]["notes"])
    assert reports[0]["ingestion"]["reached"]  # visible, timed until then
    assert stored("events", 1) == generated(1, 3000)


def test_a_batch_questdb_cannot_take_over_tcp_fails_the_count_check(cli, questdb):
    """ILP/TCP has no answer: QuestDB drops the lines it cannot take, and only the count says so."""
    with connect() as conn:
        conn.execute("DROP TABLE IF EXISTS events")
        conn.execute("CREATE TABLE events (timestamp TIMESTAMP, device_id SYMBOL, sequence_number LONG, temperature BOOLEAN) "
                     "TIMESTAMP(timestamp) PARTITION BY DAY WAL")
    result = run(cli, "insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "200", "--no-clean",
                 "--extra-option", "transport=tcp", "--extra-option", "commit_wait_s=2")
    assert result.code == 1
    assert result.stderr.strip().splitlines() == [
        "error: verification failed: the database holds 0 events but 200 were expected (0 before + 0 prefilled + 200 reported by the workers)"]
    assert "only 0 of 200 events stored within 2 s" in result.stdout


@pytest.mark.parametrize("args", [("--num-inserts", "10"), ("--batch", "10", "--extra-option", "batch_encoding=rows")])
def test_ilp_over_tcp_needs_batches_the_module_encodes(cli, questdb, args):
    result = run(cli, "insert", "-w", "1", "-r", "1", *args, "--extra-option", "transport=tcp")
    assert result.code == 2
    assert result.stderr.strip().splitlines() == [
        "error: module 'questdb': transport=tcp sends batches the module encodes: it needs --batch and batch_encoding numpy"]


def test_client_retries_need_the_official_client(cli, questdb):
    result = run(cli, "insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "100", "--extra-option", "client_retry_s=5")
    assert result.code == 2
    assert result.stderr.strip().splitlines() == [
        "error: module 'questdb': client_retry_s needs batch_encoding dataframe or rows (the official client retries; "
        "the NumPy path sends each request once)"]


def test_query_timeout_reaches_the_server(questdb):
    """--query-timeout becomes the connection's statement_timeout: QuestDB aborts a query that runs longer."""
    spec = RunSpec(run_id="questdb-test", task="query", target="quest", module="questdb", workers=1, query_timeout=0.2,
                   connection={"host": HOST, "http_port": HTTP_PORT, "pg_port": PG_PORT})
    module = module_class("questdb")(spec)
    module.connect()
    try:
        started = time.perf_counter()
        with pytest.raises(psycopg.DatabaseError, match="timeout, query aborted"):
            module.conn.execute("SELECT sum(x * x) FROM long_sequence(5000000000)").fetchall()
        assert time.perf_counter() - started < 5
    finally:
        module.close()


def test_numpy_and_row_encodings_need_no_pandas(questdb):
    """With pandas unimportable, the default (batch_encoding=numpy) and rows store a batch each, and
    the DataFrame path says in one line what is missing."""
    script = textwrap.dedent(f"""
        import sys
        sys.modules["pandas"] = None  # import pandas now raises ImportError
        from iotdb_bench.simulator.workload.events import EventGenerator
        from iotdb_bench.simulator.modules import ModuleError, module_class
        from iotdb_bench.simulator.spec import RunSpec
        def module(**extra):
            spec = RunSpec(run_id="nopandas", task="insert", target="q", module="questdb", workers=1, batch=1000,
                           connection={{"host": "{HOST}", "http_port": {HTTP_PORT}, "pg_port": {PG_PORT}}}, extra=extra)
            return module_class("questdb")(spec)
        try:
            module(batch_encoding="dataframe").connect()
        except ModuleError as error:
            print("refused:", error)
        for encoding, count in (("numpy", 1000), ("rows", 2000)):
            writing = module(batch_encoding=encoding)
            writing.connect()
            if encoding == "numpy":
                writing.schema.setup()
            writing.writer.insert_batch(writing.writer.prepare_batch(EventGenerator(1, 0, 10).batch(count - 1000, 1000)))
            print("stored:", writing.schema.wait_for_count(count, 0).counted)
            writing.close()
        print("pandas imported:", "pandas" in sys.modules and sys.modules["pandas"] is not None)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "refused: questdb: batch_encoding dataframe needs pandas; install it or use batch_encoding=numpy or rows", "stored: 1000", "stored: 2000",
        "pandas imported: False"]


def test_no_clean_and_steps_continue_the_streams(cli, questdb):
    assert_verified(run(cli, "insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "300"), [300])
    result = run(cli, "insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "200", "--steps", "2")
    assert result.code == 0, result.stderr
    verifications = [run["report"]["verification"] for run in result.results()["runs"]]
    assert [(v["count_before"], v["counted"]) for v in verifications] == [(0, 200), (200, 400)]
    assert stored("events", 0) == generated(0, 400)  # the second step continued the stream


def test_prefill_is_counted(cli, questdb):
    reports = assert_verified(run(cli, "insert", "-w", "2", "-r", "1", "--batch", "500", "--num-inserts", "1000", "--prefill", "3000"), [5000])
    assert reports[0]["verification"]["prefilled"] == 3000


@pytest.mark.parametrize("mode", ["sql", "uuid"])
def test_key_modes_questdb_cannot_honour_are_refused(cli, questdb, mode):
    result = run(cli, "insert", "-w", "1", "--primary-key", mode)
    assert result.code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: module 'questdb' does not support --primary-key {mode}: QuestDB generates no keys "
        "(db and none mean the same: no key column; client stores the worker's key)"]


def test_bad_partitioning_is_a_usage_error(cli, questdb):
    result = run(cli, "insert", "-w", "1", "--extra-option", "partition_by=NONE")
    assert result.code == 2
    assert "partition_by" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(("port_option", "message"), [
    ("http_port", f"cannot connect to QuestDB's ILP over HTTP at {HOST}:{UNUSED_PORT}"),
])
def test_unreachable_port_is_one_line_naming_host_and_port(cli, questdb, port_option, message):
    result = run(cli, "insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "100", "--extra-option", f"{port_option}={UNUSED_PORT}")
    assert result.code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


# -- workloads (issue 10) ------------------------------------------------------------------------

def columns(table: str) -> list[tuple]:
    return [(name, kind) for name, kind, *_ in rows(f"SELECT \"column\", type FROM table_columns('{table}')")]


@pytest.mark.parametrize("workload", sorted(WORKLOAD_OPTIONS))
def test_workload_options(cli, questdb, workload):
    report = verified_workload_run(run(cli, "insert", "-w", "2", "-r", "1", *WORKLOAD_OPTIONS[workload]))
    counted = report["verification"]["counted"]
    assert rows("SELECT count() FROM events")[0][0] == counted
    if workload == "light":
        assert columns("events") == [("timestamp", "TIMESTAMP"), ("val1", "SHORT"), ("val2", "SHORT")]
        assert rows("SELECT min(val1) >= 1000, max(val2) <= 3000 FROM events")[0] == (True, True)
        assert any("no index on val1" in note for note in report["notes"])
        return
    if workload == "measurements":  # four values per row: temperature and m1..m3
        assert [name for name, _ in columns("events")] == ["timestamp", "device_id", "sequence_number", "temperature", "m1", "m2", "m3"]
        assert rows("SELECT count() FROM events WHERE m3 IS NOT NULL")[0][0] == counted
    if workload != "duration":  # every worker's sequence numbers once each, late ones included
        for worker in (0, 1):
            numbers = rows("SELECT sequence_number FROM events WHERE device_id LIKE %s ORDER BY sequence_number", f"w{worker:06d}-%")
            assert [n for (n,) in numbers] == list(range(1000))


def test_sensors_in_rows_and_large_shape_with_dedup_on_client_keys(cli, questdb):
    verified_workload_run(run(cli, "insert", "-w", "2", "-r", "1", "--sensors", "3", "--num-inserts", "60"))
    assert rows("SELECT count() FROM (SELECT DISTINCT device_id, sensor FROM events)")[0][0] == 2 * 10 * 3
    verified_workload_run(run(cli, "insert", "-w", "2", "-r", "1", "--schema", "large", "--batch", "100", "--num-inserts", "200",
                              "--primary-key", "client", "--extra-option", "dedup=true", "--extra-option", "batch_encoding=rows"))
    assert rows("SELECT count(), max(length(text)) <= 200, min(i8) >= 1000, count_distinct(id) FROM events")[0] == (400, True, True, 400)


@pytest.mark.parametrize(("args", "message"), [
    (("--schema", "slim", "--primary-key", "none", "--extra-option", "dedup=true"), "module 'questdb': dedup with --schema slim needs"),
])
def test_workloads_questdb_cannot_store_are_refused_in_one_line(cli, questdb, args, message):
    result = run(cli, "insert", "-w", "1", "-r", "1", "--num-inserts", "10", *args)
    assert result.code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, result.stderr
