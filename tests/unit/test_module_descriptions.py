"""Modules describe their own runs (insert mode, notes); the CLI knows no module and no module option."""

import re

import pytest

from iotdb_bench.simulator.modules import module_class, module_names
from iotdb_bench.simulator.spec import RunSpec
from tests.conftest import REPO_ROOT

ADX = {"cluster_uri": "http://127.0.0.1:1", "database": "db", "auth": "none"}


def module(name="postgres", batch=1000, **options):
    spec = RunSpec(run_id="run-1", task="insert", target="t", module=name, workers=1, batch=batch,
                   extra={key: str(value) for key, value in options.items()})
    return module_class(name)(spec)


@pytest.mark.parametrize(("built", "label"), [
    (lambda: module(), "COPY, size 1000"),
    (lambda: module(use_values_lists="true"), "values lists, size 1000"),
    (lambda: module(batch_mode="transaction"), "single-row INSERTs in one transaction, size 1000"),
    (lambda: module("timescaledb"), "COPY, size 1000"),
    (lambda: module("sqlite", batch=100), "single-row INSERTs in one transaction, size 100"),
    (lambda: module("mysql", use_values_lists="true"), "values lists, size 1000"),
    (lambda: module("cassandra", max_sync_calls=120), "UNLOGGED batches per device, size 1000, async, 120 in flight"),
    (lambda: module("cassandra"), "UNLOGGED batches per device, size 1000"),
    (lambda: module("null", encoding="rows"), "nothing sent (rows encoding), size 1000"),
    (lambda: module("elasticsearch"), "_bulk request, size 1000"),
    (lambda: module("azure_data_explorer", **ADX), "queued ingestion, size 1000"),
    (lambda: module("berkeleydb", key_order="time"), "puts in one transaction, size 1000, time-first keys"),
    (lambda: module("mongodb"), "insert_many, unordered, size 1000, time series collection"),
    (lambda: module("mongodb", batch=0, collection_type="plain"), "single inserts, plain collection"),
    (lambda: module("iotdb"), "aligned tablets, one per device, size 1000"),
    (lambda: module("iotdb", model="table"), "tablet per table, size 1000"),
    (lambda: module("iotdb", batch=0), "single inserts (insert_aligned_record)"),
    (lambda: module("clickhouse"), "columnar INSERT (NumPy), size 1000"),
    (lambda: module("clickhouse", async_insert="true", wait_for_async_insert="false"), "columnar INSERT (NumPy), size 1000, async_insert without waiting"),
    (lambda: module(batch=0), "single inserts"),
])
def test_insert_mode_labels(built, label):
    assert built().insert_mode() == label


def test_notes_say_what_a_reader_must_know():
    assert "acknowledged" in module("azure_data_explorer", **ADX).notes()[0]
    assert module("azure_data_explorer", ingestion="streaming", **ADX).notes() == []
    assert module("null").notes() and module("postgres").notes() == []


def _cli_code() -> str:
    """The CLI's code without comments and docstrings' prose lines that name databases for the reader."""
    text = "\n".join(path.read_text() for path in sorted((REPO_ROOT / "iotdb_bench" / "cli").rglob("*.py")))
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def test_the_cli_names_no_database_module():
    code = _cli_code()
    named = [name for name in module_names() if re.search(rf"[\"']{name}[\"']", code)]
    assert not named, f"cli/ names database modules: {named}"


def test_the_cli_names_no_module_option():
    code = _cli_code()
    options = {field for name in module_names() for field in module_class(name).Options.model_fields if "_" in field}
    named = sorted(option for option in options if re.search(rf"\b{option}\b", code))
    assert not named, f"cli/ uses module options: {named}"
