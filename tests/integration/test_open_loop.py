"""Open-loop runs (--rate) end to end through the CLI: a stall injected in the real PostgreSQL shows in
the response time and not in the service time; a rate easily held is achieved; --find-max-rate finds
the ceiling of a throttled target; bad option combinations are one-line errors."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from iotdb_bench.cli.results.tables import catalogue
from tests.conftest import dedicated_database, pg_connect
from tests.csv_checks import assert_round_trip, names, read_csv

DATABASE = "iotbench_openloop"
RATE = 2000  # events/s: 2 workers x 50 calls/s of 20 events, far below what PostgreSQL (and a busy CI machine) holds


@pytest.fixture
def pg(pg_env):
    return dedicated_database(pg_env, DATABASE)


def rate_run(cli, env, duration: str) -> dict:
    result = cli("insert", "--target", "postgresql-local", "--platform", "local", "-w", "2", "-r", "1", "--batch", "20",
                 "--rate", str(RATE), "--duration", duration, env=env)
    assert result.code == 0, result.stderr
    [run] = result.results()["runs"]
    report = run["report"]
    assert report["verification"]["ok"], report["verification"]
    return {"stdout": result.stdout, "folder": result.results_folders()[-1], **report["figures"]}


def hold_lock_mid_run(env: dict[str, str], after_s: float, hold_s: float, done: list[float]) -> None:
    """Once the run's first events are in, wait `after_s`, then hold an exclusive lock on the table for `hold_s`."""
    deadline = time.monotonic() + 60
    with pg_connect(env) as conn:
        while time.monotonic() < deadline:
            try:
                if conn.execute("SELECT count(*) FROM events").fetchone()[0] > 0:
                    break
            except psycopg.errors.UndefinedTable:
                pass
            time.sleep(0.05)
        time.sleep(after_s)
        with conn.transaction():
            conn.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
            began = time.monotonic()
            time.sleep(hold_s)
        done.append(time.monotonic() - began)


@pytest.mark.plots
@pytest.mark.postgres
@pytest.mark.slow
def test_stall_shows_in_response_time_not_service_time_and_an_easy_rate_is_achieved(cli, pg):
    def held(run: dict) -> bool:
        return run["rate"]["sustained"] and abs(run["throughput"] - RATE) <= 0.02 * RATE and run["response_latency"]["p99_ms"] < 500

    calm = rate_run(cli, pg, "5")
    if not held(calm):  # one hiccup of a loaded machine (CI's runs beside other suites) is not the tool's
        calm = rate_run(cli, pg, "5")
    # A rate PostgreSQL easily holds is achieved, on schedule, with no call held back long: within 2% on
    # a quiet machine; within 5% where the machine's other work slows the run's last call.
    assert calm["rate"]["sustained"] and abs(calm["throughput"] - RATE) <= 0.05 * RATE, calm["rate"]
    assert calm["response_latency"]["calls"] == calm["latency"]["calls"] == calm["events"] // 20
    assert calm["response_latency"]["p99_ms"] < 500

    with pg_connect(pg) as conn:  # so that the stall waits for the next run's own first events
        conn.execute("DROP TABLE events")
    held: list[float] = []
    stall = threading.Thread(target=hold_lock_mid_run, args=(pg, 1.0, 2.0, held))
    stall.start()
    stalled = rate_run(cli, pg, "5")
    stall.join()
    assert held and held[0] >= 2.0  # the lock was held during the run
    # Calls due during the stall waited for it: the response time shows it...
    assert stalled["response_latency"]["p99_ms"] >= 1500, stalled["response_latency"]
    assert stalled["rate"]["max_lag_s"] >= 1.5
    # ...while the calls themselves (one per worker was blocked, of ~500) stay near the calm run's.
    assert stalled["latency"]["p99_ms"] <= 5 * calm["latency"]["p99_ms"] + 20, (stalled["latency"], calm["latency"])
    assert stalled["latency"]["max_ms"] >= 1500  # the blocked calls themselves, kept in the histogram's tail
    # The schedule catches up after the stall, or the run says it could not.
    if stalled["rate"]["sustained"]:
        assert abs(stalled["throughput"] - RATE) <= 0.05 * RATE, stalled["rate"]
    else:
        assert f"could not sustain {RATE:,}/s" in " ".join(stalled["stdout"].split())
    assert (stalled["folder"] / "latency-throughput.png").is_file()
    page = (stalled["folder"] / "report.html").read_text()
    assert "Response time p99, ms" in page and "Sustained" in page and "Latency against throughput" in page


