"""The seeds at their own sizes on this machine (docs/scale.md), each measured by scale_run.py (wall time,
peak memory of every process of the tool, the results folder's size, the checks' times), then its data
dropped (100 million rows are several GB). The presets run as shipped: only their size, their targets
and the tables' database are given here, so a changed preset is measured as it then is.

    python benchmarks/seed_sizes.py seed-004-postgresql       # 100m-c: --set num-inserts=100000000, device-first; then the six queries
    python benchmarks/seed_sizes.py seed-004-sqlite
    python benchmarks/seed_sizes.py seed-003-local            # --scale 0.1, the preset's 50 workers, local servers
    python benchmarks/seed_sizes.py checks-100m-timescaledb   # also questdb, clickhouse: insert 100M, query
    options: --output DIR (kept; default: a temporary folder, removed) --json-dir DIR --keep-data
             --cell-time-limit SECONDS (a study's cells end there with the figures of what they did)
             --set KEY=VALUE (a study's own --set, repeatable) --targets A,B (a study's targets, in place of the scenario's)

PostgreSQL and TimescaleDB get a database of their own (iotbench_scale, made when missing), ClickHouse
too; QuestDB has one namespace (its `events` table). The servers: scripts/servers/start-all.sh.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from _common import REPO_ROOT

DATABASE = "iotbench_scale"
ROWS_100M = "100000000"
# The full scan at 100m-c: the preset's time limit (meant for time-first tables at 4m-c) lifted.
SEED_004 = ["study", "seed-004", "--set", f"workloads.insert.insert.num-inserts={ROWS_100M}", "--set", "workloads.scan.scan.time-limit=0"]
# Seed 003 on this machine's servers: the preset's targets are its Kubernetes ones.
SEED_003_LOCAL = "timescaledb-local,questdb-local,influxdb-local,iotdb-local"
SCENARIOS: dict[str, list[list[str]]] = {
    # Then the six queries on its 100 million rows, every answer checked (PostgreSQL's checks at 100M).
    "seed-004-postgresql": [[*SEED_004, "--targets", "postgresql-device-first"], ["query", "--target", "postgresql-local", "-w", "1", "-r", "1"]],
    "seed-004-sqlite": [[*SEED_004, "--targets", "sqlite-device-first"]],
    "seed-003-local": [["study", "seed-003", "--scale", "0.1", "--targets", SEED_003_LOCAL]],
    **{f"checks-100m-{name}": [["insert", "--target", f"{name}-local", "-w", "2", "-r", "1", "--num-inserts", "50000000", "--batch", "10000"],
                               ["query", "--target", f"{name}-local", "-w", "1", "-r", "1"]]
       for name in ("timescaledb", "questdb", "clickhouse")},
}


def config(folder: Path) -> Path:
    """The shipped config with ClickHouse's database set to one of the measurement's own."""
    found = yaml.safe_load((REPO_ROOT / "iotdb_bench" / "config.yaml").read_text())
    found["targets"]["clickhouse-local"]["database"] = DATABASE
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(found, sort_keys=False))
    return path


def prepare_databases() -> None:
    import psycopg

    for port in (5432, 5433):
        with psycopg.connect(host="localhost", port=port, user="postgres", password=os.environ.get("PGPASSWORD", ""), dbname="postgres",
                             autocommit=True) as db:
            if not db.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone():
                db.execute(f"CREATE DATABASE {DATABASE}")
    with psycopg.connect(host="localhost", port=5433, user="postgres", password=os.environ.get("PGPASSWORD", ""), dbname=DATABASE,
                         autocommit=True) as db:
        db.execute("CREATE EXTENSION IF NOT EXISTS timescaledb")


def drop_data(commands: str, workdir: Path) -> None:
    """What the commands wrote: the measurement's databases, SQLite's file, ClickHouse's database, QuestDB's
    table (InfluxDB's and IoTDB's data of seed 003's other targets stay: the next insert's --clean drops them)."""
    import psycopg

    for port in (5432, 5433):
        with psycopg.connect(host="localhost", port=port, user="postgres", password=os.environ.get("PGPASSWORD", ""), dbname="postgres",
                             autocommit=True) as db:
            db.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
    for leftover in workdir.glob("iotdb-bench.sqlite3*"):
        leftover.unlink()
    if "clickhouse" in commands:
        subprocess.run(["clickhouse-client", "--port", "19000", "--query", f"DROP DATABASE IF EXISTS {DATABASE}"], check=False)
    if "questdb" in commands:
        import urllib.parse
        import urllib.request

        urllib.request.urlopen("http://127.0.0.1:9000/exec?query=" + urllib.parse.quote("DROP TABLE IF EXISTS events"), timeout=60).read()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--output", type=Path, help="where the results go (kept); default: a temporary folder, removed")
    parser.add_argument("--json-dir", type=Path, help="scale_run.py's figures, one JSON file per command")
    parser.add_argument("--keep-data", action="store_true", help="leave the databases and files the runs wrote")
    parser.add_argument("--cell-time-limit", type=float, help="a study's cells end at this many seconds (the study's time_limit)")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE", help="passed to a study's --set")
    parser.add_argument("--targets", help="a study's targets, comma-separated, in place of the scenario's")
    options = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="iotdb-bench-seed-"))
    output = options.output or workdir / "results"
    env = {**os.environ, "PGDATABASE": DATABASE, "TIMESCALEDB_DATABASE": DATABASE}
    code, ran = 0, []
    try:
        prepare_databases()
        configured = config(workdir)
        for index, args in enumerate(SCENARIOS[options.scenario]):
            if args[0] == "study" and options.targets:
                args = [*args[:args.index("--targets") + 1], options.targets, *args[args.index("--targets") + 2:]]
            if args[0] == "study":
                sets = [*options.sets, *([f"time_limit={options.cell_time_limit:g}"] if options.cell_time_limit else [])]
                args = [*args, *(word for value in sets for word in ("--set", value))]
            measure = [sys.executable, str(REPO_ROOT / "benchmarks" / "scale_run.py")]
            if options.json_dir:
                options.json_dir.mkdir(parents=True, exist_ok=True)
                measure += ["--json", str(options.json_dir / f"{options.scenario}-{index + 1}.json")]
            command = [*measure, "--", *args, "--config", str(configured), "--output", str(output)]
            ran += args
            print("$", " ".join(command[2:]), flush=True)
            code = subprocess.run(command, cwd=workdir, env=env).returncode or code
    finally:
        try:
            if not options.keep_data:
                drop_data(" ".join(ran), workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
