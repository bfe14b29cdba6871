"""The database-side cross-check against the databases' own figures, computed by hand.

PostgreSQL tests use a database of their own, so other suites sharing the server cannot touch
the `events` table while these read its statistics.
"""

import csv

import psycopg
import pytest

from iotdb_bench.cli.results.tables import catalogue
from tests.csv_checks import names

TEST_DATABASE = "iotbench_crosscheck"


def connect(env, **overrides):
    params = {"host": env["PGHOST"], "port": env["PGPORT"], "user": env["PGUSER"], "password": env["PGPASSWORD"],
              "dbname": env["PGDATABASE"], **overrides}
    return psycopg.connect(**params, autocommit=True)


@pytest.fixture
def own_db(pg_env):
    with connect(pg_env) as db:
        if not db.execute("SELECT 1 FROM pg_database WHERE datname = %s", (TEST_DATABASE,)).fetchone():
            db.execute(f"CREATE DATABASE {TEST_DATABASE}")
    return {**pg_env, "PGDATABASE": TEST_DATABASE}


def n_tup_ins(env):
    with connect(env) as db:
        return db.execute("SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = 'events'").fetchone()[0]


def crosscheck_rows(result):
    with (result.results_folders()[-1] / "crosscheck.csv").open() as handle:
        return list(csv.DictReader(handle))


@pytest.mark.postgres
@pytest.mark.slow
def test_postgres_counters_match_pg_stat_user_tables(cli, own_db):
    """3000 prefilled + 2 x 5000 timed into a fresh table: n_tup_ins is 3000 at the start, 13000 at the end."""
    result = cli("insert", "--target", "postgresql-local", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "5000",
                 "--prefill", "3000", env=own_db)
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    # the prefill is visible at the start even though its sessions were idle at the barrier
    assert report["server"]["counters_at_start"] == {"rows_inserted": 3000}
    assert report["server"]["counters_at_end"] == {"rows_inserted": 13000}
    assert n_tup_ins(own_db) == 13000  # read by hand, after the run
    [row] = crosscheck_rows(result)
    duration = report["figures"]["duration_s"]
    assert int(row["db_events"]) == 10000
    assert float(row["db_rate"]) == pytest.approx(10000 / duration)
    assert float(row["client_rate"]) == pytest.approx(report["figures"]["throughput"])
    assert float(row["difference"]) == 0.0 and row["flagged"] == "False"
    with connect(own_db) as db:
        size = db.execute("SELECT pg_total_relation_size('events')").fetchone()[0]
    assert float(row["bytes_per_event"]) == pytest.approx(size / 13000, rel=0.05)  # autovacuum may add a map page
    assert "Database-side check: within 2%" in result.stdout and "FLAGGED" not in result.stdout


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.parametrize(("every", "flagged"), [(100, False), (10, True)], ids=["1-percent", "10-percent"])
def test_rows_the_database_did_not_insert_are_flagged_above_two_percent(cli, own_db, every, flagged):
    """A trigger discards every row whose sequence number ends in 7 (mod `every`): n_tup_ins does not count them."""
    setup = cli("insert", "--target", "postgresql-local", "-w", "1", "-r", "1", "--num-inserts", "10", env=own_db)
    assert setup.code == 0, setup.stderr
    with connect(own_db) as db:
        db.execute("CREATE OR REPLACE FUNCTION iotb_discard() RETURNS trigger AS $$ BEGIN "
                   f"IF NEW.sequence_number % {every} = 7 THEN RETURN NULL; END IF; RETURN NEW; END $$ LANGUAGE plpgsql")
        db.execute("CREATE TRIGGER iotb_discard BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION iotb_discard()")
    result = cli("insert", "--target", "postgresql-local", "-w", "2", "-r", "1", "--batch", "100", "--num-inserts", "1000",
                 "--prefill", "2000", "--no-clean", env=own_db)
    assert result.code == 1  # the count check fails as well: rows are missing
    kept = 1000 - 1000 // every  # of each worker's 1000 consecutive sequence numbers
    report = result.results()["runs"][0]["report"]
    assert report["server"]["counters_at_start"] == {"rows_inserted": 10 + 2 * kept}  # setup run + prefill
    assert report["server"]["counters_at_end"] == {"rows_inserted": 10 + 4 * kept}
    assert n_tup_ins(own_db) == 10 + 4 * kept
    [row] = crosscheck_rows(result)
    assert int(row["db_events"]) == 2 * kept
    assert float(row["difference"]) == pytest.approx(-1 / every)
    assert row["flagged"] == str(flagged)
    assert ("FLAGGED" in result.stdout) == flagged


@pytest.mark.slow
def test_sqlite_row_counts_at_the_barrier_and_at_the_end(cli):
    result = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--batch", "500", "--num-inserts", "4000", "--prefill", "1000")
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    assert report["server"]["counters_at_start"] == {"rows": 1000}  # sampled before any timed insert
    assert report["server"]["counters_at_end"] == {"rows": 9000}
    [row] = crosscheck_rows(result)
    assert float(row["difference"]) == 0.0 and row["count_check"] == "ok"
    assert list(row) == names((catalogue.CROSSCHECKS,))  # the catalogue's columns
    page_bytes = report["server"]["storage_bytes"]
    assert page_bytes > 9000 * 20  # four columns and a key per event
    assert float(row["bytes_per_event"]) == pytest.approx(page_bytes / 9000)
