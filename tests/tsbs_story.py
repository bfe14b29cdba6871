"""TSBS's cpu-only data and DevOps query types end to end, shared by every database's suite.

One insert per database (20 hosts, 13 hours of 10 s steps: every 12-hour window is random), its rows
and points against TSBS's generator's, every one of the 15 query types answered and checked `ok`;
then two rows changed behind the tool's back, and exactly the query types whose executions read them
answer `WRONG`: the test draws the executions' parameters as the tool does (same seed, worker and
execution numbers) to know which those are. Each suite says how to run the CLI on its target and how
to change a row in its database.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from iotdb_bench.simulator.queries.parameters import ParameterDraws
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS, MINUTE_MS, written
from iotdb_bench.simulator.spec import TSBS_DEVOPS_QUERIES, TSBS_START_MS
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from tests.conftest import CliResult, pg_connect

HOSTS, HOURS = 20, 13
INSERT = ["--schema", "tsbs-cpu", "--devices", str(HOSTS), "--time-range", f"{HOURS}h", "-w", "2", "-r", "1", "--batch", "1000"]
# tsbs_generate_data --use-case=cpu-only --seed=123 --scale=20 --log-interval=10s --timestamp-start=2016-01-01T00:00:00Z
#   --timestamp-end=2016-01-01T13:00:00Z --format=timescaledb | awk -F, '/^cpu,[0-9]/{rows++; points+=NF-2} END{print rows, points}'
TSBS_ROWS, TSBS_POINTS = 93_600, 936_000
DATA = TsbsData(shape="tsbs-cpu", seed=1, hosts=HOSTS, start_ms=TSBS_START_MS, interval_ms=10_000, steps=HOURS * 360)
# Rows whose usage_user the test changes to a value no walk reaches (above 100, above high-cpu's 90):
# host_0's newest (lastpoint reads it) and host_1's at 06:30 (inside every 12-hour window).
CHANGED = ((0, DATA.steps - 1), (1, 2340))
CHANGED_VALUE = 100.5
QUERY_SEED, QUERY_RUNS = 7, 2
# Rows per query type that the parameters do not change (a non-aligned 12-hour window spans 13 hours).
ROWS = {"lastpoint": HOSTS, "groupby-orderby-limit": 5, "double-groupby-1": HOSTS * 13, "double-groupby-5": HOSTS * 13,
        "double-groupby-all": HOSTS * 13, "single-groupby-1-1-1": 61, "single-groupby-1-1-12": 721}


def assert_inserted(result: CliResult) -> None:
    """The insert wrote TSBS's rows, and its points are TSBS's."""
    [report] = result.verified_reports([TSBS_ROWS])
    figures = report["figures"]
    assert (figures["events"], figures["events"] * figures["values_per_event"]) == (TSBS_ROWS, TSBS_POINTS)
    assert "record saved: 20 hosts, 93,600 rows" in report["expected_record"]


def reachable_or_fail(url: str, name: str, script: str) -> None:
    """Fail (never skip) when the HTTP server a suite needs does not answer `url` with success."""
    try:
        httpx.get(url, timeout=10).raise_for_status()
    except httpx.HTTPError as error:
        pytest.fail(f"{name} is not reachable at {url} ({error}); start it with scripts/servers/{script}")


def insert_story(run: Callable[..., CliResult]) -> dict:
    """Insert the story's data with `run("insert", ...)`, check it (assert_inserted), and return the run's report."""
    inserted = run("insert", *INSERT)
    assert_inserted(inserted)
    return inserted.results()["runs"][0]["report"]


def assert_every_type_answers_ok(result: CliResult, queries: tuple[str, ...] = TSBS_DEVOPS_QUERIES) -> None:
    """`queries`: the types the database answers (those of `--queries`), every one `ok`."""
    rows = result.query_rows()  # every execution of every type checked `ok`, no error
    assert tuple(rows) == queries
    assert {name: rows[name] for name in ROWS if name in queries} == {name: count for name, count in ROWS.items() if name in queries}
    assert result.results()["queries"][0]["executions"] == 2 * 2  # -w 2 -r 2: a cold and a warm execution per worker


def reads(name: str, parameters, host: int, step: int) -> bool:
    """Whether an execution with these parameters reads the row (so a value above any other changes its answer)."""
    query, time = DEVOPS[name], DATA.time_of(step)
    window = parameters["window"] if query.window_ms else None
    if query.family == "lastpoint":
        return step == DATA.steps - 1
    if query.family == "groupby-orderby-limit":  # the 5 latest minutes before the window's end, every host
        latest = DATA.time_of(DATA.steps_between(DATA.start_ms, window.end_ms)[-1]) // MINUTE_MS * MINUTE_MS
        return time < window.end_ms and time // MINUTE_MS * MINUTE_MS > latest - 5 * MINUTE_MS
    hosts = parameters["hosts"] if query.hosts else None
    return (hosts is None or f"host_{host}" in hosts) and window.start_ms <= time < window.end_ms


def check_changed_rows_are_found(run: Callable[..., CliResult], change: Callable[[int, int, float], None], value: float = CHANGED_VALUE,
                                 queries: tuple[str, ...] = TSBS_DEVOPS_QUERIES) -> None:
    """Change the CHANGED rows' usage_user to `value` with `change(host, step, value)` (a whole number where the
    database stores whole numbers); the query types among `queries` that read one of them are WRONG, naming
    the row, and only they."""
    for host, step in CHANGED:
        change(host, step, value)
    result = run("query", "--queries", ",".join(queries), "-w", "1", "-r", str(QUERY_RUNS), "--seed", str(QUERY_SEED))
    draws = ParameterDraws(QUERY_SEED, 0, written(DATA))
    expected_wrong = {name for name in queries for execution in range(QUERY_RUNS)
                      if any(reads(name, draws.draw(name, execution, DEVOPS[name].parameters), host, step) for host, step in CHANGED)}
    assert {"lastpoint", "double-groupby-1", "double-groupby-5", "double-groupby-all", "high-cpu-all"} & set(queries) <= expected_wrong
    assert result.code == 1 and "wrong answer from query" in result.stderr and "Traceback" not in result.stderr
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


def check_pg_changed_rows_are_found(run: Callable[..., CliResult], env: dict[str, str], database: str) -> None:
    """check_changed_rows_are_found on PostgreSQL or TimescaleDB (the same layout, timestamptz times)."""
    check_changed_rows_are_found(run, lambda host, step, value: pg_rows(
        env, database, "UPDATE cpu SET usage_user = %s WHERE tags_id = %s AND time = to_timestamp(%s / 1000.0)", value, host + 1, DATA.time_of(step)))
