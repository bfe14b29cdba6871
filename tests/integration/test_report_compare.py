"""`report` and `compare` on saved results, and the plots every run leaves in its folder."""

import csv
import json

import pytest

from iotdb_bench.cli.results.tables import catalogue
from tests.csv_checks import names

pytestmark = [pytest.mark.slow, pytest.mark.plots]  # what is checked is the plots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def pngs(folder):
    return sorted(path.name for path in folder.glob("*.png") if path.read_bytes()[:8] == PNG_MAGIC)


def test_insert_run_leaves_plots_and_report_reprints_them(cli):
    run = cli("insert", "--target", "sqlite", "-w", "1,2", "-r", "2", "--batch", "200", "--num-inserts", "2000")
    assert run.code == 0, run.stderr
    folder = run.results_folders()[-1]
    assert pngs(folder) == ["events-per-second.png", "inserts-per-second.png", "latency.png", "resources.png"]
    assert (folder / "crosscheck.csv").is_file()
    assert "Database-side check: within 2%" in run.stdout  # one line by default, the table with --details
    for png in folder.glob("*.png"):
        png.unlink()

    again = cli("report", str(folder), "--details")
    assert again.code == 0, again.stderr
    assert pngs(folder) == ["events-per-second.png", "inserts-per-second.png", "latency.png", "resources.png"]
    summary = run.results()["inserts"]
    for row in summary:  # the re-printed table shows the saved averages
        assert f"{row['throughput']['avg']:,.0f}" in again.stdout
    assert "Database-side cross-check" in again.stdout
    assert "Report written from" in again.stdout and "Results saved" not in again.stdout


def test_steps_and_query_plots(cli):
    steps = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--batch", "500", "--num-inserts", "1000", "--steps", "3")
    assert steps.code == 0, steps.stderr
    assert pngs(steps.results_folders()[-1]) == ["events-per-second.png", "fill-level.png", "resources.png"]
    query = cli("query", "--target", "sqlite", "-w", "1", "-r", "2")
    assert query.code == 0, query.stderr
    assert pngs(query.results_folders()[-1]) == ["query-durations.png"]


def test_compare_sqlite_and_null_runs(cli, tmp_path):
    sqlite = cli("insert", "--target", "sqlite", "-w", "2", "-r", "2", "--batch", "1000", "--num-inserts", "3000")
    null = cli("insert", "--target", "null", "--platform", "local", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "3000")
    query = cli("query", "--target", "sqlite", "-w", "1", "-r", "2")
    assert sqlite.code == null.code == query.code == 0
    [insert_folder] = [path for path in sqlite.results_folders() if path.name.endswith("-sqlite-insert")]
    sqlite_average = json.loads((insert_folder / "results.json").read_text())["inserts"][0]["throughput"]["avg"]
    folders = [str(path) for path in sqlite.results_folders()]
    result = cli("compare", *folders)  # default output folder: results/compare-<time>
    assert result.code == 0, result.stderr
    [output] = list((tmp_path / "results").glob("compare-*"))
    assert sorted(path.name for path in output.iterdir()) == ["compare.html", "compare.md", "compare.png", "inserts.csv", "queries.csv"]
    with (output / "inserts.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    by_database = {row["database"]: row for row in rows}
    assert set(by_database) == {"sqlite", "null"}
    assert by_database["sqlite"]["insert_mode"] == "single-row INSERTs in one transaction, size 1000"
    assert by_database["null"]["insert_mode"] == "nothing sent (copy encoding), size 1000"
    assert by_database["sqlite"]["throughput.n"] == "2"
    assert float(by_database["sqlite"]["throughput.avg"]) == pytest.approx(sqlite_average)
    assert by_database["null"]["crosscheck"] == "not applicable"
    assert by_database["sqlite"]["crosscheck"].startswith("within 2%")
    markdown = (output / "compare.md").read_text()
    assert "| Database | Source (results folder) | Workers | Runs | Insert mode | Primary key | Inserts/s (average over runs) |" in markdown
    assert "| Database | Source (results folder) | Workers | Query | Average ms per execution |" in markdown
    assert markdown.count("| count-events |") == 1
    with (output / "queries.csv").open() as handle:
        queries = list(csv.DictReader(handle))
    assert len(queries) == 6 and {row["answer"] for row in queries} == {"ok"}
    assert list(queries[0]) == names((catalogue.QUERIES,), compared=True)  # the catalogue's columns, every level
    assert list(rows[0]) == names((catalogue.INSERTS, catalogue.VISIBILITY), compared=True)
    assert {row["source"] for row in rows} == {path.name for path in sqlite.results_folders() if path.name.endswith("-insert")}
    assert "Inserts across runs" in result.stdout and "Queries across runs" in result.stdout


@pytest.mark.postgres
def test_compare_postgres_and_sqlite_into_chosen_folder(cli, pg_env, tmp_path):
    import psycopg

    with psycopg.connect(host=pg_env["PGHOST"], port=pg_env["PGPORT"], user=pg_env["PGUSER"], password=pg_env["PGPASSWORD"],
                         dbname=pg_env["PGDATABASE"], autocommit=True) as db:  # a database of its own: no other suite's table
        if not db.execute("SELECT 1 FROM pg_database WHERE datname = 'iotbench_compare'").fetchone():
            db.execute("CREATE DATABASE iotbench_compare")
    pg_env = {**pg_env, "PGDATABASE": "iotbench_compare"}
    postgres = cli("insert", "--target", "postgresql-local", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "5000", env=pg_env)
    assert postgres.code == 0, postgres.stderr
    sqlite = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "5000")
    assert sqlite.code == 0, sqlite.stderr
    output = tmp_path / "chosen"
    result = cli("compare", *(str(path) for path in sqlite.results_folders()), "--output", str(output))
    assert result.code == 0, result.stderr
    with (output / "inserts.csv").open() as handle:
        modes = {row["database"]: (row["insert_mode"], row["primary_key"]) for row in csv.DictReader(handle)}
    assert modes == {"postgresql-local": ("COPY, size 1000", "db"), "sqlite": ("single-row INSERTs in one transaction, size 1000", "db")}
    assert "postgresql-local" in (output / "compare.md").read_text()


@pytest.mark.parametrize("command", ["report", "compare"])
def test_a_folder_without_results_is_a_one_line_error(cli, tmp_path, command):
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "empty", tmp_path / "missing"):
        result = cli(command, str(folder), env={"COLUMNS": "400"})  # the long path on one line, to find it whole
        assert result.code == 2
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
        if command == "report" or folder.name == "missing":
            assert "not a results folder" in result.stderr
        else:  # compare lists a folder it cannot read in one line, then has nothing to compare
            assert f"Skipped {folder}: no results.json" in result.stdout and "nothing to compare" in result.stderr


def test_a_corrupt_results_file_is_a_one_line_error(cli, tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "results.json").write_text("{not json")
    result = cli("report", str(folder))
    assert result.code == 2 and "cannot read" in result.stderr and "Traceback" not in result.stderr
