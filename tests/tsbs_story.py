"""TSBS's three use cases end to end, shared by every database's suite.

cpu-only and devops (10 hosts, 13 hours: every 12-hour window is random; devops at 30 s steps, at 60 s
where a database writes slowly): one insert, its rows and points against TSBS's generator's, every one
of the 15 DevOps query types (they read cpu) answered and checked `ok`; then two cpu rows changed
behind the tool's back, and exactly the query types whose executions read them answer `WRONG`: the
test draws the executions' parameters as the tool does (same seed, worker and execution numbers) to
know which those are.

iot (20 trucks, 26 hours: two days; six trucks where the database writes slowly): the rows TSBS's generator
writes (its count depends on its seed: the tool's among TSBS's own), `query` without --queries running
the 13 IoT types, all `ok`;
then three rows changed (a truck's newest load and location, a moving truck's fuel consumption) and
exactly the types that read them `WRONG`.

Each suite says how to run the CLI on its target and how to change a row in its database.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from iotdb_bench.simulator.queries.parameters import ParameterDraws
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS, MINUTE_MS, written
from iotdb_bench.simulator.queries.tsbs_iot import IOT
from iotdb_bench.simulator.queries.tsbs_iot import written as iot_written
from iotdb_bench.simulator.spec import TSBS_DEVOPS_QUERIES, TSBS_IOT_QUERIES, TSBS_START_MS
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from iotdb_bench.simulator.workload.tsbs.iot import truck_tags
from tests.conftest import CliResult, dedicated_database, pg_connect, run_cli
from tests.unit.test_tsbs_iot import TSBS_IOT_20_26H, within_tsbs_spread

HOSTS, HOURS = 10, 13  # TSBS's --scale: at least 8, the most hosts a DevOps type draws


@dataclass(frozen=True)
class Story:
    """One use case's insert (its options, what it writes, TSBS's counts of the same) and the rows the
    test changes: (host, step) pairs of the cpu table, whose usage_user gets a value no walk reaches."""

    shape: str
    insert: list[str]
    data: TsbsData
    tsbs_rows: int
    tsbs_points: int
    changed: tuple[tuple[int, int], ...]

    @property
    def tables(self) -> int:
        return len(self.data.use_case.measurements)


def _devops_story(shape: str, interval_s: int, tsbs_rows: int, tsbs_points: int) -> Story:
    steps = HOURS * 3600 // interval_s
    data = TsbsData(shape=shape, seed=1, hosts=HOSTS, start_ms=TSBS_START_MS, interval_ms=interval_s * 1000, steps=steps)
    # host_0's newest (lastpoint reads it) and host_1's at 06:30 (inside every 12-hour window).
    return Story(shape, ["--schema", shape, "--devices", str(HOSTS), "--time-range", f"{HOURS}h", "--interval", f"{interval_s}s", "-w", "2", "-r", "1",
                         "--batch", "1000"], data, tsbs_rows, tsbs_points, ((0, steps - 1), (1, 6 * 3600 // interval_s + 30 * 60 // interval_s)))


# tsbs_generate_data --use-case=cpu-only --seed=123 --scale=10 --log-interval=10s --timestamp-start=2016-01-01T00:00:00Z
#   --timestamp-end=2016-01-01T13:00:00Z --format=timescaledb | awk -F, '/^cpu,[0-9]/{rows++; points+=NF-2} END{print rows, points}'
CPU_ONLY = _devops_story("tsbs-cpu", 10, 46_800, 468_000)
# The same with --use-case=devops --log-interval=30s, counting '/^[a-z]+,[0-9]/': nine measurements, 101 fields.
DEVOPS_STORY = _devops_story("tsbs-devops", 30, 140_400, 1_575_600)
# The same with --log-interval=60s: half the points (the same hosts, hours, series and windows), for a database
# that stores each value as a point of its own (Cassandra: the 30 s story's 1.6 million took over a minute in CI).
DEVOPS_STORY_60S = _devops_story("tsbs-devops", 60, 70_200, 787_800)
# The cpu-only story's, for the suites that name them.
DATA, INSERT, TSBS_ROWS, TSBS_POINTS, CHANGED = CPU_ONLY.data, CPU_ONLY.insert, CPU_ONLY.tsbs_rows, CPU_ONLY.tsbs_points, CPU_ONLY.changed
CHANGED_VALUE = 100.5
QUERY_SEED, QUERY_RUNS = 7, 2
# Rows per query type that the parameters do not change (a non-aligned 12-hour window spans 13 hours;
# at 10 s steps an hour's window has rows in 61 minutes, at 30 s in 60 or 61).
ROWS = {"lastpoint": HOSTS, "groupby-orderby-limit": 5, "double-groupby-1": HOSTS * 13, "double-groupby-5": HOSTS * 13,
        "double-groupby-all": HOSTS * 13}
MINUTES = {"single-groupby-1-1-1": 61, "single-groupby-1-1-12": 721}


def assert_inserted(result: CliResult, story: Story = CPU_ONLY) -> None:
    """The insert wrote TSBS's rows, and its points are TSBS's."""
    [report] = result.verified_reports([story.tsbs_rows])
    figures = report["figures"]
    assert (figures["events"], round(figures["events"] * figures["values_per_event"])) == (story.tsbs_rows, story.tsbs_points)
    assert f"record saved: {HOSTS} hosts, {story.tsbs_rows:,} rows" in report["expected_record"]


def reachable_or_fail(url: str, name: str, script: str) -> None:
    """Fail (never skip) when the HTTP server a suite needs does not answer `url` with success."""
    try:
        httpx.get(url, timeout=10).raise_for_status()
    except httpx.HTTPError as error:
        pytest.fail(f"{name} is not reachable at {url} ({error}); start it with scripts/servers/{script}")


def insert_story(run: Callable[..., CliResult]) -> dict:
    """Insert the cpu-only story's data with `run("insert", ...)`, check it (assert_inserted), and return the run's report."""
    inserted = run("insert", *INSERT)
    assert_inserted(inserted)
    return inserted.results()["runs"][0]["report"]


def assert_every_type_answers_ok(result: CliResult, queries: tuple[str, ...] = TSBS_DEVOPS_QUERIES, story: Story = CPU_ONLY) -> None:
    """`queries`: the types the database answers (those of `--queries`), every one `ok`."""
    rows = result.query_rows()  # every execution of every type checked `ok`, no error
    assert tuple(rows) == queries
    known = {name: count for name, count in {**ROWS, **(MINUTES if story.data.interval_ms == 10_000 else {})}.items() if name in queries}
    assert {name: rows[name] for name in known} == known
    assert result.results()["queries"][0]["executions"] == 2 * 2  # -w 2 -r 2: a cold and a warm execution per worker


def reads(story: Story, name: str, parameters, host: int, step: int) -> bool:
    """Whether an execution with these parameters reads the row (so a value above any other changes its answer)."""
    data = story.data
    query, time = DEVOPS[name], data.time_of(step)
    window = parameters["window"] if query.window_ms else None
    if query.family == "lastpoint":
        return step == data.steps - 1
    if query.family == "groupby-orderby-limit":  # the 5 latest minutes before the window's end, every host
        latest = data.time_of(data.steps_between(data.start_ms, window.end_ms)[-1]) // MINUTE_MS * MINUTE_MS
        return time < window.end_ms and time // MINUTE_MS * MINUTE_MS > latest - 5 * MINUTE_MS
    hosts = parameters["hosts"] if query.hosts else None
    return (hosts is None or f"host_{host}" in hosts) and window.start_ms <= time < window.end_ms


def check_changed_rows_are_found(run: Callable[..., CliResult], change: Callable[[int, int, float], None], value: float = CHANGED_VALUE,
                                 queries: tuple[str, ...] = TSBS_DEVOPS_QUERIES, story: Story = CPU_ONLY) -> None:
    """Change the story's rows' usage_user to `value` with `change(host, step, value)` (a whole number where
    the database stores whole numbers); the query types among `queries` that read one of them are WRONG,
    naming the row, and only they."""
    for host, step in story.changed:
        change(host, step, value)
    result = run("query", "--queries", ",".join(queries), "-w", "1", "-r", str(QUERY_RUNS), "--seed", str(QUERY_SEED))
    draws = ParameterDraws(QUERY_SEED, 0, written(story.data))
    expected_wrong = {name for name in queries for execution in range(QUERY_RUNS)
                      if any(reads(story, name, draws.draw(name, execution, DEVOPS[name].parameters), host, step) for host, step in story.changed)}
    assert {"lastpoint", "double-groupby-1", "double-groupby-5", "double-groupby-all", "high-cpu-all"} & set(queries) <= expected_wrong
    assert result.code == 1 and "wrong answer from query" in result.stderr and "Traceback" not in result.stderr, result.stderr
    answers = result.answers()
    assert {name for name, (verdict, _) in answers.items() if verdict == "wrong"} == expected_wrong, answers
    assert all(verdict == "ok" for name, (verdict, _) in answers.items() if name not in expected_wrong), answers
    if "lastpoint" in queries:
        assert answers["lastpoint"][1] == f"host host_0: usage_user is {value}, expected " + answers["lastpoint"][1].rsplit(" ", 1)[-1]
    assert "hour 2016-01-01T06:00:00.000Z (1451628000000) host host_1: mean usage_user is " in answers["double-groupby-1"][1]


def pg_rows(env: dict[str, str], database: str, statement: str, *params) -> list[tuple]:
    """The rows of a statement on the PostgreSQL family's server (none for a change)."""
    with pg_connect(env, database) as conn:
        cursor = conn.execute(statement, params or None)
        return cursor.fetchall() if cursor.description else []


