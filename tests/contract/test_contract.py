"""The contract every database module keeps, run against each target's real server (or its named
wire fake): it connects and names its server's version; an unreachable server is one line; options
it refuses are one line before the run; each shape it declares is set up, inserted and counted, and
each it does not is refused; the queries and the scan answer ok; and an event written behind the
tool's back makes the answers `wrong`. What is checked follows the module's capabilities."""

from __future__ import annotations

import ast
import json
import re
import time
from pathlib import Path

import pytest

from iotdb_bench.simulator.capabilities import ALL_SHAPES
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.workload import shapes
from tests.conftest import downsample_minutes, rows_per_query
from tests.contract.conftest import free_port, target_param
from tests.contract.targets import TARGETS

ROOT = Path(__file__).resolve().parents[2]

WORKERS, EVENTS = 2, 500  # events per worker
INSERT = ["--batch", "100", "--num-inserts", str(EVENTS), "-w", str(WORKERS)]
REFUSED = ["-w", "1", "--num-inserts", "10"]  # single inserts: --commit-interval applies to them


def one_line(result, code: int) -> str:
    assert result.code == code and "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_connects_and_names_its_server_version(contract):
    module = contract.module()
    module.connect()
    try:
        version = module.schema.server_version()
    finally:
        module.close()
    assert isinstance(version, str) and version.strip(), f"module '{contract.target.module}': server_version() gave {version!r}"


def test_an_unreachable_server_is_one_line(contract):
    if contract.target.unreachable is None:
        assert contract.capabilities.location.value == "none"  # only a target that stores nothing has no server to miss
        return
    port = free_port()
    contract.write_config({**contract.options, **contract.target.unreachable(port)})
    line = one_line(contract.run("insert", *INSERT), 1)
    assert contract.target.unreachable_says.format(port=port) in line


def test_options_it_refuses_are_one_line_before_the_run(contract):
    can, name = contract.capabilities, contract.target.module
    refusals = [(["--extra-option", "no_such_option=1"], f"invalid options for module '{name}'")]
    if can.transactions is not True:
        refusals.append((["--commit-interval", "1"], f"module '{name}' does not support --commit-interval: {can.transactions.because}"))
    if can.markers is not True:
        refusals.append((["--visibility"], f"module '{name}' does not support --visibility: {can.markers.because}"))
    if can.measurements is not True:
        refusals.append((["--measurements", "2"], f"module '{name}' does not support --measurements above 1"))
    if can.sensors is not True:
        refusals.append((["--sensors", "2"], f"module '{name}' does not support --sensors above 1"))
    keyed = "events" if "events" in can.shapes else sorted(can.shapes)[0]
    for mode in sorted(set(PrimaryKey) - can.primary_keys, key=lambda mode: mode.value)[:1]:
        # in the module's own words (why the key does not apply there), naming the option
        refusals.append((["--primary-key", mode.value, "--schema", keyed], f"--primary-key {mode.value}"))
    for args, message in refusals:
        line = one_line(contract.run("insert", *REFUSED, *args), 2)
        assert message in line, (args, line)


@pytest.mark.parametrize("shape", sorted(ALL_SHAPES))
def test_each_shape_it_declares_is_set_up_inserted_and_counted(contract, shape):
    result = contract.run("insert", *INSERT, "--schema", shape)
    if shape not in contract.capabilities.shapes:
        assert f"does not support --schema {shape}" in one_line(result, 2)
        return
    assert result.code == 0, result.stderr
    [run] = result.results()["runs"]
    check = run["report"]["verification"]
    if contract.capabilities.location.value == "none":  # stores nothing: no count to check
        assert check["applicable"] is False
        return
    assert check["ok"] and check["counted"] == WORKERS * EVENTS, check
    assert run["report"]["conditions"]["server_version"], run["report"]["conditions"]


