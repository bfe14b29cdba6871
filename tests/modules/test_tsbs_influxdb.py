"""TSBS's cpu-only and devops data and the DevOps query types on the real InfluxDB 1.8 of
scripts/servers/start-influxdb.sh (tests/tsbs_story.py): TSBS's influx layout (a measurement per TSBS
measurement, the host's ten tags and the measurement's own as tags, fields as TSBS's serializer writes
them), TSBS's rows and points, every type answered `ok` in TSBS's InfluxQL, changed rows found, and
the data's size as InfluxDB accounts for it. Each story runs in a database of its own, inserted once
on first use and dropped at the end."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.modules.influxdb.tsbs_iot_queries import REFUSED, TRUCK_TAGS
from iotdb_bench.simulator.queries.parameters import ParameterDraws
from iotdb_bench.simulator.queries.tsbs_iot import DRIVING_VELOCITY, IOT, TEN_MINUTES_MS
from iotdb_bench.simulator.queries.tsbs_iot import written as iot_written
from iotdb_bench.simulator.spec import TSBS_IOT_QUERIES, RunSpec
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.iot import truck_tags
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS
from tests.conftest import CliResult, run_cli
from tests.tsbs_story import (
    CPU_ONLY,
    DATA,
    DEVOPS_STORY,
    HOSTS,
    IOT_DATA,
    IOT_INSERT,
    QUERY_RUNS,
    QUERY_SEED,
    TRUCKS,
    TSBS_ROWS,
    Story,
    assert_every_iot_type_answers_ok,
    assert_every_type_answers_ok,
    assert_inserted,
    assert_iot_inserted,
    check_changed_rows_are_found,
    insert_story,
    reachable_or_fail,
)

pytestmark = pytest.mark.influxdb

URL = os.environ.get("INFLUXDB_URL", "http://127.0.0.1:8086")
DATABASE = f"iotbench_tsbs_{os.getpid()}"
# usage_user of the changed rows: a whole number (the fields are integers) above any walk's 100.
CHANGED_TO = 101


def influxql(statement: str, database: str | None = DATABASE) -> list[dict]:
    """The series of an InfluxQL answer, times in epoch milliseconds."""
    answer = httpx.post(f"{URL}/query", data={"q": statement, "epoch": "ms", **({"db": database} if database else {})}, timeout=60).json()
    result = answer["results"][0]
    assert "error" not in result, result
    return result.get("series", [])


@pytest.fixture(scope="module")
def influx(tmp_path_factory):
    """A folder to run the CLI in once the story's data is inserted, and the insert's run report."""
    reachable_or_fail(f"{URL}/ping", "InfluxDB", "start-influxdb.sh")
    folder = tmp_path_factory.mktemp("tsbs-influxdb")
    yield folder, insert_story(run(folder))
    influxql(f'DROP DATABASE "{DATABASE}"', database=None)


@pytest.fixture(scope="module")
def stories(tmp_path_factory):
    """The other use cases' stories, each in a database of its own (DATABASE_<name>), inserted on first
    use: `stories(name)` is a folder and the database; all dropped at the end."""
    reachable_or_fail(f"{URL}/ping", "InfluxDB", "start-influxdb.sh")
    made: dict[str, tuple[Path, str]] = {}

    def story(name: str, insert: Callable[[Callable[..., CliResult]], None]) -> tuple[Path, str]:
        if name not in made:
            database = f"{DATABASE}_{name}"
            made[name] = tmp_path_factory.mktemp(f"tsbs-influxdb-{name}"), database
            insert(run(*made[name]))
        return made[name]

    yield story
    for _, database in made.values():
        influxql(f'DROP DATABASE "{database}"', database=None)


def run(folder: Path, database: str = DATABASE):
    return lambda *args: run_cli([args[0], "--target", "influxdb-local", *args[1:]], folder, env={"INFLUXDB_URL": URL, "INFLUXDB_DB": database})


def change_usage_user(database: str, story: Story) -> Callable[[int, int, float], None]:
    """How check_changed_rows_are_found changes a cpu row: a point of the same series and time replaces its field."""
    tags = host_tags(story.data.seed, 0, HOSTS)

    def change(host: int, step: int, value: float) -> None:
        line = "cpu," + ",".join(f"{name}={tag}" for name, tag in zip(TAG_NAMES, tags[host])) + f" usage_user={int(value)}i {story.data.time_of(step)}"
        response = httpx.post(f"{URL}/write", params={"db": database, "precision": "ms"}, content=line, timeout=30)
        assert response.status_code == 204, response.text

    return change


def test_tsbs_layout_and_every_query_type_answered_right(influx):
    folder, _ = influx
    # TSBS's influx layout: measurement cpu, the ten tags of each host, the fields as integers.
    [keys] = influxql("SHOW TAG KEYS FROM cpu")
    assert sorted(key for [key] in keys["values"]) == sorted(TAG_NAMES)
    [fields] = influxql("SHOW FIELD KEYS FROM cpu")
    assert fields["values"] == sorted([name, "integer"] for name in CPU_FIELDS)
    [counted] = influxql("SELECT count(usage_user), count(usage_guest_nice) FROM cpu")
    assert counted["values"][0][1:] == [TSBS_ROWS, TSBS_ROWS]
    # host_3's first row: its tags as the tool draws them, at TSBS's start, every field a whole number in [0, 100].
    [first] = influxql("SELECT * FROM cpu WHERE hostname = 'host_3' LIMIT 1")
    row = dict(zip(first["columns"], first["values"][0]))
    assert row["time"] == DATA.start_ms
    assert tuple(row[name] for name in TAG_NAMES) == host_tags(DATA.seed, 3, 1)[0]
    assert all(isinstance(row[name], int) and 0 <= row[name] <= 100 for name in CPU_FIELDS)
    assert_every_type_answers_ok(run(folder)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def test_storage_is_influxdbs_own_accounting_of_the_database(influx):
    """The size is possible: positive, grown by the run's data, not more than the files of the database's shards."""
    _, report = influx
    before, after = report["server"]["storage_bytes_at_start"], report["server"]["storage_bytes"]
    assert 0 <= before < after
    # Compactions change the files after a run: the module's figure and the files are compared now.
    module = module_class("influxdb")(RunSpec(run_id="storage", task="insert", target="influx", module="influxdb", workers=1,
                                              extra={"url": URL, "token": "-", "org": "-", "bucket": f"{DATABASE}/autogen"}))
    module.connect()
    try:
        now = module.schema.storage_bytes()
    finally:
        module.close()
    shards = [one["tags"] for one in influxql("SHOW STATS FOR 'shard'") if one["tags"]["database"] == DATABASE]
    files = sum(path.stat().st_size for tags in shards for folder in (tags["path"], tags["walPath"])
                for path in Path(folder).rglob("*") if path.is_file())
    assert now is not None and 0 < now <= files
    assert any(f"diskBytes of the shards of database {DATABASE}" in note for note in report["notes"])  # the run says what it measured


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(influx):
    folder, _ = influx
    check_changed_rows_are_found(run(folder), change_usage_user(DATABASE, CPU_ONLY), CHANGED_TO)


def test_devops_measurements_as_tsbs_writes_them_and_the_devops_types_over_its_cpu(stories):
    folder, database = stories("devops", lambda run: assert_inserted(run("insert", *DEVOPS_STORY.insert), DEVOPS_STORY))
    steps = DEVOPS_STORY.data.steps
    for measurement in USE_CASES["tsbs-devops"].measurements:
        # Its series: a host's ten tags and the measurement's own; its fields, integers where TSBS's are int64.
        [keys] = influxql(f'SHOW TAG KEYS FROM "{measurement.name}"', database)
        assert sorted(key for [key] in keys["values"]) == sorted([*TAG_NAMES, *(name for name, _ in measurement.own_tags)])
        [fields] = influxql(f'SHOW FIELD KEYS FROM "{measurement.name}"', database)
        assert fields["values"] == sorted([name, "integer" if integer else "float"]
                                          for name, integer in zip(measurement.field_names, measurement.integer_fields))
        # Every field of every row: hosts x steps values each.
        [counted] = influxql(f'SELECT count(*) FROM "{measurement.name}"', database)
        assert counted["values"][0][1:] == [HOSTS * steps] * len(measurement.field_names)
    assert len(influxql('SHOW TAG VALUES FROM redis WITH KEY = "server"', database)[0]["values"]) == HOSTS
    assert_every_type_answers_ok(run(folder, database)("query", "-w", "2", "-r", "2"), story=DEVOPS_STORY)  # no --queries: the data's own
    check_changed_rows_are_found(run(folder, database), change_usage_user(database, DEVOPS_STORY), CHANGED_TO, story=DEVOPS_STORY)


# -- IoT -------------------------------------------------------------------------------------------
IOT_ANSWERED = tuple(name for name in TSBS_IOT_QUERIES if name not in dict(REFUSED))


def iot_story(stories) -> tuple[Path, str]:
    return stories("iot", lambda run: assert_iot_inserted(run("insert", *IOT_INSERT)))


def test_iot_as_tsbs_writes_it_with_its_nulls_and_the_iot_types_influxql_answers(stories):
    folder, database = iot_story(stories)
    for measurement in USE_CASES["tsbs-iot"].measurements:
        [keys] = influxql(f'SHOW TAG KEYS FROM "{measurement.name}"', database)
        assert sorted(key for [key] in keys["values"]) == sorted(TRUCK_TAGS)
        [fields] = influxql(f'SHOW FIELD KEYS FROM "{measurement.name}"', database)
        assert fields["values"] == sorted([[name, "float"] for name in ("load_capacity", "fuel_capacity", "nominal_fuel_consumption")]
                                          + [[name, "integer" if integer else "float"] for name, integer in zip(measurement.field_names, measurement.integer_fields)])
    # TSBS's nulls: a nameless point (its null name tag) in a series of its own, a field left out of some rows.
    [counted] = influxql('SELECT count("current_load") FROM "diagnostics"', database)
    [nameless] = influxql("""SELECT count("status") FROM "diagnostics" WHERE "name" = ''""", database)
    rows = IOT_DATA.rows_per_measurement()[1]
    assert 0 < nameless["values"][0][1] < rows * 0.01 and 0.02 < 1 - counted["values"][0][1] / rows < 0.05  # one of 3 fields of 9% of the rows
    assert_every_iot_type_answers_ok(run(folder, database)("query", "-w", "2", "-r", "2"), IOT_ANSWERED)  # no --queries: those it answers


def test_iot_types_influxql_cannot_answer_exactly_are_refused_in_one_line(tmp_path):
    """Before anything starts: no data is read (nor needed)."""
    for name, reason in REFUSED:
        result = run(tmp_path, f"{DATABASE}_refused")("query", "--queries", f"last-loc,{name}")
        assert result.code == 2 and result.stderr.strip() == f"error: module 'influxdb' does not answer TSBS's {name}: {reason}"


def write_row(database: str, measurement: str, row: dict, fields: str) -> None:
    """A point of the row's series and time (its tags, those it has): its `fields` replace the row's."""
    tags = ",".join(f"{name}={row[name]}" for name in TRUCK_TAGS if row[name] is not None)
    response = httpx.post(f"{URL}/write", params={"db": database, "precision": "ms"}, content=f"{measurement},{tags} {fields} {row['time']}", timeout=30)
    assert response.status_code == 204, response.text


def truck_rows(database: str, measurement: str, truck: int, where: str = "") -> list[dict]:
    """The truck's rows (its named points) in time order, as dicts of columns (None: null)."""
    [series] = influxql(f"""SELECT * FROM "{measurement}" WHERE "name" = 'truck_{truck}' {where}""", database)
    return [dict(zip(series["columns"], values)) for values in series["values"]]