def check_pg_changed_rows_are_found(run: Callable[..., CliResult], env: dict[str, str], database: str, story: Story = CPU_ONLY) -> None:
    """check_changed_rows_are_found on PostgreSQL or TimescaleDB (the same layout, timestamptz times)."""
    check_changed_rows_are_found(run, lambda host, step, value: pg_rows(
        env, database, "UPDATE cpu SET usage_user = %s WHERE tags_id = %s AND time = to_timestamp(%s / 1000.0)", value, host + 1,
        story.data.time_of(step)), story=story)


# -- IoT ---------------------------------------------------------------------------------------------
TRUCKS, IOT_HOURS = 20, 26


def iot_story(trucks: int) -> tuple[TsbsData, list[str]]:
    """The IoT story's data and insert options with this many trucks (a suite whose database writes slowly takes
    fewer: the 26 hours stay, and with six trucks or more every fleet has one)."""
    data = TsbsData(shape="tsbs-iot", seed=1, hosts=trucks, start_ms=TSBS_START_MS, interval_ms=10_000, steps=IOT_HOURS * 360)
    return data, ["--schema", "tsbs-iot", "--devices", str(trucks), "--time-range", f"{IOT_HOURS}h", "-w", "2", "-r", "1", "--batch", "1000"]


IOT_DATA, IOT_INSERT = iot_story(TRUCKS)
# The rows the IoT story changes, in SQL any of the databases runs (SQLite's times are integers, the
# others' timestamps: both have max and min): truck_0's newest load (far above any capacity), truck_1's
# newest longitude (beyond 180), truck_2's first fuel consumption at a velocity above 1.
IOT_CHANGES = (
    "UPDATE diagnostics SET current_load = 1000000 WHERE tags_id = 1 AND time = (SELECT max(time) FROM diagnostics WHERE tags_id = 1)",
    "UPDATE readings SET longitude = 200 WHERE tags_id = 2 AND time = (SELECT max(time) FROM readings WHERE tags_id = 2)",
    "UPDATE readings SET fuel_consumption = 1000 WHERE tags_id = 3 AND time = (SELECT min(time) FROM readings WHERE tags_id = 3 AND velocity > 1)",
)
# A smaller IoT story, for the servers that take the story's 337,000 rows slowly (a document store's
# indexing): 3 trucks (in 2 fleets), 20 hours (the fewest rows with a driving session).
SMALL_IOT_HOURS = 20
SMALL_IOT_DATA = TsbsData(shape="tsbs-iot", seed=1, hosts=3, start_ms=TSBS_START_MS, interval_ms=10_000, steps=SMALL_IOT_HOURS * 360)
SMALL_IOT_INSERT = ["--schema", "tsbs-iot", "--devices", str(SMALL_IOT_DATA.hosts), "--time-range", f"{SMALL_IOT_HOURS}h", "-w", "2", "-r", "1"]
SMALL_IOT_QUERY_SEED = 22  # its executions of high-load, last-loc and single-last-loc on the small story read a changed row


