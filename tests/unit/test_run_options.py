"""The run commands' typed options: every click option of insert, query and scan lands in exactly one
field of its command's typed object; the command line results.json records parses back to the same
options; and validating a target whose variables a Kubernetes Secret supplies leaves the environment alone."""

from __future__ import annotations

import os

import pytest

from iotdb_bench.cli.commands.insert import insert, plan_insert
from iotdb_bench.cli.commands.insert_options import InsertOptions
from iotdb_bench.cli.commands.launch import spec
from iotdb_bench.cli.commands.reads import QueryOptions, ScanOptions, query, scan
from iotdb_bench.cli.commands.run_options import TargetOptions, parse
from iotdb_bench.cli.config import Target
from iotdb_bench.simulator.modules import ModuleError

COMMANDS = [(insert, InsertOptions), (query, QueryOptions), (scan, ScanOptions)]
NOT_FROM_CLICK = {"runs_given", "recording"}  # what the typed object adds: the option's source, the recording


@pytest.mark.parametrize("command,model", COMMANDS, ids=[command.name for command, _ in COMMANDS])
def test_every_option_is_one_field_of_the_typed_options(command, model):
    options = [param.name for param in command.params]
    assert len(options) == len(set(options))
    assert set(options) == model.names() - NOT_FROM_CLICK


def test_the_recorded_command_line_parses_back_to_the_same_options():
    args = ["--target", "sqlite", "-w", "1,2", "--batch", "100", "--no-clean", "--extra-option", "journal_mode=wal",
            "--heartbeat-timeout", "5", "--query-workers", "2", "--queries", "count-events", "--details"]
    first = parse(insert, InsertOptions, args, ["run.py", "insert", *args])
    recorded = first.recording
    assert recorded.command_line[0] == "insert" and "--details" not in recorded.command_line
    again = parse(insert, InsertOptions, recorded.command_line[1:], [])
    assert again.recording.options == {**recorded.options, "details": False}
    assert list(recorded.options)[-1] == "heartbeat_timeout" and recorded.options["heartbeat_timeout"] == 5.0
    assert first.target.extra_options == ("journal_mode=wal",) and first.length.clean is False and first.length.worker_counts == (1, 2)
    assert first.recording.argv == ["run.py", "insert", *args]
    assert not first.length.runs_given and parse(insert, InsertOptions, [*args, "-r", "2"], []).length.runs_given


def test_the_insert_options_plan_the_invocation_they_ask_for():
    options = parse(insert, InsertOptions, ["--target", "null", "-w", "2,4", "-r", "2", "--num-inserts", "50", "--batch", "10", "--schema", "slim"], [])
    planned = plan_insert(options)
    assert planned.invocation.worker_counts == (2, 4) and planned.invocation.runs == 2
    base = planned.invocation.base
    assert (base.workers, base.batch, base.num_inserts, base.shape, base.primary_key.value) == (2, 10, 50, "slim", "none")
    assert planned.choice.name == "local" and planned.details is False


def target_options(target: str) -> TargetOptions:
    return parse(query, QueryOptions, ["--target", target], []).target


def test_a_secret_s_variables_need_not_be_set_here_and_the_environment_is_left_alone(monkeypatch):
    monkeypatch.delenv("IOTBENCH_TEST_UNSET_PASSWORD", raising=False)
    before = dict(os.environ)
    connection = {"password": "${IOTBENCH_TEST_UNSET_PASSWORD}"}
    with_secret = Target(module="postgres", existing_secret="pg-secret", **connection)
    built = spec(target_options("postgresql"), with_secret, task="query", workers=1)
    assert built.connection == connection  # the run gets the reference itself; the pod's Secret expands it
    assert dict(os.environ) == before
    with pytest.raises(ModuleError, match="IOTBENCH_TEST_UNSET_PASSWORD is not set"):
        spec(target_options("postgresql"), Target(module="postgres", **connection), task="query", workers=1)
