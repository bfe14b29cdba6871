"""The CockroachDB / YugabyteDB behaviour of the postgres module, on the real local PostgreSQL.

Neither CockroachDB nor YugabyteDB can run here, so their distinctive behaviour is provoked on
PostgreSQL itself: a trigger raises the serialisation failures (SQLSTATE 40001) and CockroachDB's
"restart transaction" errors they produce under contention, the COPY-less target is a config
entry like the cockroachdb target, and the loose-index-scan query runs on real data.
Runs in its own database so other suites' `events` tables are never touched.
"""

from __future__ import annotations

import pytest

from iotdb_bench.simulator.modules import postgres
from iotdb_bench.simulator.spec import QUERY_NAMES, RunSpec
from tests.conftest import dedicated_database, pg_connect

pytestmark = pytest.mark.postgres

DATABASE = "iotbench_pg_family"

CONFIG = """\
platform: local
targets:
  pg:
    module: postgres
    platform: local
    connection_string: "host=${PGHOST} port=${PGPORT} dbname=${PGDATABASE} user=${PGUSER}"
    password: "${PGPASSWORD}"
  cockroach-like:
    module: postgres
    platform: local
    connection_string: "host=${PGHOST} port=${PGPORT} dbname=${PGDATABASE} user=${PGUSER}"
    password: "${PGPASSWORD}"
    copy_supported: false
"""

# Fails the first `failures` statements that insert into the table, then lets everything through.
# The count lives in a sequence: nextval() survives the rollback of the failed transaction.
FAILING_TRIGGER = """
DROP SEQUENCE IF EXISTS failing_inserts;
CREATE SEQUENCE failing_inserts;
CREATE OR REPLACE FUNCTION fail_first_inserts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF nextval('failing_inserts') <= {failures} THEN
        RAISE EXCEPTION '{message}' USING ERRCODE = '{sqlstate}';
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER fail_first_inserts BEFORE INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION fail_first_inserts();
"""


@pytest.fixture
def family(pg_env, tmp_path):
    """PG* settings for a dedicated, empty database, and a config with the test targets."""
    env = dedicated_database(pg_env, DATABASE)
    (tmp_path / "config.yaml").write_text(CONFIG)
    return env


def sql(env, statement: str, params=None) -> list[tuple]:
    with pg_connect(env, DATABASE) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def insert(cli, env, target: str, *args: str):
    return cli("insert", "--config", "config.yaml", "--target", target, "-r", "1", *args, env=env, timeout=300)


def prepare_failing_table(env, failures: int, message: str, sqlstate: str) -> None:
    """The run's table created ahead (the run keeps it with --no-clean), with the failing trigger."""
    spec = RunSpec(run_id="prepare", task="insert", target="pg", module="postgres", workers=1)
    sql(env, postgres.Module(spec).schema.create_table_statement("events"))
    sql(env, FAILING_TRIGGER.format(failures=failures, message=message, sqlstate=sqlstate))


@pytest.mark.parametrize(
    ("mode", "message", "sqlstate"),
    [
        ("batch", "could not serialize access due to concurrent update (injected)", "40001"),
        ("single", "could not serialize access due to concurrent update (injected)", "40001"),
        ("batch", "restart transaction: TransactionRetryWithProtoRefreshError: ReadWithinUncertaintyIntervalError (injected)", "XX000"),
    ],
    ids=["serialization-failure-batch", "serialization-failure-single", "cockroachdb-restart-transaction"],
)
def test_retryable_errors_are_retried_and_counted(cli, family, mode, message, sqlstate):
    failures = 3
    prepare_failing_table(family, failures, message, sqlstate)
    batch = ["--batch", "100"] if mode == "batch" else []
    result = insert(cli, family, "pg", "-w", "2", "--num-inserts", "300", "--no-clean", *batch)
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    assert report["verification"]["ok"] and report["verification"]["counted"] == 600
    assert report["figures"]["retries"] == failures
    assert sum(worker["retries"] for worker in report["workers"]) == failures
    assert sql(family, "SELECT count(DISTINCT (device_id, sequence_number)) FROM events") == [(600,)]


def test_retries_exhausted_fail_the_run_with_a_clear_message(cli, family):
    prepare_failing_table(family, 1000, "could not serialize access (injected)", "40001")
    result = insert(cli, family, "pg", "-w", "1", "--num-inserts", "100", "--batch", "50", "--no-clean",
                    "--extra-option", "max_retries=2")
    assert result.code == 1
    assert "still failing after 2 retries: could not serialize access (injected)" in result.stderr
    assert "Traceback" not in result.stderr
    assert sql(family, "SELECT nextval('failing_inserts')") == [(4,)]  # 1 try + 2 retries, then the probe