def iot_rows(data: TsbsData = IOT_DATA) -> dict[str, int]:
    """IoT types whose rows the test knows whatever the parameters: a row per fleet of the trucks, per truck (each drives)."""
    return {"avg-vs-projected-fuel-consumption": len({tags[1] for tags in truck_tags(data.seed, 0, data.hosts)}),
            "avg-daily-driving-duration": data.hosts}


def assert_iot_inserted(result: CliResult, data: TsbsData = IOT_DATA) -> None:
    """The insert wrote the rows the tool says TSBS's generator writes for its seed, among TSBS's own
    counts (those of the story's 20 trucks and 26 hours: TSBS's counts of other sizes are not kept)."""
    rows, points = data.rows, data.points
    [report] = result.verified_reports([rows])
    figures = report["figures"]
    assert (figures["events"], round(figures["events"] * figures["values_per_event"])) == (rows, points)
    if data == IOT_DATA:
        assert within_tsbs_spread(rows, [r + d for r, d, _ in TSBS_IOT_20_26H], TRUCKS * IOT_DATA.steps * 2)
    assert f"record saved: {data.hosts} trucks, {rows:,} rows" in report["expected_record"]


def assert_every_iot_type_answers_ok(result: CliResult, queries: tuple[str, ...] = TSBS_IOT_QUERIES, data: TsbsData = IOT_DATA) -> None:
    """`query` without --queries on IoT data: the IoT types the database answers (`queries`: all 13 by
    default), every execution `ok`."""
    rows = result.query_rows()
    assert tuple(rows) == queries
    known = {name: count for name, count in iot_rows(data).items() if name in queries}
    assert {name: rows[name] for name in known} == known
    assert all(rows[name] for name in ("last-loc", "single-last-loc", "avg-daily-driving-session", "avg-load", "daily-activity", "breakdown-frequency")
               if name in queries)


