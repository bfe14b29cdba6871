"""TSBS's cpu-only data and DevOps query types on the real ClickHouse (tests/tsbs_story.py; Debian's
18.16, native protocol): TSBS's clickhouse target's tables (tags, and cpu sorted by (tags_id,
created_at) in a plain MergeTree; created_at Int64 epoch milliseconds on this server), TSBS's rows
and points, every type answered `ok`, changed rows found. What current servers get is checked on chDB
(test_tsbs_clickhouse_current_engine.py). The suite works in its own database, dropped at the end."""

from __future__ import annotations

import pytest

from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS
from tests.conftest import run_cli
from tests.modules.test_clickhouse import CONFIG, HOST, PORT, mutate
from tests.tsbs_story import DATA, HOSTS, INSERT, TSBS_ROWS, assert_every_type_answers_ok, assert_inserted, check_changed_rows_are_found

pytestmark = pytest.mark.clickhouse

DATABASE = "iotbench_tsbs"


@pytest.fixture(scope="module")
def clickhouse(tmp_path_factory):
    """(a client of the test server, a folder to run the CLI in) once the story's data is inserted."""
    from clickhouse_driver import Client
    from clickhouse_driver.errors import NetworkError

    client = Client(host=HOST, port=PORT, connect_timeout=5)
    try:
        client.execute("SELECT 1")
    except (NetworkError, OSError) as error:
        pytest.fail(f"ClickHouse is not reachable at {HOST}:{PORT} ({error}); start it with scripts/servers/start-clickhouse.sh")
    folder = tmp_path_factory.mktemp("tsbs-clickhouse")
    (folder / "config.yaml").write_text(CONFIG.format(host=HOST, port=PORT, database=DATABASE))
    assert_inserted(run(folder)("insert", *INSERT))
    yield client, folder
    client.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
    client.disconnect()


def run(folder):
    return lambda *args: run_cli([args[0], "--config", "config.yaml", "--target", "clickhouse", "--platform", "local", *args[1:]], folder)


def test_tsbs_layout_and_every_query_type_answered_right(clickhouse):
    client, folder = clickhouse
    columns = client.execute(f"SELECT name, type FROM system.columns WHERE database = '{DATABASE}' AND table = 'cpu'")
    assert columns == [("created_date", "Date"), ("created_at", "Int64"), ("time", "String"), ("tags_id", "UInt32"),
                       *((name, "Nullable(Float64)") for name in CPU_FIELDS), ("additional_tags", "String")]
    tables = client.execute(f"SELECT name, engine, partition_key, sorting_key FROM system.tables WHERE database = '{DATABASE}' AND name IN ('cpu', 'tags') ORDER BY name")
    assert tables == [("cpu", "MergeTree", "toYYYYMM(created_date)", "tags_id, created_at"), ("tags", "MergeTree", "toYYYYMM(created_date)", "id")]
    assert client.execute(f"SELECT count(), uniqExact(tags_id), min(created_at), max(created_at), min(created_date) FROM {DATABASE}.cpu")[0][:4] == (
        TSBS_ROWS, HOSTS, DATA.start_ms, DATA.time_of(DATA.steps - 1))
    # TSBS's `time` text of the first row, and the UTC day the server derived for created_date.
    assert client.execute(f"SELECT time, toString(created_date) FROM {DATABASE}.cpu WHERE tags_id = 1 ORDER BY created_at LIMIT 1") == [
        ("2016-01-01 00:00:00.000 +0000", "2016-01-01")]
    tags = client.execute(f"SELECT id, {', '.join(TAG_NAMES)} FROM {DATABASE}.tags ORDER BY id")
    assert tags == [(index + 1, *row) for index, row in enumerate(host_tags(DATA.seed, 0, HOSTS))]
    assert_every_type_answers_ok(run(folder)("query", "--queries", "tsbs-devops", "-w", "2", "-r", "2"))


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(clickhouse):
    client, folder = clickhouse
    table = f"{DATABASE}.cpu"

    def change(host: int, step: int, value: float) -> None:
        where = f"tags_id = {host + 1} AND created_at = {DATA.time_of(step)}"
        mutate(client, f"ALTER TABLE {table} UPDATE usage_user = {value} WHERE {where}", f"SELECT usage_user FROM {table} WHERE {where}", [(value,)])

    check_changed_rows_are_found(run(folder), change)
