"""The targets of the contract suite: for each, how to reach its real server (or its named wire
fake), a marker (so `pytest -m postgres` runs the PostgreSQL contract too), and how to make it
unreachable. Everything else the contract checks is derived from the module's capabilities.

A newcomer's database gets one entry here; the contract suite (test_contract.py) then says what is
missing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import dedicated_database, pg_env_or_fail, timescaledb_env

# Namespaces of the contract's own (databases, keyspaces), so it shares no table with a module suite.
NAMESPACE = "iotbench_contract"


@dataclass(frozen=True)
class ContractTarget:
    name: str
    module: str
    marker: str | None  # the pytest marker of its server (None: nothing to start, e.g. embedded)
    # The target's options in config.yaml, given the test folder and the fake's address (wire fakes).
    options: Callable[[Path, str], dict]
    # Extra options that point it at nothing, given a port nobody listens on; and the words the one
    # line must hold (formatted with `port`). None: there is no server to miss.
    unreachable: Callable[[int], dict] | None
    unreachable_says: str = "127.0.0.1:{port}"
    # Settings the CLI's processes need (passwords...), given the test folder.
    env: Callable[[], dict[str, str]] = dict
    # A wire fake served for the test (a context manager yielding its address); None: a real server.
    serve: Callable[[], contextlib.AbstractContextManager[str]] | None = None
    # Options every run of the contract adds (e.g. to keep the runs small).
    extra: dict = field(default_factory=dict)
    # The test of its own suite that tells the whole read-side story of tests/read_side.py (scan and
    # answers right, then a value changed and a reading deleted behind the tool's back, each named in
    # the answers, the scan and the report): the contract's shorter story (one event added) is then
    # not told again. A newcomer's module has none until its suite does.
    read_side_story: str | None = None


@contextlib.contextmanager
def _mongodb_wire_fake() -> Iterator[str]:
    from tests.modules.mongodb_wire_fake import FakeMongoState, serving

    with serving(FakeMongoState()) as address:
        yield address


@contextlib.contextmanager
def _adx_wire_fake() -> Iterator[str]:
    from tests.modules.adx_wire_fake import FakeKustoHandler, FakeKustoState
    from tests.modules.fake_http_service import serving

    state = FakeKustoState()
    with serving(FakeKustoHandler, state) as state.base_url:
        yield state.base_url


@contextlib.contextmanager
def _arangodb_wire_fake() -> Iterator[str]:
    from tests.modules.arangodb_wire_fake import FakeArangoHandler, FakeArangoState
    from tests.modules.fake_http_service import serving

    with serving(FakeArangoHandler, FakeArangoState()) as url:
        yield url


def _arango_env() -> dict[str, str]:
    from tests.modules.arangodb_wire_fake import PASSWORD

    return {"ARANGO_PASSWORD": PASSWORD}


def _postgres_env() -> dict[str, str]:
    return dedicated_database(pg_env_or_fail(), NAMESPACE)


def _timescaledb_env() -> dict[str, str]:
    return dedicated_database(pg_env_or_fail(timescaledb_env(), "timescaledb"), NAMESPACE)


def _postgres(_: Path, __: str) -> dict:
    return {"connection_string": "host=${PGHOST} port=${PGPORT} dbname=${PGDATABASE} user=${PGUSER}", "password": "${PGPASSWORD}"}


HOST = "127.0.0.1"
env = os.environ.get

def _story(path: str, test: str = "test_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back") -> str:
    return f"tests/{path}::{test}"


TARGETS = [
    ContractTarget("sqlite", "sqlite", None, lambda folder, _: {"path": str(folder / "contract.sqlite3")},
                   unreachable=lambda port: {"path": "/nonexistent-folder/contract.sqlite3"},
                   unreachable_says="cannot open SQLite database /nonexistent-folder/contract.sqlite3",
                   read_side_story=_story("integration/test_read_side_sqlite.py")),
    ContractTarget("null", "null", None, lambda folder, _: {}, unreachable=None),
    ContractTarget("postgres", "postgres", "postgres", _postgres, env=_postgres_env,
                   unreachable=lambda port: {"connection_string": f"host={HOST} port={port} dbname=postgres user=postgres"},
                   read_side_story=_story("integration/test_read_side_postgres.py", "test_postgres_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back")),
    # TimescaleDB's own PostgreSQL (scripts/servers/start-timescaledb.sh), reached through the same PG* settings.
    ContractTarget("timescaledb", "timescaledb", "timescaledb", _postgres, env=_timescaledb_env,
                   unreachable=lambda port: {"connection_string": f"host={HOST} port={port} dbname=postgres user=postgres"}),
    ContractTarget("mysql", "mysql", "mysql",
                   lambda folder, _: {"host": env("MYSQL_HOST", HOST), "port": int(env("MYSQL_PORT", "3306")), "user": env("MYSQL_USER", "bench"),
                                      "database": env("MYSQL_DATABASE", "bench"), "password": "${MYSQL_PASSWORD}"},
                   env=lambda: {"MYSQL_PASSWORD": env("MYSQL_PASSWORD", "bench")},
                   unreachable=lambda port: {"host": HOST, "port": port},
                   read_side_story=_story("modules/test_mysql.py", "test_mysql_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back")),
    ContractTarget("cassandra", "cassandra", "cassandra",
                   lambda folder, _: {"contact_points": env("CASSANDRA_HOST", HOST), "port": int(env("CASSANDRA_PORT", "9042")),
                                      "keyspace": NAMESPACE, "replication_factor": 1},
                   unreachable=lambda port: {"contact_points": HOST, "port": port},
                   read_side_story=_story("modules/test_cassandra.py")),
    ContractTarget("elasticsearch", "elasticsearch", "elasticsearch",
                   lambda folder, _: {"hosts": env("ELASTICSEARCH_URL", "http://127.0.0.1:9200"), "replicas": 0, "refresh_interval": "1s"},
                   unreachable=lambda port: {"hosts": f"http://{HOST}:{port}"},
                   read_side_story=_story("modules/test_elasticsearch.py")),
    ContractTarget("opensearch", "elasticsearch", "elasticsearch",
                   lambda folder, _: {"hosts": env("OPENSEARCH_URL", "http://127.0.0.1:9201"), "replicas": 0, "refresh_interval": "1s"},
                   unreachable=lambda port: {"hosts": f"http://{HOST}:{port}"},
                   read_side_story=_story("modules/test_elasticsearch.py")),
    ContractTarget("influxdb", "influxdb", "influxdb",
                   lambda folder, _: {"url": env("INFLUXDB_URL", "http://127.0.0.1:8086"), "token": "-", "org": "-",
                                      "bucket": f"{env('INFLUXDB_DB', 'bench')}/autogen"},
                   unreachable=lambda port: {"url": f"http://{HOST}:{port}"},
                   read_side_story=_story("modules/test_influxdb.py")),
    ContractTarget("questdb", "questdb", "questdb",
                   lambda folder, _: {"host": env("QUESTDB_HOST", HOST), "http_port": int(env("QUESTDB_HTTP_PORT", "9000")),
                                      "pg_port": int(env("QUESTDB_PG_PORT", "8812"))},
                   unreachable=lambda port: {"pg_port": port},
                   read_side_story=_story("modules/test_questdb.py")),
    ContractTarget("iotdb", "iotdb", "iotdb",
                   lambda folder, _: {"host": env("IOTDB_HOST", HOST), "port": int(env("IOTDB_PORT", "6667")), "user": "root",
                                      "password": "root", "database": NAMESPACE, "data_region_groups": 1},
                   unreachable=lambda port: {"host": HOST, "port": port},
                   read_side_story=_story("modules/test_iotdb.py")),
    ContractTarget("clickhouse", "clickhouse", "clickhouse",
                   lambda folder, _: {"host": env("CLICKHOUSE_HOST", HOST), "port": int(env("CLICKHOUSE_PORT", "19000")), "user": "default",
                                      "database": NAMESPACE},
                   unreachable=lambda port: {"host": HOST, "port": port},
                   read_side_story=_story("modules/test_clickhouse.py")),
    ContractTarget("victoriametrics", "victoriametrics", "victoriametrics",
                   lambda folder, _: {"url": env("VICTORIAMETRICS_URL", "http://127.0.0.1:8428")},
                   unreachable=lambda port: {"url": f"http://{HOST}:{port}"},
                   read_side_story=_story("modules/test_victoriametrics.py", "test_scan_and_answers_then_a_sample_added_behind_the_tools_back")),
    ContractTarget("berkeleydb", "berkeleydb", "berkeleydb", lambda folder, _: {"home": str(folder / "env")},
                   unreachable=lambda port: {"home": "/nonexistent-folder/env"},
                   unreachable_says="cannot open the BerkeleyDB environment /nonexistent-folder/env",
                   read_side_story=_story("modules/test_berkeleydb.py")),
    ContractTarget("mongodb_wire_fake", "mongodb", "mongodb", lambda folder, address: {"uri": f"mongodb://{address}", "database": "bench", "timeout_s": 5},
                   unreachable=lambda port: {"uri": f"mongodb://{HOST}:{port}", "timeout_s": 1}, serve=_mongodb_wire_fake,
                   read_side_story=_story("modules/test_mongodb_wire_fake.py", "test_mongodb_wire_fake_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back")),
    ContractTarget("azure_data_explorer_wire_fake", "azure_data_explorer", None,
                   lambda folder, url: {"cluster_uri": url, "database": "iotbench", "auth": "none"},
                   unreachable=lambda port: {"cluster_uri": f"http://{HOST}:{port}"}, serve=_adx_wire_fake,
                   read_side_story=_story("modules/test_adx_wire_fake.py", "test_adx_wire_fake_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back")),
    ContractTarget("arangodb_wire_fake", "arangodb", None,
                   lambda folder, url: {"url": url, "username": "root", "password": "${ARANGO_PASSWORD}", "database": "bench"},
                   unreachable=lambda port: {"url": f"http://{HOST}:{port}"}, env=_arango_env, serve=_arangodb_wire_fake,
                   read_side_story=_story("modules/test_arangodb_wire_fake.py", "test_arangodb_wire_fake_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back")),
]
