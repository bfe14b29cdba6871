"""The tool beside TSBS's own binaries on the same server: TSBS's loader (`tsbs_load_<db>`, reading
`tsbs_generate_data`'s cpu-only file, generated before the clock as TSBS loads pre-generated data)
against the tool's `insert --schema tsbs-cpu` (generating its rows as it runs) at the same scale,
interval, time range and batch size, 1 and 2 workers, alternating rounds (tool, TSBS, TSBS, tool, ...),
the database cleaned before each round; then TSBS's query runner (`tsbs_run_queries_<db>`, on queries
of `tsbs_generate_queries` at the same scale, time range and seed) against the tool's `query` for the
DevOps types both offer, 1 worker, the same executions, alternating, both on the same rows: the tool's
data, whose layout is each database's TSBS target's (ClickHouse and Cassandra: TSBS's runner reads TSBS's
own rows of the same size, the tool's created_at being milliseconds where TSBS's queries need a
DateTime, and the tool writing only the series_bigint of TSBS's five Cassandra tables).

    python benchmarks/tsbs_side_by_side.py [--databases timescaledb,questdb,clickhouse,influxdb,victoriametrics,cassandra]
        [--workers 1,2] [--rounds 3] [--hosts 100] [--time-range 6h] [--batch 1000]
        [--queries single-groupby-1-1-1,...] [--query-time-range 13h] [--executions 50] [--drawn-executions 1000]
        [--no-queries] [--json]

Load figures are each side's own: TSBS's loader prints its rows/s and points/s (metrics/s) from its
workers' start to their end; the tool's are its timed phase's (the report's Inserts/s and Values/s).
Query figures are per execution, in ms: TSBS's median and p95 (its --results-file: HDR histogram
quantiles) and mean (its summary line), the tool's of its report (p50_s, avg_s, p95_s). The tool's time is of sending
the query and receiving the whole answer through the database's driver, as TSBS's runners time it; drawing
the parameters before it, and decoding the answer into Python values (psycopg's rows, InfluxQL's JSON) and
checking it after it, are outside it (TSBS decodes and checks nothing). high-cpu-1, whose rows depend on the
host drawn, runs --drawn-executions times (DRAWN_WORK).

Goal: ours / TSBS >= 1.0 in points/s at each worker count; median query latency ours / TSBS <= 1.05.
Needs TSBS's binaries (../shared/vendor/tsbs/build.sh) and the servers of scripts/servers/.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _common import REPO_ROOT, emit_json, median, print_table, run_tool

from iotdb_bench.simulator.durations import duration_ms, timestamp_ms
from iotdb_bench.simulator.errors import described

LOAD_GOAL, QUERY_GOAL = 1.0, 1.05
START = "2016-01-01T00:00:00Z"
POINTS_PER_ROW = 10  # TSBS's cpu-only: ten fields a row
TSBS_DATABASE = "tsbs_side"  # TSBS's loaders write here; the tool writes its own target's tables
PGPASSWORD = os.environ.get("PGPASSWORD", "postgres")
QUERIES = ("single-groupby-1-1-1", "single-groupby-5-1-12", "cpu-max-all-1", "double-groupby-1", "high-cpu-1", "lastpoint",
           "groupby-orderby-limit")
# Types whose work depends on the host drawn: high-cpu-1 returns a host's rows above 90% usage, none for
# about 40% of the hosts and hundreds for others. Each side draws its own hosts, so at 50 executions a
# median lands among the empty answers or the full ones by chance (ratios 0.6-2.7 between runs); more
# executions make both sides' draws alike.
DRAWN_WORK = ("high-cpu-1",)


def tsbs_bin() -> Path:
    """The folder of TSBS's binaries: TSBS_BIN (default /var/cache/tsbs-37fced7/bin) when it holds them,
    else what the vendored build script ($IOTBENCH_SHARED/vendor/tsbs/build.sh) builds and prints."""
    built = Path(os.environ.get("TSBS_BIN", "/var/cache/tsbs-37fced7/bin"))
    if (built / "tsbs_load_timescaledb").exists():
        return built
    script = Path(os.environ.get("IOTBENCH_SHARED", REPO_ROOT.parent / "shared")) / "vendor" / "tsbs" / "build.sh"
    if not script.exists():
        raise SystemExit(f"TSBS is not built in {built} and its build script is not at {script} (set TSBS_BIN or IOTBENCH_SHARED)")
    done = subprocess.run([str(script)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"TSBS's build failed: {done.stderr.strip()[-300:]}")
    return Path(done.stdout.strip().splitlines()[-1])


# -- cleaning: each side's data dropped before every round --------------------------------------


def _postgres(port: int, statements: list[str], dbname: str = "postgres") -> None:
    import psycopg

    with psycopg.connect(host="127.0.0.1", port=port, user="postgres", password=PGPASSWORD, dbname=dbname, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


def _http(url: str, data: bytes | None = None) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=120) as response:
        return response.read()


def _clickhouse(statement: str) -> None:
    _http("http://127.0.0.1:18123/", statement.encode())


def _cassandra(statements: list[str]) -> None:
    from cassandra.cluster import Cluster

    cluster = Cluster(["127.0.0.1"], port=9042)
    try:
        session = cluster.connect()
        for statement in statements:
            session.execute(statement, timeout=120)
    finally:
        cluster.shutdown()


def _pg_clean(port: int) -> Callable[[bool], None]:
    return lambda ready=True: _postgres(port, [f"DROP DATABASE IF EXISTS {TSBS_DATABASE} WITH (FORCE)", "DROP DATABASE IF EXISTS tsbs_side_tool WITH (FORCE)",
                                               *(["CREATE DATABASE tsbs_side_tool"] if ready else [])])


def _questdb_clean(ready: bool = True) -> None:
    """TSBS's table and the tool's are both `cpu`. Lines still on their way over TCP can create it
    again after the drop (and TSBS's loader refuses to start on an existing `cpu`): dropped until gone."""
    for _ in range(40):
        _http("http://127.0.0.1:9000/exec?" + urllib.parse.urlencode({"query": "DROP TABLE IF EXISTS cpu"}))
        time.sleep(0.5)
        tables = json.loads(_http("http://127.0.0.1:9000/exec?" + urllib.parse.urlencode({"query": "SHOW TABLES"})))
        if not any("cpu" in row for row in tables.get("dataset", [])):
            return
    raise SystemExit("QuestDB's cpu table comes back after every drop")


def _clickhouse_clean(ready: bool = True) -> None:
    for statement in (f"DROP DATABASE IF EXISTS {TSBS_DATABASE}", "DROP TABLE IF EXISTS iotbench.cpu", "DROP TABLE IF EXISTS iotbench.tags"):
        _clickhouse(statement)


def _influx_clean(ready: bool = True) -> None:
    for statement in (f"DROP DATABASE {TSBS_DATABASE}", "DROP DATABASE tsbs_side_tool", *(["CREATE DATABASE tsbs_side_tool"] if ready else [])):
        _http("http://127.0.0.1:8086/query", urllib.parse.urlencode({"q": statement}).encode())


def _victoriametrics_clean(ready: bool = True) -> None:  # both write the same series (cpu_usage_user{hostname=...}, ...)
    _http("http://127.0.0.1:8428/api/v1/admin/tsdb/delete_series", urllib.parse.urlencode({"match[]": '{__name__=~"cpu_.+"}'}).encode())


def _cassandra_clean(ready: bool = True) -> None:
    _cassandra([f"DROP KEYSPACE IF EXISTS {TSBS_DATABASE}", "DROP TABLE IF EXISTS iotbench.series_bigint"])


# -- the databases both support -------------------------------------------------------------------


@dataclass(frozen=True)
class Database:
    name: str
    target: str  # the tool's
    data_format: str  # tsbs_generate_data --format
    loader: list[str]  # tsbs_load_<...> and its connection options (file, workers and batch added)
    runner: list[str]  # tsbs_run_queries_<...> pointed at the tool's data
    query_format: str
    clean: Callable[..., None]  # drops both sides' data; ready=False: also what the tool's target needs to exist (nothing left behind)
    tool_env: dict[str, str] = field(default_factory=dict)
    query_options: tuple[str, ...] = ()  # tsbs_generate_queries options of this database
    unsupported: tuple[str, ...] = ()  # query types TSBS's generator has not for this database
    items_per_row: int = 1  # what TSBS's --batch-size counts: rows, or (Cassandra) points
    tool_options: tuple[str, ...] = ()  # of the tool's insert
    runner_reads_tsbs_data: bool = False  # the tool's layout differs from TSBS's: the runner reads TSBS's own rows


_PG_LOAD = ["--host=127.0.0.1", "--user=postgres", f"--pass={PGPASSWORD}", f"--db-name={TSBS_DATABASE}", "--chunk-time=12h"]
_PG_RUN = ["--hosts=127.0.0.1", "--user=postgres", f"--pass={PGPASSWORD}", "--db-name=tsbs_side_tool"]
# TSBS's ClickHouse loader and runner dial tcp://HOST:9000; the local server listens on 19000 and QuestDB
# holds 9000. "HOST:19000?x=" makes the driver's URL tcp://127.0.0.1:19000?x=:9000?username=...&database=...
_CLICKHOUSE_HOST = "127.0.0.1:19000?x="
# TSBS's QuestDB generator panics on cpu-max-all (its MaxAllCPU lacks the duration), and this QuestDB
# refuses TSBS's double-groupby text (SAMPLE BY with GROUP BY)
_QUESTDB_UNSUPPORTED = ("cpu-max-all-1", "cpu-max-all-8", "double-groupby-1", "double-groupby-5", "double-groupby-all")
_QUESTDB_LOAD = ["tsbs_load_questdb", "--ilp-bind-to=127.0.0.1:9009", "--url=http://127.0.0.1:9000/"]
_QUESTDB_RUN = ["tsbs_run_queries_questdb", "--urls=http://127.0.0.1:9000"]
_VM_UNSUPPORTED = ("high-cpu-1", "high-cpu-all", "lastpoint", "groupby-orderby-limit")

DATABASES = {
    "timescaledb": Database("timescaledb", "timescaledb-local", "timescaledb", ["tsbs_load_timescaledb", "--port=5433", *_PG_LOAD],
                            ["tsbs_run_queries_timescaledb", "--port=5433", *_PG_RUN], "timescaledb", _pg_clean(5433),
                            {"TIMESCALEDB_DATABASE": "tsbs_side_tool"}),
    "postgres": Database("postgres", "postgresql-local", "timescaledb", ["tsbs_load_timescaledb", "--port=5432", "--use-hypertable=false", *_PG_LOAD],
                         ["tsbs_run_queries_timescaledb", "--port=5432", *_PG_RUN], "timescaledb", _pg_clean(5432),
                         {"PGDATABASE": "tsbs_side_tool"}, ("--timescale-use-time-bucket=false",)),
    # TSBS's QuestDB loader writes ILP over TCP, unacknowledged: the tool too (transport=tcp), the same way
    "questdb": Database("questdb", "questdb-local", "questdb", _QUESTDB_LOAD, _QUESTDB_RUN, "questdb", _questdb_clean,
                        unsupported=_QUESTDB_UNSUPPORTED, tool_options=("--extra-option", "transport=tcp")),
    # the tool's default, ILP over HTTP, each batch a request QuestDB answers once the rows are in its WAL,
    # against the same TSBS loader: what acknowledging every 1,000 rows costs
    "questdb-http": Database("questdb-http", "questdb-local", "questdb", _QUESTDB_LOAD, _QUESTDB_RUN, "questdb", _questdb_clean,
                             unsupported=_QUESTDB_UNSUPPORTED),
    "clickhouse": Database("clickhouse", "clickhouse-local", "clickhouse", ["tsbs_load_clickhouse", f"--host={_CLICKHOUSE_HOST}", f"--db-name={TSBS_DATABASE}"],
                           # the tool's created_at is Int64 milliseconds (18.16 has no DateTime64): TSBS's queries need its DateTime
                           ["tsbs_run_queries_clickhouse", f"--hosts={_CLICKHOUSE_HOST}", f"--db-name={TSBS_DATABASE}"], "clickhouse", _clickhouse_clean,
                           runner_reads_tsbs_data=True),
    "influxdb": Database("influxdb", "influxdb-local", "influx", ["tsbs_load_influx", "--urls=http://127.0.0.1:8086", f"--db-name={TSBS_DATABASE}"],
                         ["tsbs_run_queries_influx", "--urls=http://127.0.0.1:8086", "--db-name=tsbs_side_tool"], "influx", _influx_clean,
                         {"INFLUXDB_DB": "tsbs_side_tool"}),
    "victoriametrics": Database("victoriametrics", "victoriametrics-local", "influx", ["tsbs_load_victoriametrics", "--urls=http://127.0.0.1:8428/write"],
                                ["tsbs_run_queries_victoriametrics", "--urls=http://127.0.0.1:8428"], "victoriametrics", _victoriametrics_clean,
                                unsupported=_VM_UNSUPPORTED),
    "cassandra": Database("cassandra", "cassandra-local", "cassandra", ["tsbs_load_cassandra", "--hosts=127.0.0.1:9042", f"--db-name={TSBS_DATABASE}"],
                          # TSBS's runner needs all five of TSBS's series_* tables; the tool writes series_bigint alone
                          ["tsbs_run_queries_cassandra", "--host=127.0.0.1:9042", f"--db-name={TSBS_DATABASE}", "--aggregation-plan=client"],
                          "cassandra", _cassandra_clean, items_per_row=POINTS_PER_ROW, runner_reads_tsbs_data=True),
}


# -- one side of a round ------------------------------------------------------------------------------


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(command: list[str], what: str) -> tuple[str, float]:
    """A TSBS binary's output and CPU seconds; fails loudly with its own last lines."""
    cpu = _children_cpu()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:  # a Go panic's first line says why; its stack does not
        said = (done.stderr or done.stdout).strip()
        raise SystemExit(f"{what} failed: {next((line for line in said.splitlines() if line.startswith('panic:')), said[-400:])}")
    return done.stdout + done.stderr, _children_cpu() - cpu


def _end(time_range: str) -> str:
    """TSBS's --timestamp-end: START plus the time range, read as the tool reads it."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime((timestamp_ms(START) + duration_ms(time_range)) / 1000))


def generate_data(bin_: Path, database: Database, args, time_range: str, path: Path) -> None:
    with path.open("w") as out:
        done = subprocess.run([str(bin_ / "tsbs_generate_data"), "--use-case=cpu-only", f"--scale={args.hosts}", f"--seed={args.seed}",
                               f"--log-interval={args.interval}", f"--timestamp-start={START}", f"--timestamp-end={_end(time_range)}",
                               f"--format={database.data_format}"], stdout=out, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"tsbs_generate_data failed: {done.stderr.strip()[-300:]}")


_LOADED = re.compile(r"loaded (\d+) (metrics|rows) in ([\d.]+)sec")


def tsbs_load(bin_: Path, database: Database, workers: int, batch: int, path: Path, alone: bool = True) -> dict:
    """`alone`: with no other data in the database, before and after (a load round)."""
    if alone:
        database.clean()
    command = [str(bin_ / database.loader[0]), *database.loader[1:], f"--file={path}", f"--workers={workers}",
               f"--batch-size={batch * database.items_per_row}"]
    output, cpu = _run(command, database.loader[0])
    loaded = {kind: (int(count), float(seconds)) for count, kind, seconds in _LOADED.findall(output)}
    if "metrics" not in loaded:
        raise SystemExit(f"{database.loader[0]} printed no summary: {output.strip()[-300:]}")
    points, seconds = loaded["metrics"]
    if alone:
        database.clean()  # its data is not there during the tool's rounds
    return {"rows_per_s": points / POINTS_PER_ROW / seconds, "points_per_s": points / seconds, "points": points,
            "cpu_s_per_million_points": cpu / points * 1e6}


def tool_load(database: Database, workers: int, batch: int, args, time_range: str) -> dict:
    database.clean()
    run = run_tool(["insert", "--target", database.target, "--schema", "tsbs-cpu", "--devices", str(args.hosts), "--interval", args.interval,
                    "--time-range", time_range, "--seed", str(args.seed), "-w", str(workers), "--batch", str(batch), "-r", "1",
                    *database.tool_options], env=database.tool_env)
    figures, row = run.report.figures, run.document.inserts[0]
    points = figures.events * POINTS_PER_ROW
    return {"rows_per_s": figures.throughput, "points_per_s": figures.throughput * POINTS_PER_ROW, "points": points,
            "cpu_s_per_million_points": sum(w.cpu_s for w in run.report.workers) / points * 1e6,
            "count_check": row.count_check}


def measure_loads(bin_: Path, database: Database, args, folder: Path) -> list[dict]:
    path = folder / f"cpu-{database.data_format}.txt"
    generate_data(bin_, database, args, args.time_range, path)
    results = []
    for workers in (int(w) for w in args.workers.split(",")):
        sides: dict[str, list[dict]] = {"tool": [], "tsbs": []}
        for round_ in range(args.rounds):
            for side in (("tool", "tsbs") if round_ % 2 == 0 else ("tsbs", "tool")):
                sides[side].append(tool_load(database, workers, args.batch, args, args.time_range) if side == "tool"
                                   else tsbs_load(bin_, database, workers, args.batch, path))
        if any(t["points"] != s["points"] for t, s in zip(sides["tool"], sides["tsbs"])):
            raise SystemExit(f"{database.name}: the tool wrote {sides['tool'][0]['points']:,} points, TSBS {sides['tsbs'][0]['points']:,}")
        ratios = [t["points_per_s"] / s["points_per_s"] for t, s in zip(sides["tool"], sides["tsbs"])]
        results.append({"database": database.name, "workers": workers, "points": sides["tool"][0]["points"], "ratios": ratios,
                        **{f"{side}_{key}": median([m[key] for m in sides[side]])
                           for side in sides for key in ("rows_per_s", "points_per_s", "cpu_s_per_million_points")},
                        "rounds": sides})
        print(f"{database.name} load w={workers}: ours/TSBS {median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f})", flush=True)
    path.unlink()
    return results


_SUMMARY = re.compile(r"mean:\s*([\d.]+)ms")


def tsbs_queries(bin_: Path, database: Database, query_type: str, path: Path, folder: Path) -> dict:
    results = folder / "tsbs-results.json"
    output, _ = _run([str(bin_ / database.runner[0]), *database.runner[1:], f"--file={path}", "--workers=1", f"--results-file={results}"],
                     database.runner[0])
    quantiles = json.loads(results.read_text())["Totals"]["overallQuantiles"]["all_queries"]
    return {"p50_ms": quantiles["q50"], "mean_ms": float(_SUMMARY.findall(output)[-1]), "p95_ms": quantiles["q95"]}  # the last summary line: all queries


def executions_of(query_type: str, args) -> int:
    return args.drawn_executions if query_type in DRAWN_WORK else args.executions


def tool_queries(database: Database, query_types: list[str], args) -> dict[str, dict]:
    """One tool run for the types of each number of executions."""
    measured = {}
    for executions in sorted({executions_of(q, args) for q in query_types}):
        names = [q for q in query_types if executions_of(q, args) == executions]
        run = run_tool(["query", "--target", database.target, "--queries", ",".join(names), "-w", "1", "-r", str(executions),
                        "--seed", str(args.seed)], env=database.tool_env)
        for name, figures in run.report.queries.items():
            if figures.errors or figures.answer != "ok":
                raise SystemExit(f"{database.name}: the tool's {name}: {figures.errors or figures.answer_detail}")
            measured[name] = {"p50_ms": figures.p50_s * 1e3, "mean_ms": figures.avg_s * 1e3, "p95_ms": figures.p95_s * 1e3}
    return measured


def measure_queries(bin_: Path, database: Database, args, folder: Path) -> list[dict]:
    """The tool loads the data once; both runners then read the same rows, alternating."""
    database.clean()
    run_tool(["insert", "--target", database.target, "--schema", "tsbs-cpu", "--devices", str(args.hosts), "--interval", args.interval,
              "--time-range", args.query_time_range, "--seed", str(args.seed), "-w", "2", "--batch", str(args.batch), "-r", "1"],
             env=database.tool_env)
    if database.runner_reads_tsbs_data:  # the same size, written by TSBS's loader
        generate_data(bin_, database, args, args.query_time_range, folder / "cpu-queries.txt")
        tsbs_load(bin_, database, 2, args.batch, folder / "cpu-queries.txt", alone=False)
        (folder / "cpu-queries.txt").unlink()
    query_types = [q for q in args.queries.split(",") if q not in database.unsupported]
    files = {}
    for query_type in query_types:
        files[query_type] = path = folder / f"queries-{query_type}.txt"
        with path.open("w") as out:
            done = subprocess.run([str(bin_ / "tsbs_generate_queries"), "--use-case=cpu-only", f"--scale={args.hosts}", f"--seed={args.seed}",
                                   f"--timestamp-start={START}", f"--timestamp-end={_end(args.query_time_range)}",
                                   f"--queries={executions_of(query_type, args)}", f"--query-type={query_type}", f"--format={database.query_format}",
                                   *database.query_options], stdout=out, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise SystemExit(f"tsbs_generate_queries {query_type}: {done.stderr.strip()[-300:]}")
    sides: dict[str, list[dict[str, dict]]] = {"tool": [], "tsbs": []}
    for round_ in range(args.rounds):
        for side in (("tool", "tsbs") if round_ % 2 == 0 else ("tsbs", "tool")):
            sides[side].append(tool_queries(database, query_types, args) if side == "tool"
                               else {q: tsbs_queries(bin_, database, q, files[q], folder) for q in query_types})
    results = []
    for query_type in query_types:
        tool = [r[query_type] for r in sides["tool"]]
        tsbs = [r[query_type] for r in sides["tsbs"]]
        row = {"database": database.name, "query": query_type, "executions": executions_of(query_type, args)}
        for key in ("p50_ms", "mean_ms", "p95_ms"):
            row[f"tool_{key}"], row[f"tsbs_{key}"] = median([t[key] for t in tool]), median([s[key] for s in tsbs])
            row[f"{key}_ratios"] = [t[key] / s[key] for t, s in zip(tool, tsbs)]
        results.append(row)
        print(f"{database.name} {query_type}: median ours/TSBS {median(row['p50_ms_ratios']):.3f}", flush=True)
    return results


def _verdict(rows: list, met: bool) -> str:
    return "not measured" if not rows else "met" if met else "NOT met"


def _spread(values: list[float]) -> str:
    return f"{median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


class OneLineErrors(argparse.ArgumentParser):
    def error(self, message: str):  # bad input: one line and exit 2, without the usage block
        self.exit(2, f"{self.prog}: {message}\n")


def main() -> None:
    parser = OneLineErrors(description=__doc__.split("\n\n")[0])
    parser.add_argument("--databases", default="timescaledb,questdb,clickhouse,influxdb,victoriametrics,cassandra",
                        help=f"comma-separated, of: {','.join(DATABASES)}")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hosts", type=int, default=100, help="TSBS's --scale, the tool's --devices")
    parser.add_argument("--interval", default="10s")
    parser.add_argument("--time-range", default="6h", help="of the load rounds (from 2016-01-01T00:00:00Z)")
    parser.add_argument("--batch", type=int, default=1000, help="rows per batch, both sides")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", default=",".join(QUERIES), help="DevOps query types (those TSBS has for a database)")
    parser.add_argument("--query-time-range", default="13h", help="of the data queried (longer than the 12-hour windows)")
    parser.add_argument("--executions", type=int, default=50, help="of each query type, per round and side")
    parser.add_argument("--drawn-executions", type=int, default=1000, help=f"of the types whose work depends on the host drawn ({', '.join(DRAWN_WORK)})")
    parser.add_argument("--no-queries", action="store_true")
    parser.add_argument("--no-loads", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    unknown = [d for d in args.databases.split(",") if d not in DATABASES]
    if unknown:
        parser.error(f"unknown database {unknown[0]} (of {', '.join(DATABASES)})")
    if args.rounds < 1 or args.executions < 1 or args.drawn_executions < 1 or args.hosts < 1 or args.batch < 1:
        parser.error("--rounds, --executions, --drawn-executions, --hosts and --batch must be at least 1")
    for option in ("interval", "time_range", "query_time_range"):
        try:
            duration_ms(getattr(args, option))
        except ValueError as problem:
            parser.error(f"--{option.replace('_', '-')}: {problem}")

    bin_ = tsbs_bin()
    loads, queries, failed, load_average = [], [], {}, [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="tsbs-side-by-side-") as temporary:
        for name in args.databases.split(","):
            try:
                loads += [] if args.no_loads else measure_loads(bin_, DATABASES[name], args, Path(temporary))
                queries += [] if args.no_queries else measure_queries(bin_, DATABASES[name], args, Path(temporary))
            except (SystemExit, Exception) as stop:  # one database's failure does not lose the others' figures
                failed[name] = str(stop.code) if isinstance(stop, SystemExit) else described(stop)
                print(f"{name}: FAILED: {failed[name]}", flush=True)
            finally:
                try:
                    DATABASES[name].clean(ready=False)
                except Exception as error:  # a server that is down has nothing to clean
                    print(f"{name}: not cleaned: {described(error)}", flush=True)
            load_average.append(os.getloadavg()[0])

    if loads:
        print_table(f"Loads, {args.hosts} hosts x {args.interval} x {args.time_range}, batch {args.batch} rows: medians of {args.rounds} alternating rounds",
                    ["Database", "Workers", "Points", "Ours rows/s", "TSBS rows/s", "Ours points/s", "TSBS points/s",
                     "Ours / TSBS (range)", "Ours CPU s/M points", "TSBS CPU s/M points"],
                    [[r["database"], str(r["workers"]), f"{r['points']:,}", f"{r['tool_rows_per_s']:,.0f}", f"{r['tsbs_rows_per_s']:,.0f}",
                      f"{r['tool_points_per_s']:,.0f}", f"{r['tsbs_points_per_s']:,.0f}", _spread(r["ratios"]),
                      f"{r['tool_cpu_s_per_million_points']:.2f}", f"{r['tsbs_cpu_s_per_million_points']:.2f}"] for r in loads])
    if queries:
        print_table(f"Queries, 1 worker, {args.executions} executions a round ({', '.join(DRAWN_WORK)}: {args.drawn_executions}), "
                    f"{args.hosts} hosts x {args.query_time_range}: "
                    f"medians of {args.rounds} alternating rounds, ms",
                    ["Database", "Query", "Ours median", "TSBS median", "Ours / TSBS median (range)", "Ours / TSBS mean (range)",
                     "Ours p95", "TSBS p95", "Ours / TSBS p95 (range)"],
                    [[r["database"], r["query"], f"{r['tool_p50_ms']:.2f}", f"{r['tsbs_p50_ms']:.2f}", _spread(r["p50_ms_ratios"]),
                      _spread(r["mean_ms_ratios"]), f"{r['tool_p95_ms']:.2f}", f"{r['tsbs_p95_ms']:.2f}", _spread(r["p95_ms_ratios"])]
                     for r in queries])
    for name, why in failed.items():
        print(f"{name}: not measured: {why}")
    load_met = all(median(r["ratios"]) >= LOAD_GOAL for r in loads)
    query_met = all(median(r["p50_ms_ratios"]) <= QUERY_GOAL for r in queries)
    print(f"Goals: load ours/TSBS >= {LOAD_GOAL}: {_verdict(loads, load_met)}; query median ours/TSBS <= {QUERY_GOAL}: "
          f"{_verdict(queries, query_met)}; 1-minute load average {min(load_average):.2f}-{max(load_average):.2f}")
    if args.json:
        # null where a part was not measured (--no-loads, --no-queries): a goal nothing measured is not met
        emit_json({"benchmark": "tsbs_side_by_side", "options": vars(args), "loads": loads, "queries": queries, "failed": failed,
                   "load_average_1m": load_average, "goal_met": load_met and query_met and not failed if loads and queries else None})
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