def status_periods(database: str, truck: int) -> list[list[dict]]:
    """The truck's diagnostics rows per 10-minute period with rows, in time order."""
    periods: dict[int, list[dict]] = {}
    for row in truck_rows(database, "diagnostics", truck):
        periods.setdefault(row["time"] // TEN_MINUTES_MS, []).append(row)
    return [periods[period] for period in sorted(periods)]


def change_a_period_to_active(database: str, truck: int) -> None:
    """A status of a period whose mean status is below 1 (daily-activity counts its rows) set to 1000 (an integer, as TSBS writes it):
    the period is active, and no status becomes null or other than null (breakdown-frequency's)."""
    for rows in status_periods(database, truck):
        statuses = [row["status"] for row in rows if row["status"] is not None]
        if statuses and sum(statuses) < len(statuses):
            write_row(database, "diagnostics", next(row for row in rows if row["status"] is not None), "status=1000i")
            return
    pytest.fail(f"truck_{truck} has no period whose mean status is below 1")


def change_a_period_to_broken_down(database: str, truck: int) -> None:
    """breakdown-frequency: a period counts as broken down when none of its statuses is null. In a
    period with a null status (not broken down) after another such one, before a third (or last), and
    whose mean status is at least 1 (daily-activity does not count it), the nulls get status 5: one
    more turn into broken down for the truck's model, the period still active."""
    periods = status_periods(database, truck)
    running = [any(row["status"] is None for row in rows) for rows in periods]
    for at in range(1, len(periods)):
        statuses = [row["status"] for row in periods[at] if row["status"] is not None]
        if running[at - 1] and running[at] and (at + 1 == len(periods) or running[at + 1]) and statuses and sum(statuses) >= len(statuses):
            for row in periods[at]:
                if row["status"] is None:
                    write_row(database, "diagnostics", row, "status=5i")
            return
    pytest.fail(f"truck_{truck} has no period to change")


def test_iot_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(stories):
    """Every truck's newest reading gets a longitude beyond 180 and its newest diagnostics a fuel state
    below 0.1: last-loc, single-last-loc and low-fuel are WRONG (for a drawn fleet with trucks). truck_0's
    newest load far above any capacity (high-load for its fleet, avg-load), truck_1's first moving
    reading a fuel consumption of 1000 (avg-vs-projected-fuel-consumption), a period of truck_2 made
    active (daily-activity) and one of truck_3 broken down (breakdown-frequency): WRONG too; the types
    that read velocities `ok`."""
    folder, database = iot_story(stories)
    for measurement, field in (("readings", "longitude=200"), ("diagnostics", "fuel_state=0.05")):
        for truck in range(TRUCKS):
            [newest] = influxql(f"""SELECT * FROM "{measurement}" WHERE "name" = 'truck_{truck}' ORDER BY time DESC LIMIT 1""", database)
            write_row(database, measurement, dict(zip(newest["columns"], newest["values"][0])), field)
    write_row(database, "diagnostics", truck_rows(database, "diagnostics", 0, "ORDER BY time DESC LIMIT 1")[0], "current_load=1000000")
    write_row(database, "readings", truck_rows(database, "readings", 1, f"AND velocity > {DRIVING_VELOCITY} LIMIT 1")[0], "fuel_consumption=1000")
    change_a_period_to_active(database, 2)
    change_a_period_to_broken_down(database, 3)
    result = run(folder, database)("query", "--queries", ",".join(IOT_ANSWERED), "-w", "1", "-r", str(QUERY_RUNS), "--seed", str(QUERY_SEED))
    tags = truck_tags(IOT_DATA.seed, 0, TRUCKS)
    draws = ParameterDraws(QUERY_SEED, 0, iot_written(IOT_DATA))
    drawn = {name: [draws.draw(name, execution, IOT[name].parameters) for execution in range(QUERY_RUNS)] for name in IOT_ANSWERED}
    expected_wrong = {"single-last-loc", "avg-load", "avg-vs-projected-fuel-consumption", "daily-activity", "breakdown-frequency"}
    expected_wrong |= {name for name in ("last-loc", "low-fuel") if any(one["fleet"] in {truck[1] for truck in tags} for one in drawn[name])}
    expected_wrong |= {"high-load"} if any(one["fleet"] == tags[0][1] for one in drawn["high-load"]) else set()
    assert result.code == 1 and "wrong answer from query" in result.stderr and "Traceback" not in result.stderr, result.stderr
    answers = result.answers()
    assert {name for name, (verdict, _) in answers.items() if verdict == "wrong"} == expected_wrong, answers
    assert all(verdict == "ok" for name, (verdict, _) in answers.items() if name not in expected_wrong), answers
    assert "avg_load_percentage is " in answers["avg-load"][1] and "avg_fuel_consumption is " in answers["avg-vs-projected-fuel-consumption"][1]