@pytest.mark.plots
@pytest.mark.slow
def test_find_max_rate_finds_a_throttled_targets_ceiling_within_10_percent(cli):
    # The null target with a 10 ms sleep per call: 2 workers x 10 events / 10 ms = 2,000 events/s at
    # most; what it really holds on this machine (sleeps overshoot) is measured closed-loop, same run.
    throttle = ["--target", "null", "--platform", "local", "-w", "2", "--batch", "10", "--extra-option", "call_delay_ms=10"]
    # Steps of 4 s: one may end 0.2 s behind its schedule and still be sustained (5%); with 2 s steps, a
    # machine loaded by a compile beside the tests (a cold CI run) delayed wake-ups past the 0.1 s of those.
    def closed_loop_ceiling() -> float:
        reference = cli("insert", *throttle, "-r", "1", "--duration", "4")
        assert reference.code == 0, reference.stderr
        ceiling = reference.results()["runs"][0]["report"]["figures"]["throughput"]
        assert 1300 < ceiling <= 2000
        return ceiling

    # Measured before and after the search: under the load of the suites beside it, what the sleeps
    # hold moves by a fifth from one minute to the next (a CI run measured 1,590 before a search that
    # held 1,938); the search must land within 10% of what the target held around it.
    before = closed_loop_ceiling()
    result = cli("insert", *throttle, "--find-max-rate", "--latency-p99", "200", "--duration", "4")
    assert result.code == 0, result.stderr
    document, folder = result.results(), result.results_folders()[-1]  # the newest: read before the next run makes another
    search = document["max_rate"]
    after = closed_loop_ceiling()
    assert search["finished"] and search["answer"] is not None
    assert any(abs(search["answer"] - ceiling) <= 0.10 * ceiling for ceiling in (before, after)), (search["answer"], before, after, search["steps"])
    # every rate tried is a real run with its own figures; the answer passed, the next rate up failed
    runs = document["runs"]
    assert [run["report"]["spec"]["rate"] for run in runs] == [step["target_rate"] for step in search["steps"]]
    assert any(step["target_rate"] == search["answer"] and step["passed"] for step in search["steps"])
    assert any(not step["passed"] and step["target_rate"] > search["answer"] for step in search["steps"])
    assert "Highest sustainable rate:" in result.stdout
    assert (folder / "latency-throughput.png").is_file()
    page = (folder / "report.html").read_text()
    assert "Highest sustainable rate (--find-max-rate)" in page and f"{search['answer']:,.0f} events/s" in page
    header, rows = read_csv(folder / "rate-steps.csv")  # the table's rows for machines
    assert header == names((catalogue.RATE_STEPS,)) and [row["number"] for row in rows] == [str(n) for n in range(1, len(search["steps"]) + 1)]
    assert_round_trip(header[1:], rows, search["steps"])


@pytest.mark.parametrize(("options", "message"), [
    (["--rate", "1000", "--find-max-rate", "--latency-p99", "50"], "--rate and --find-max-rate"),
    (["--latency-p99", "50"], "--latency-p99 applies to --find-max-rate"),
    (["--max-rate", "5000"], "--max-rate applies to --find-max-rate"),
    (["--find-max-rate"], "--find-max-rate needs --latency-p99"),
    (["--find-max-rate", "--latency-p99", "50", "-w", "1,2"], "exactly one worker count"),
    (["--find-max-rate", "--latency-p99", "50", "-w", "2", "--num-inserts", "100"], "leave out --num-inserts"),
    (["--rate", "0"], "--rate"),
    (["--rate", "-5"], "--rate"),
    (["--find-max-rate", "--latency-p99", "0"], "--latency-p99"),
])
def test_bad_rate_options_are_one_line_errors(cli, options, message):
    result = cli("insert", "--target", "null", "--platform", "local", *options)
    assert result.code == 2, (result.stdout, result.stderr)
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr and not (result.cwd / "results").exists()
