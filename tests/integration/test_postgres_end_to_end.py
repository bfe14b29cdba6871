"""The CLI end to end against the real PostgreSQL: every insert mode, row counts checked in the database."""

import psycopg
import pytest

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def connect(env):
    return psycopg.connect(host=env["PGHOST"], port=env["PGPORT"], user=env["PGUSER"], password=env["PGPASSWORD"],
                           dbname=env["PGDATABASE"], autocommit=True)


def count(env, table="events"):
    with connect(env) as db:
        return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


@pytest.mark.parametrize(
    ("mode_args", "calls_per_worker"),
    [
        ([], 3000),  # single inserts with autocommit
        (["--batch", "1000"], 3),  # COPY
        (["--batch", "1000", "--extra-option", "use_values_lists=true"], 3),
        (["--batch", "1000", "--extra-option", "batch_mode=transaction"], 3),
    ],
    ids=["single", "copy", "values-lists", "transaction"],
)
@pytest.mark.parametrize("workers", [1, 4])
def test_insert_modes(cli, pg_env, mode_args, calls_per_worker, workers):
    result = cli("insert", "--target", "postgresql-local", "-w", str(workers), "-r", "1", "--num-inserts", "3000",
                 *mode_args, env=pg_env)
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    expected = {"count_before": 0, "prefilled": 0, "inserted": workers * 3000, "expected": workers * 3000,
                "counted": workers * 3000, "ok": True}
    assert {key: report["verification"][key] for key in expected} == expected
    assert report["figures"]["latency"]["calls"] == workers * calls_per_worker
    assert count(pg_env) == workers * 3000


@pytest.mark.parametrize("primary_key", ["db", "sql", "client", "uuid", "none"])
def test_primary_key_modes(cli, pg_env, primary_key):
    result = cli("insert", "--target", "postgresql-local", "-w", "2", "-r", "1", "--num-inserts", "2000", "--batch", "500",
                 "--primary-key", primary_key, env=pg_env)
    assert result.code == 0, result.stderr
    with connect(pg_env) as db:
        columns = [row[0] for row in db.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'events' ORDER BY ordinal_position")]
        has_pk = db.execute(
            "SELECT count(*) FROM information_schema.table_constraints WHERE table_name = 'events' AND constraint_type = 'PRIMARY KEY'"
        ).fetchone()[0]
        assert db.execute("SELECT count(*) FROM events").fetchone()[0] == 4000
        if primary_key != "none":
            assert db.execute("SELECT count(DISTINCT id) FROM events").fetchone()[0] == 4000
    assert ("id" in columns) == (primary_key != "none")
    assert has_pk == (0 if primary_key == "none" else 1)


def test_natural_key_constraint_and_multiple_tables(cli, pg_env):
    result = cli("insert", "--target", "postgresql-local", "-w", "2", "-r", "1", "--num-inserts", "2000", "--batch", "1000",
                 "--tables", "multiple", "--primary-key", "none",
                 "--extra-option", "primary_key_constraint=PRIMARY KEY (device_id, timestamp, sequence_number)", env=pg_env)
    assert result.code == 0, result.stderr
    assert sum(count(pg_env, f"events{i}") for i in range(4)) == 4000
    with connect(pg_env) as db:
        key = db.execute(
            "SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM pg_index i "
            "JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true "
            "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
            "WHERE i.indrelid = 'events0'::regclass AND i.indisprimary").fetchone()[0]
    assert key == "device_id,timestamp,sequence_number"


def test_the_issue_commands(cli, pg_env):
    """The four insert commands of the issue and the query command, at reduced sizes."""
    runs = cli("insert", "--target", "postgresql-local", "-w", "1,4", "-r", "3", "--batch", "1000", "--num-inserts", "5000", env=pg_env)
    assert runs.code == 0, runs.stderr
    summary = runs.results()["inserts"]
    assert [(row["workers"], row["runs"]) for row in summary] == [(1, 3), (4, 3)]
    assert all(row["throughput"]["min"] <= row["throughput"]["avg"] <= row["throughput"]["max"] for row in summary)

    steps = cli("insert", "--target", "postgresql-local", "-w", "4", "-r", "1", "--num-inserts", "25000", "--batch", "1000",
                "--steps", "4", env=pg_env)
    assert steps.code == 0, steps.stderr
    assert [row["level"] for row in steps.results()["inserts"]] == [0, 100_000, 200_000, 300_000]
    assert count(pg_env) == 400_000

    prefill = cli("insert", "--target", "postgresql-local", "-w", "4", "-r", "1", "--prefill", "20000", "--batch", "1000",
                  "--num-inserts", "5000", "--extra-option", "create_indices=true", env=pg_env)
    assert prefill.code == 0, prefill.stderr
    assert prefill.results()["runs"][0]["report"]["verification"]["prefilled"] == 20_000
    assert count(pg_env) == 40_000

    queries = cli("query", "--target", "postgresql-local", "-w", "2", "-r", "5", env=pg_env)
    assert queries.code == 0, queries.stderr
    by_name = {row["query"]: row for row in queries.results()["queries"]}
    assert set(by_name) == {"count-events", "temperature-min-max", "temperature-stats", "temperature-stats-per-device", "newest-per-device",
                            "device-downsample"}
    assert {row["answer"] for row in by_name.values()} == {"ok"}  # prefill, steps and --no-clean all accounted for
    assert by_name["temperature-stats-per-device"]["rows"] == 40  # 4 workers x 10 devices
    assert by_name["newest-per-device"]["rows"] == 40
    assert all(row["executions"] == 10 for row in by_name.values())
    with connect(pg_env) as db:
        assert {row[0] for row in db.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'events'")} >= {
            "events_temperature", "events_device_temperature"}


def test_verification_catches_rows_the_database_dropped(cli, pg_env):
    """A trigger silently discards some rows: the counts disagree and the run must fail loudly."""
    setup = cli("insert", "--target", "postgresql-local", "-w", "1", "-r", "1", "--num-inserts", "10", env=pg_env)
    assert setup.code == 0
    with connect(pg_env) as db:
        db.execute("CREATE OR REPLACE FUNCTION iotb_drop_some() RETURNS trigger AS $$ BEGIN "
                   "IF NEW.sequence_number % 100 = 7 THEN RETURN NULL; END IF; RETURN NEW; END $$ LANGUAGE plpgsql")
        db.execute("CREATE TRIGGER iotb_drop BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION iotb_drop_some()")
    result = cli("insert", "--target", "postgresql-local", "-w", "2", "-r", "1", "--num-inserts", "1000", "--batch", "100",
                 "--no-clean", env=pg_env)
    assert result.code == 1
    assert "verification failed" in result.stderr and "1990" in result.stderr and "2010" in result.stderr
    assert result.results()["status"] == "failed"


def test_duplicate_keys_fail_the_run_with_the_workers_error(cli, pg_env):
    first = cli("insert", "--target", "postgresql-local", "-w", "2", "-r", "1", "--num-inserts", "500", "--batch", "100",
                "--primary-key", "client", env=pg_env)
    assert first.code == 0
    again = cli("insert", "--target", "postgresql-local", "-w", "2", "-r", "1", "--num-inserts", "500", "--batch", "100",
                "--primary-key", "client", "--no-clean", env=pg_env)
    assert again.code == 1
    assert "worker" in again.stderr and "duplicate key" in again.stderr
    assert "Traceback" not in again.stderr