def iot_readers_of_the_changes(executions: int, data: TsbsData = IOT_DATA, seed: int = QUERY_SEED) -> set[tuple[str, int]]:
    """(type, execution) of the executions of worker 0 under `seed` that read a row IOT_CHANGES
    changes: avg-load and avg-vs-projected-fuel-consumption read every row, high-load and last-loc the
    newest rows of the fleet they draw, single-last-loc those of the truck it draws."""
    fleets = [tags[1] for tags in truck_tags(data.seed, 0, 3)]
    draws = ParameterDraws(seed, 0, iot_written(data))
    readers = {("avg-load", execution) for execution in range(executions)} | {("avg-vs-projected-fuel-consumption", execution) for execution in range(executions)}
    reads = {"high-load": lambda parameters: parameters["fleet"] == fleets[0], "last-loc": lambda parameters: parameters["fleet"] == fleets[1],
             "single-last-loc": lambda parameters: parameters["trucks"] == ("truck_1",)}
    return readers | {(name, execution) for name, read in reads.items() for execution in range(executions)
                      if read(draws.draw(name, execution, IOT[name].parameters))}


def check_iot_changed_rows_are_found(run: Callable[..., CliResult], execute: Callable[[str], None]) -> None:
    """Make IOT_CHANGES with `execute`, then check_iot_changes_found."""
    for statement in IOT_CHANGES:
        execute(statement)
    check_iot_changes_found(run)


def check_iot_changes_found(run: Callable[..., CliResult], data: TsbsData = IOT_DATA, seed: int = QUERY_SEED) -> None:
    """Once IOT_CHANGES' rows are changed (in SQL that runs there, or as the database can): the types
    that read a changed row are WRONG, and only they: avg-load and avg-vs-projected-fuel-consumption read
    every row, high-load and last-loc the newest rows of the fleet they draw, single-last-loc those of the
    truck it draws."""
    result = run("query", "--queries", "tsbs-iot", "-w", "1", "-r", str(QUERY_RUNS), "--seed", str(seed))
    expected_wrong = {name for name, _ in iot_readers_of_the_changes(QUERY_RUNS, data, seed)}
    assert result.code == 1 and "wrong answer from query" in result.stderr and "Traceback" not in result.stderr, result.stderr
    answers = result.answers()
    assert {name for name, (verdict, _) in answers.items() if verdict == "wrong"} == expected_wrong, answers
    assert "avg_load_percentage is " in answers["avg-load"][1] and "avg_fuel_consumption is " in answers["avg-vs-projected-fuel-consumption"][1]


# -- the stories on the PostgreSQL family ------------------------------------------------------------
INSERTS: dict[str, tuple[list[str], Callable[[CliResult], None]]] = {
    "cpu": (CPU_ONLY.insert, assert_inserted), "devops": (DEVOPS_STORY.insert, lambda result: assert_inserted(result, DEVOPS_STORY)),
    "iot": (IOT_INSERT, assert_iot_inserted)}


@dataclass
class PgStory:
    """One story's data on a PostgreSQL-family server: its database, and how to run the CLI and SQL there."""

    env: dict[str, str]
    database: str
    run: Callable[..., CliResult]

    def sql(self, statement: str, *params) -> list[tuple]:
        return pg_rows(self.env, self.database, statement, *params)


@dataclass
class PgStories:
    """The stories on a PostgreSQL-family server through one of the shipped targets: each in a database
    of its own (iotbench_tsbs, iotbench_tsbs_devops, iotbench_tsbs_iot), inserted once, on first use.
    `target_env`: the environment that points the target at a database."""

    env: dict[str, str]
    target: str
    scratch: Callable[[str], Path]
    target_env: Callable[[dict[str, str], str], dict[str, str]]
    made: dict[str, PgStory] = field(default_factory=dict)

    def __call__(self, name: str) -> PgStory:
        if name not in self.made:
            database = "iotbench_tsbs" if name == "cpu" else f"iotbench_tsbs_{name}"
            env = dedicated_database(self.env, database)
            folder, cli_env = self.scratch(database), self.target_env(env, database)
            args, check = INSERTS[name]
            check(run_cli(["insert", "--target", self.target, *args], folder, env=cli_env))
            self.made[name] = PgStory(env, database, lambda *args: run_cli([args[0], "--target", self.target, *args[1:]], folder, env=cli_env))
        return self.made[name]