def test_other_errors_are_not_retried(cli, family):
    prepare_failing_table(family, 1000, "disk quota exceeded (injected)", "53100")
    result = insert(cli, family, "pg", "-w", "1", "--num-inserts", "100", "--batch", "50", "--no-clean")
    assert result.code == 1
    assert "disk quota exceeded (injected)" in result.stderr
    assert "retries" not in result.stderr
    assert sql(family, "SELECT nextval('failing_inserts')") == [(2,)]


def test_copy_unsupported_target_rejects_copy_batches_up_front(cli, family):
    result = insert(cli, family, "cockroach-like", "-w", "1", "--num-inserts", "100", "--batch", "50")
    assert result.code == 2
    assert "target 'cockroach-like' does not support COPY; use --extra-option use_values_lists=true" in result.stderr
    assert "Traceback" not in result.stderr
    assert sql(family, "SELECT to_regclass('events')") == [(None,)]  # nothing was started


def test_copy_unsupported_target_runs_values_lists_and_single_inserts(cli, family):
    result = insert(cli, family, "cockroach-like", "-w", "2", "--num-inserts", "200", "--batch", "100",
                    "--extra-option", "use_values_lists=true", "--primary-key", "uuid")
    assert result.code == 0, result.stderr
    assert result.results()["runs"][0]["report"]["verification"]["counted"] == 400
    single = insert(cli, family, "cockroach-like", "-w", "1", "--num-inserts", "50")
    assert single.code == 0, single.stderr


def test_loose_index_scan_variant_sits_beside_the_canonical_query(cli, family):
    # 3 workers x 4 devices, each device with several readings.
    assert insert(cli, family, "pg", "-w", "3", "--num-inserts", "200", "--batch", "100", "--devices-per-worker", "4",
                  "--extra-option", "create_indices=true").code == 0
    spec = RunSpec(run_id="q", task="query", target="pg", module="postgres", workers=1,
                   connection={"connection_string": f"host={family['PGHOST']} port={family['PGPORT']} dbname={DATABASE} "
                                                    f"user={family['PGUSER']}", "password": family["PGPASSWORD"]})
    module = postgres.Module(spec)
    module.connect()
    try:
        queries = module.reader.queries()
        answer = queries["newest-per-device"]()  # the call the timer times
    finally:
        module.close()
    # That call returned with the whole answer received and left its decoding for after the clock: it
    # decodes with the connection closed.
    assert callable(answer.rows)
    decoded = sorted(answer.normalised())
    # The canonical query is untouched and the variant has its own name, outside the default set.
    assert postgres.NEWEST_PER_DEVICE_LOOSE_INDEX_SCAN not in QUERY_NAMES
    assert set(QUERY_NAMES) | {postgres.NEWEST_PER_DEVICE_LOOSE_INDEX_SCAN} == set(queries)
    assert postgres.NEWEST_PER_DEVICE_LOOSE_INDEX_SCAN not in spec.queries
    # Both give the same answer: every device once, with its newest reading.
    from iotdb_bench.simulator.wire import sql as sql_common

    canonical = sorted(sql(family, sql_common.QUERIES["newest-per-device"]))
    variant = sorted(sql(family, postgres.LOOSE_INDEX_SCAN_NEWEST_PER_DEVICE))
    assert len(canonical) == 12 and variant == canonical
    assert [device for device, _, _ in decoded] == [device for device, _, _ in canonical]
    newest = sorted(sql(family, "SELECT device_id, max(timestamp) FROM events GROUP BY device_id"))
    assert [(device, ts) for device, ts, _ in variant] == newest
    # And a default query run reports the canonical query, never the variant in its place.
    result = cli("query", "--config", "config.yaml", "--target", "pg", "-r", "1", env=family, timeout=300)
    assert result.code == 0, result.stderr
    reported = result.results()["runs"][0]["report"]["queries"]
    assert set(reported) == set(QUERY_NAMES) and reported["newest-per-device"]["rows"] == 12



def test_loose_index_scan_variant_can_be_run_by_name_from_the_cli(cli, family):
    assert insert(cli, family, "pg", "-w", "2", "--num-inserts", "400", "--batch", "200",
                  "--extra-option", "create_indices=true").code == 0
    result = cli("query", "--config", "config.yaml", "--target", "pg", "-r", "2",
                 "--queries", "newest-per-device,newest-per-device (loose index scan)", env=family, timeout=300)
    assert result.code == 0, result.stderr
    by_name = {row["query"]: row for row in result.results()["queries"]}
    assert by_name["newest-per-device"]["rows"] == by_name["newest-per-device (loose index scan)"]["rows"] == 20
    assert not by_name["newest-per-device (loose index scan)"]["errors"]
