"""Run spec rules and the option parsing the CLI does on its own."""

import click
import pytest
from pydantic import ValidationError

from iotdb_bench.cli.commands.options import WorkerSet, parse_extra_options, parse_queries
from iotdb_bench.simulator.env_references import MissingVariable
from iotdb_bench.simulator.env_references import expand as expand_env
from iotdb_bench.simulator.spec import QUERY_NAMES, RunSpec


def spec(**fields):
    return RunSpec(**{"run_id": "run-1", "task": "insert", "target": "t", "module": "sqlite", "workers": 3, **fields})


def test_prefill_shares_add_up():
    s = spec(prefill=10)
    assert [s.prefill_share(i) for i in range(3)] == [4, 3, 3]


def test_table_names():
    assert spec().table_names == ["events"]
    assert spec(tables="multiple").table_names == ["events0", "events1", "events2", "events3"]


def test_unknown_query_rejected():
    with pytest.raises(ValidationError):
        spec(queries=("count-events", "bogus"))


def test_worker_set():
    assert WorkerSet().convert("1, 4,8,4", None, None) == (1, 4, 8)
    for bad in ("0", "1,x", "", "-2", "1,,2"):
        with pytest.raises(click.exceptions.BadParameter):
            WorkerSet().convert(bad, None, None)


def test_extra_options():
    assert parse_extra_options(("use_values_lists=true", "a=b=c")) == {"use_values_lists": "true", "a": "b=c"}
    for bad in ("novalue", "=x", "bad key=1"):
        with pytest.raises(click.BadParameter):
            parse_extra_options((bad,))


def test_queries_subset():
    assert parse_queries(None, QUERY_NAMES) == QUERY_NAMES
    assert parse_queries("count-events,newest-per-device", QUERY_NAMES) == ("count-events", "newest-per-device")
    with pytest.raises(click.BadParameter):
        parse_queries("count-events,nope", QUERY_NAMES)


def test_env_expansion(monkeypatch):
    monkeypatch.setenv("IOTB_X", "secret")
    monkeypatch.delenv("IOTB_MISSING", raising=False)
    assert expand_env("a ${IOTB_X} b") == "a secret b"
    assert expand_env("${IOTB_MISSING:-fallback}") == "fallback"
    assert expand_env(5) == 5
    with pytest.raises(MissingVariable, match="IOTB_MISSING"):
        expand_env("${IOTB_MISSING}")
