"""Every module reports its database server's version as the server itself reports it, checked
against the real servers of scripts/servers/ asked directly (ArangoDB and Azure Data Explorer, which
cannot run here, are checked in their wire-fake tests)."""

from __future__ import annotations

import os
import sqlite3

import httpx
import pytest

from iotdb_bench.simulator.modules import DatabaseModule, module_class
from iotdb_bench.simulator.spec import RunSpec
from tests.conftest import postgres_env


def module(name: str, task: str = "insert", **connection) -> DatabaseModule:
    spec = RunSpec(run_id="versions", task=task, target=name, module=name, workers=1, batch=100, connection=connection)
    built = module_class(name)(spec)
    built.connect()
    return built


def test_sqlite_reports_the_library_it_runs(tmp_path):
    assert module("sqlite", path=str(tmp_path / "db.sqlite3")).schema.server_version() == f"SQLite {sqlite3.sqlite_version}"


def test_null_says_there_is_no_server():
    assert module("null").schema.server_version().startswith("none")


@pytest.mark.postgres
@pytest.mark.parametrize("name", ["postgres", "timescaledb"])
def test_postgres_family_reports_version_and_leaves_no_transaction_open(pg_env, name):
    import psycopg

    env = postgres_env()
    connection_string = f"host={env['PGHOST']} port={env['PGPORT']} dbname={env['PGDATABASE']} user={env['PGUSER']}"
    with psycopg.connect(connection_string, password=env["PGPASSWORD"]) as direct:
        version = direct.execute("SELECT version()").fetchone()[0]
        extension = direct.execute("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'").fetchone()
    found = module(name, connection_string=connection_string, password=env["PGPASSWORD"])
    reported = found.schema.server_version()
    assert reported.startswith(version) and version.startswith("PostgreSQL ")
    if name == "timescaledb":
        assert reported.endswith(f"; TimescaleDB {extension[0]}" if extension else "; TimescaleDB extension not installed")
    # Batch mode runs without autocommit: reading the version must not leave a transaction behind
    # (setup switches autocommit on, which psycopg refuses inside one).
    assert found.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    found.conn.autocommit = True
    found.close()


@pytest.mark.mysql
def test_mysql_reports_version():
    import pymysql

    options = {"host": os.environ.get("MYSQL_HOST", "127.0.0.1"), "port": int(os.environ.get("MYSQL_PORT", "3306")),
               "user": os.environ.get("MYSQL_USER", "bench"), "database": os.environ.get("MYSQL_DATABASE", "bench")}
    password = os.environ.get("MYSQL_PASSWORD", "bench")
    with pymysql.connect(password=password, **options) as direct, direct.cursor() as cursor:
        cursor.execute("SELECT VERSION()")
        version = cursor.fetchone()[0]
    assert module("mysql", password=password, **options).schema.server_version() == version


@pytest.mark.cassandra
def test_cassandra_reports_release_version():
    from cassandra.cluster import Cluster

    host, port = os.environ.get("CASSANDRA_HOST", "127.0.0.1"), int(os.environ.get("CASSANDRA_PORT", "9042"))
    cluster = Cluster([host], port=port, connect_timeout=5)
    try:
        release = cluster.connect().execute("SELECT release_version FROM system.local").one()[0]
    finally:
        cluster.shutdown()
    found = module("cassandra", contact_points=host, port=port, keyspace="iotbench_versions", replication_factor=1)
    try:
        assert found.schema.server_version() == f"Cassandra {release}"
    finally:
        found.close()


@pytest.mark.elasticsearch
@pytest.mark.parametrize("url, product", [(os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:9200"), "Elasticsearch"),
                                          (os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9201"), "Opensearch")])
def test_search_servers_report_product_and_version(url, product):
    nodes = httpx.get(f"{url}/_nodes/_local", timeout=10).json()["nodes"]
    [version] = {node["version"] for node in nodes.values()}
    assert module("elasticsearch", hosts=url).schema.server_version() == f"{product} {version}"


@pytest.mark.influxdb
def test_influxdb_reports_the_ping_header():
    url = os.environ.get("INFLUXDB_URL", "http://127.0.0.1:8086")
    version = httpx.get(f"{url}/ping", timeout=10).headers["X-Influxdb-Version"]
    assert module("influxdb", url=url, token="-", org="-", bucket="versions/autogen").schema.server_version() == f"InfluxDB {version}"


@pytest.mark.questdb
def test_questdb_reports_its_build():
    host = os.environ.get("QUESTDB_HOST", "127.0.0.1")
    http_port = int(os.environ.get("QUESTDB_HTTP_PORT", "9000"))
    answer = httpx.get(f"http://{host}:{http_port}/exec", params={"query": "SELECT build()"}, timeout=10).json()
    build = answer["dataset"][0][0]
    reported = module("questdb", host=host, http_port=http_port, pg_port=int(os.environ.get("QUESTDB_PG_PORT", "8812"))).schema.server_version()
    assert reported.startswith("QuestDB ") and build.endswith(reported)


@pytest.mark.clickhouse
def test_clickhouse_reports_version():
    host = os.environ.get("CLICKHOUSE_HOST", "127.0.0.1")
    http_port = int(os.environ.get("CLICKHOUSE_HTTP_PORT", "18123"))
    version = httpx.get(f"http://{host}:{http_port}/", params={"query": "SELECT version()"}, timeout=10).text.strip()
    found = module("clickhouse", host=host, port=int(os.environ.get("CLICKHOUSE_PORT", "19000")))
    assert found.schema.server_version() == f"ClickHouse {version}"


@pytest.mark.iotdb
def test_iotdb_reports_show_version():
    from iotdb.Session import Session

    host, port = os.environ.get("IOTDB_HOST", "127.0.0.1"), int(os.environ.get("IOTDB_PORT", "6667"))
    session = Session(host, port, "root", "root")
    session.open(False)
    try:
        with session.execute_query_statement("SHOW VERSION") as data:
            version = str(data.todf().iloc[0, 0])
    finally:
        session.close()
    reported = module("iotdb", host=host, port=port).schema.server_version()
    assert reported.startswith(f"IoTDB {version}") and version[0].isdigit()


@pytest.mark.victoriametrics
def test_victoriametrics_reports_its_version_label():
    url = os.environ.get("VICTORIAMETRICS_URL", "http://127.0.0.1:8428")
    line = next(line for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines() if line.startswith("vm_app_version{"))
    label = line.split('version="', 1)[1].split('"', 1)[0]
    reported = module("victoriametrics", url=url).schema.server_version()
    assert reported == (f"VictoriaMetrics {label}" if label else "VictoriaMetrics (this build does not report its version)")