# A target whose own suite tells the whole read-side story (read_side_story) is not asked for this shorter one.
@pytest.mark.parametrize("contract", [target_param(target) for target in TARGETS if not target.read_side_story], indirect=True)
def test_queries_and_scan_answer_ok_and_an_event_behind_its_back_is_wrong(contract):
    inserted = contract.run("insert", *INSERT)
    assert inserted.code == 0, inserted.stderr
    keeps = contract.capabilities.record
    queried = contract.run("query")
    if keeps is not True:  # no record: every answer says why it was not checked
        assert queried.code == 0, queried.stderr
        assert {verdict for verdict, _ in queried.answers().values()} == {"not checked"}
        assert all(keeps.because in detail for _, detail in queried.answers().values())
        return
    assert queried.query_rows() == rows_per_query(WORKERS * 10, downsample_minutes(EVENTS))
    scanned = contract.run("scan", "-w", "2", "--page-size", "300")
    assert scanned.code == 0, scanned.stderr
    assert (scanned.results()["scans"][0]["check"], scanned.results()["scans"][0]["rows"]) == ("ok", WORKERS * EVENTS)

    # One more event of worker 0's stream, written through the module itself but recorded nowhere.
    module = contract.module()
    extra = shapes.generator(module.spec, 0).batch(EVENTS, 1)
    module.connect()
    try:
        module.writer.insert_batch(module.writer.prepare_batch(extra))
        module.writer.flush()
        module.schema.wait_for_count(WORKERS * EVENTS + 1, time.time())  # queued ingestion: until it is stored
    finally:
        module.close()
    queried = contract.run("query")
    assert queried.code == 1 and "wrong answer from query" in queried.stderr, queried.stderr
    verdict, detail = queried.answers()["count-events"]
    assert (verdict, detail) == ("wrong", f"count is {WORKERS * EVENTS + 1}, expected {WORKERS * EVENTS}")
    scanned = contract.run("scan")
    assert scanned.code == 1 and "scan check failed" in scanned.stderr and "Traceback" not in scanned.stderr


def test_each_read_side_story_named_exists_and_uses_the_shared_story():
    """A target whose suite is said to tell the read-side story is not given the contract's shorter one: the
    test named must exist and use tests/read_side.py's story or its verdict checks."""
    for target in TARGETS:
        if not target.read_side_story:
            continue
        path, name = target.read_side_story.split("::")
        tree = ast.parse((ROOT / path).read_text())
        [test] = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name] or [None]
        assert test is not None, f"{target.name}: no test {name} in {path}"
        called = {node.func.id for node in ast.walk(test) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
        assert called & {"check_read_side", "assert_wrong"}, f"{target.name}: {name} tells no read-side story of tests/read_side.py"


def test_a_query_of_a_database_without_events_says_to_insert_first_or_that_events_are_missing(contract):
    if contract.capabilities.location.value == "none":
        return  # stores nothing: its queries have nothing to find either way
    module = contract.module(clean=True)
    module.connect()
    try:
        module.schema.setup()  # the run's tables, emptied
        record = module.records.stored_record() if contract.capabilities.record is True else None
    finally:
        module.close()
    if record is not None and json.loads(record).get("tables") not in (None, module.spec.table_names):
        pytest.skip("an earlier insert's record names other tables, which a query reads and this set-up does not empty")
    line = one_line(contract.run("query"), 1)
    if record is None:  # nothing of the tool is there: what a database nobody inserted into holds
        assert "run insert first (python run.py insert --target contract)" in line, line
    else:  # the record of an earlier insert outlives its tables: the events it promises are missing,
        # or that insert wrote a workload the queries do not read
        # (an empty count reads "count is 0" from SQL, "0 rows" from a metrics store that has no series)
        assert line.startswith(("error: wrong answer from query count-events: ", "error: query refused: ")), line
        said = re.sub(r" \(log: [^)]*\)$", "", line)  # the failed worker's log, when it has ended by then
        assert "wrong answer" in said or said.endswith("insert such data first"), line
