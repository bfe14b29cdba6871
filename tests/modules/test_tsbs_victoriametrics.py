"""TSBS's cpu-only and devops data and the DevOps query types MetricsQL expresses on the real
VictoriaMetrics of scripts/servers/start-victoriametrics.sh (tests/tsbs_story.py): TSBS's
victoriametrics layout (a series per host, measurement and field, the ten tags and the measurement's
own as labels), TSBS's rows and points, the eleven types it answers `ok` (the other four refused in
one line), changed rows found, and the data's size as VictoriaMetrics accounts for it. Both stories
write the same cpu series (a single-node server has no databases): the suite holds one story at a
time, inserted when first used, and deletes its series at the end."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
import pytest

from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.modules.base import ModuleError
from iotdb_bench.simulator.modules.victoriametrics.series import selector
from iotdb_bench.simulator.modules.victoriametrics.tsbs_iot_queries import REFUSED as IOT_REFUSED_TYPES
from iotdb_bench.simulator.modules.victoriametrics.tsbs_queries import REFUSED
from iotdb_bench.simulator.queries.parameters import ParameterDraws
from iotdb_bench.simulator.queries.tsbs_iot import IOT, IotAnswers
from iotdb_bench.simulator.queries.tsbs_iot import written as iot_written
from iotdb_bench.simulator.spec import TSBS_DEVOPS_QUERIES, TSBS_IOT_QUERIES, TSBS_TABLES, RunSpec
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.iot import TAGS, truck_tags
from iotdb_bench.simulator.workload.tsbs.iot_rows import IotRows
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS
from tests.conftest import run_cli
from tests.tsbs_story import (
    CPU_ONLY,
    DATA,
    DEVOPS_STORY,
    HOSTS,
    IOT_DATA,
    IOT_INSERT,
    QUERY_SEED,
    TRUCKS,
    TSBS_ROWS,
    Story,
    assert_every_iot_type_answers_ok,
    assert_every_type_answers_ok,
    assert_inserted,
    assert_iot_inserted,
    check_changed_rows_are_found,
    reachable_or_fail,
)

pytestmark = pytest.mark.victoriametrics

URL = os.environ.get("VICTORIAMETRICS_URL", "http://127.0.0.1:8428")
ANSWERED = tuple(name for name in TSBS_DEVOPS_QUERIES if name not in dict(REFUSED))
SERIES = '{__name__=~"cpu_.+"}'


def exported(selector: str) -> list[dict]:
    """The series `selector` selects, each with its values and times (ms), from the start of TSBS's data."""
    httpx.get(f"{URL}/internal/force_flush", timeout=30).raise_for_status()
    response = httpx.post(f"{URL}/api/v1/export", data={"match[]": selector, "start": str(DATA.start_ms // 1000)}, timeout=60)
    response.raise_for_status()
    return [json.loads(line) for line in response.text.splitlines()]


@pytest.fixture(scope="module")
def stories(tmp_path_factory):
    """`stories(story)`: a folder to run the CLI in once the story's data is inserted, and the insert's
    run report. One story at a time: inserting another replaces the cpu series (its clean deletes its
    measurements' series). Every measurement's series are deleted at the end."""
    reachable_or_fail(f"{URL}/health", "VictoriaMetrics", "start-victoriametrics.sh")
    current: dict[str, tuple[Path, dict]] = {}

    def story(which: Story) -> tuple[Path, dict]:
        if which.shape not in current:
            current.clear()
            folder = tmp_path_factory.mktemp(f"{which.shape}-victoriametrics")
            inserted = run(folder)("insert", *which.insert)
            assert_inserted(inserted, which)
            current[which.shape] = folder, inserted.results()["runs"][0]["report"]
        return current[which.shape]

    yield story
    every = selector([f"{name}_.+" for name in TSBS_TABLES["tsbs-devops"]])
    httpx.post(f"{URL}/api/v1/admin/tsdb/delete_series", data={"match[]": every}, timeout=60).raise_for_status()


@pytest.fixture
def victoriametrics(stories):
    """The cpu-only story's folder and insert report."""
    return stories(CPU_ONLY)


def run(folder: Path):
    return lambda *args: run_cli([args[0], "--target", "victoriametrics-local", *args[1:]], folder, env={"VICTORIAMETRICS_URL": URL})


def test_tsbs_layout_and_every_expressible_query_type_answered_right(victoriametrics):
    folder, _ = victoriametrics
    series = exported(SERIES)
    # A series per host and field, named <measurement>_<field>, each with every row of its host.
    assert sorted({one["metric"]["__name__"] for one in series}) == sorted(f"cpu_{name}" for name in CPU_FIELDS)
    assert len(series) == HOSTS * len(CPU_FIELDS) and {len(one["values"]) for one in series} == {DATA.steps}
    assert sum(len(one["values"]) for one in series if one["metric"]["__name__"] == "cpu_usage_user") == TSBS_ROWS
    [host_3] = [one for one in series if one["metric"]["__name__"] == "cpu_usage_user" and one["metric"]["hostname"] == "host_3"]
    assert tuple(host_3["metric"][name] for name in TAG_NAMES) == host_tags(DATA.seed, 3, 1)[0]  # the ten tags as labels
    assert host_3["timestamps"][:2] == [DATA.start_ms, DATA.time_of(1)]
    assert all(value == int(value) and 0 <= value <= 100 for value in host_3["values"])
    assert_every_type_answers_ok(run(folder)("query", "--queries", ",".join(ANSWERED), "-w", "2", "-r", "2"), ANSWERED)


def test_the_types_metricsql_cannot_express_are_refused_in_one_line(victoriametrics):
    folder, _ = victoriametrics
    for name, reason in REFUSED:
        result = run(folder)("query", "--queries", f"cpu-max-all-1,{name}")
        assert result.code == 2 and result.stderr.strip() == f"error: module 'victoriametrics' does not answer TSBS's {name}: {reason}"


def test_storage_is_victoriametrics_own_accounting_of_everything_it_holds(victoriametrics):
    """The size is possible: positive, not more than the server's data folder. It grows by the run's data
    on a new server; one that still merges away data deleted before the run can shrink meanwhile (CI
    once: 70.5 MB before, 63.1 MB after), and then the report gives no growth per event."""
    _, report = victoriametrics
    before, after = report["server"]["storage_bytes_at_start"], report["server"]["storage_bytes"]
    assert before > 0 and after > 0
    # Background merges change the parts after a run: the module's figure and the folder are compared now.
    module = module_class("victoriametrics")(RunSpec(run_id="storage", task="insert", target="vm", module="victoriametrics", workers=1,
                                                     extra={"url": URL}))
    module.connect()
    try:
        now = module.schema.storage_bytes()
    finally:
        module.close()
    metrics = httpx.get(f"{URL}/metrics", timeout=30).text
    [folder] = re.findall(r'^flag\{name="storageDataPath", value="([^"]+)"', metrics, flags=re.MULTILINE)
    assert now is not None and 0 < now <= sum(path.stat().st_size for path in Path(folder).rglob("*") if path.is_file())
    assert any("every series the server holds" in note for note in report["notes"])  # the run says what it measured


def change_usage_user(story: Story):
    """How check_changed_rows_are_found changes a cpu row: VictoriaMetrics changes no sample in place, so
    the host's usage_user series is exported, deleted and imported again with the row's value changed."""

    def change(host: int, step: int, value: float) -> None:
        series = f'cpu_usage_user{{hostname="host_{host}"}}'
        [one] = exported(series)
        one["values"][one["timestamps"].index(story.data.time_of(step))] = value
        httpx.post(f"{URL}/api/v1/admin/tsdb/delete_series", data={"match[]": series}, timeout=60).raise_for_status()
        httpx.post(f"{URL}/api/v1/import", content=json.dumps(one), timeout=60).raise_for_status()
        assert [one["values"]] == [line["values"] for line in exported(series)]

    return change


def test_rows_changed_behind_the_tools_back_make_the_queries_reading_them_wrong(victoriametrics):
    folder, _ = victoriametrics
    check_changed_rows_are_found(run(folder), change_usage_user(CPU_ONLY), queries=ANSWERED)


def test_devops_measurements_as_tsbs_sends_them_and_the_devops_types_over_its_cpu(stories):
    folder, _ = stories(DEVOPS_STORY)
    data = DEVOPS_STORY.data
    measurements = USE_CASES["tsbs-devops"].measurements
    # host_3's series: one per measurement and field, <measurement>_<field>, every step's sample, the
    # host's ten tags and the measurement's own as labels, whole numbers but mem's percentages.
    series = exported(f'{{hostname="host_3", __name__=~"({"|".join(one.name for one in measurements)})_.+"}}')
    named = {one["metric"]["__name__"]: one for one in series}
    assert sorted(named) == sorted(f"{one.name}_{field}" for one in measurements for field in one.field_names)
    assert {len(one["values"]) for one in series} == {data.steps} and {one["timestamps"][0] for one in series} == {data.start_ms}
    tags = dict(zip(TAG_NAMES, host_tags(data.seed, 3, 1)[0]))
    for measurement in measurements:
        labels = named[f"{measurement.name}_{measurement.field_names[0]}"]["metric"]
        assert {name: labels[name] for name in TAG_NAMES} == tags
        assert sorted(labels) == sorted(["__name__", *TAG_NAMES, *(name for name, _ in measurement.own_tags)])
    fractional = {name for name, one in named.items() if any(value != int(value) for value in one["values"])}
    assert fractional == {"mem_used_percent", "mem_available_percent", "mem_buffered_percent"}
    # Every host's: TSBS's points (the insert's check counted its rows, each measurement's first field's samples).
    every = selector([f"{one.name}_.+" for one in measurements])
    at_s = data.end_ms // 1000
    answer = httpx.get(f"{URL}/api/v1/query", params={"query": f"sum(count_over_time({every}[{at_s - data.start_ms // 1000 + 60}s]))",
                                                       "time": str(at_s), "nocache": "1"}, timeout=60).json()
    assert round(float(answer["data"]["result"][0]["value"][1])) == DEVOPS_STORY.tsbs_points
    assert_every_type_answers_ok(run(folder)("query", "-w", "2", "-r", "2"), ANSWERED, story=DEVOPS_STORY)  # no --queries: the data's own
    check_changed_rows_are_found(run(folder), change_usage_user(DEVOPS_STORY), queries=ANSWERED, story=DEVOPS_STORY)


# -- IoT -------------------------------------------------------------------------------------------
IOT_REFUSED = dict(IOT_REFUSED_TYPES)
IOT_ANSWERED = tuple(name for name in TSBS_IOT_QUERIES if name not in IOT_REFUSED)
IOT_SERIES = '{__name__=~"(readings|diagnostics)_.+"}'
TRUCK_TAGS = tuple(name for name, kind in TAGS if kind == "text")  # labels; the capacities TSBS writes as fields
CAPACITIES = tuple(name for name, kind in TAGS if kind != "text")


@pytest.fixture(scope="module")
def iot(tmp_path_factory):
    """A folder to run the CLI in once the IoT story's data is inserted (its own series, beside the
    cpu stories'); its series are deleted at the end."""
    reachable_or_fail(f"{URL}/health", "VictoriaMetrics", "start-victoriametrics.sh")
    folder = tmp_path_factory.mktemp("tsbs-iot-victoriametrics")
    assert_iot_inserted(run(folder)("insert", *IOT_INSERT))  # its count check: every row found, as TSBS's generator writes them
    yield folder
    httpx.post(f"{URL}/api/v1/admin/tsdb/delete_series", data={"match[]": IOT_SERIES}, timeout=60).raise_for_status()


def samples_written() -> int:
    """The samples TSBS's victoriametrics target sends for the story's rows, recomputed from the seed
    apart from the module: each written row's fields and capacities, less its null field and its null
    tag when that is a capacity (TSBS writes the capacities as fields)."""
    rows, samples = IotRows(IOT_DATA.seed, TRUCKS), 0
    step, truck = np.meshgrid(np.arange(IOT_DATA.steps), np.arange(TRUCKS), indexing="ij")
    for index, measurement in enumerate(USE_CASES["tsbs-iot"].measurements):
        position = rows.position(step.ravel(), index, truck.ravel())
        written = rows.exists(position)
        null_field = rows.null_field(position, len(measurement.field_names)) >= 0
        null_capacity = rows.null_tag(position) >= len(TRUCK_TAGS)  # the tags after the five strings are the capacities
        samples += int(np.sum(written * (len(measurement.field_names) + len(CAPACITIES) - null_field - null_capacity)))
    return samples


def test_iot_as_tsbs_sends_it_with_its_nulls_and_every_sample_counted(iot):
    series = exported(IOT_SERIES)
    # A series per truck, measurement and field, the capacities (tags TSBS writes as fields) series too.
    assert sorted({one["metric"]["__name__"] for one in series}) == sorted(
        f"{measurement.name}_{name}" for measurement in USE_CASES["tsbs-iot"].measurements for name in (*measurement.field_names, *CAPACITIES))
    # truck_3's full series: its five string tags as labels, its capacities its model's.
    tags = truck_tags(IOT_DATA.seed, 3, 1)[0]
    full = [one for one in series if one["metric"].get("name") == "truck_3" and len(one["metric"]) == 1 + len(TRUCK_TAGS)]
    assert {tuple(one["metric"][name] for name in TRUCK_TAGS) for one in full} == {tags[: len(TRUCK_TAGS)]}
    assert {one["metric"]["__name__"]: set(one["values"]) for one in full if one["metric"]["__name__"].startswith("readings_") and
            one["metric"]["__name__"].removeprefix("readings_") in CAPACITIES} == {
        f"readings_{name}": {value} for name, value in zip(CAPACITIES, tags[len(TRUCK_TAGS):])}
    # TSBS's null tags: series lacking a label (the name's among them); its null fields: samples left out.
    assert any("name" not in one["metric"] for one in series) and any("fleet" not in one["metric"] for one in series)
    assert sum(len(one["values"]) for one in series) == samples_written()


def test_the_other_iot_types_are_refused_in_one_line_with_the_reason(tmp_path):
    """Before anything starts (no data is read, nor needed): every type MetricsQL does not answer
    refused with its reason, the CLI's one line and exit code 2 shown for one of them."""
    module = module_class("victoriametrics")
    for name in IOT_REFUSED:
        spec = RunSpec(run_id="refused", task="query", target="vm", module="victoriametrics", workers=1, queries=(name,), extra={"url": URL})
        with pytest.raises(ModuleError) as refused:
            module(spec).validate()
        assert str(refused.value) == f"module 'victoriametrics' does not answer TSBS's {name}: {IOT_REFUSED[name]}"
    result = run(tmp_path)("query", "--queries", "avg-load,daily-activity")
    assert result.code == 2 and result.stderr.strip() == f"error: module 'victoriametrics' does not answer TSBS's daily-activity: {IOT_REFUSED['daily-activity']}"


def test_the_iot_types_metricsql_answers_are_answered_right(iot):
    assert IOT_ANSWERED == ("last-loc", "single-last-loc", "low-fuel", "high-load", "stationary-trucks", "long-driving-sessions", "long-daily-sessions",
                            "avg-daily-driving-duration", "avg-load")
    assert_every_iot_type_answers_ok(run(iot)("query", "-w", "2", "-r", "2"), IOT_ANSWERED)  # no --queries: those it answers


def reimported(selector: str, change: Callable[[dict], None]) -> None:
    """VictoriaMetrics changes no sample in place: the series are exported, deleted and imported again, `change`d."""
    series = exported(selector)
    for one in series:
        change(one)
    httpx.post(f"{URL}/api/v1/admin/tsdb/delete_series", data={"match[]": selector}, timeout=60).raise_for_status()
    httpx.post(f"{URL}/api/v1/import", content="\n".join(json.dumps(one) for one in series), timeout=60).raise_for_status()


def newest_row_has(measurement: str, truck: str, field: str) -> bool:
    """Whether the truck's newest row of the measurement (every row has its load or its fuel capacity) has the field."""
    series = exported(f'{{__name__=~"{measurement}_(load_capacity|fuel_capacity|{field})", name="{truck}"}}')
    newest = max(one["timestamps"][-1] for one in series if not one["metric"]["__name__"].endswith(field))
    return any(newest in one["timestamps"] for one in series if one["metric"]["__name__"].endswith(field))


def test_iot_rows_changed_behind_the_tools_back_make_the_types_reading_them_wrong(iot):
    """Each answered type's execution reads a changed row, and is WRONG. A truck of last-loc's fleet
    and single-last-loc's truck get a location beyond any walk's, a truck of low-fuel's fleet a fuel
    state below 0.1, one of high-load's a load far above any capacity (avg-load reads it too), in every
    row (their newest rows have the field). Trucks stand still (velocity 0) from start to end: one of
    the fleet stationary-trucks draws, moving in its window in the seed's data, and one of the answer
    of each of long-driving-sessions' and long-daily-sessions' executions; avg-daily-driving-duration
    reads them (every truck has a driving day in the seed's data, these none left)."""
    draws, answers = ParameterDraws(QUERY_SEED, 0, iot_written(IOT_DATA)), IotAnswers(IOT_DATA)
    drawn = {name: draws.draw(name, 0, IOT[name].parameters) for name in IOT_ANSWERED}  # -r 1: each type's execution 0
    answered = {name: [row[0] for row in answers.expected(name, drawn[name])[1]] for name in IOT_ANSWERED}
    tags = truck_tags(IOT_DATA.seed, 0, TRUCKS)

    def of_fleet(name: str, measurement: str, field: str) -> str:
        return next(truck[0] for truck in tags if truck[1] == drawn[name]["fleet"] and newest_row_has(measurement, truck[0], field))

    def every_value(value: float) -> Callable[[dict], None]:
        return lambda one: one.update(values=[value] * len(one["values"]))

    single = drawn["single-last-loc"]["trucks"][0]
    changes = [("readings", of_fleet("last-loc", "readings", "longitude"), "longitude", 200),
               ("readings", single, "longitude" if newest_row_has("readings", single, "longitude") else "latitude", 200),
               ("diagnostics", of_fleet("low-fuel", "diagnostics", "fuel_state"), "fuel_state", 0.05),
               ("diagnostics", of_fleet("high-load", "diagnostics", "current_load"), "current_load", 1_000_000)]
    fleet = drawn["stationary-trucks"]["fleet"]
    standing = {next(truck[0] for truck in tags if truck[1] == fleet and truck[0] not in answered["stationary-trucks"]),
                answered["long-driving-sessions"][0], answered["long-daily-sessions"][0]}
    changes += [("readings", truck, "velocity", 0) for truck in standing]
    for measurement, truck, field, value in changes:
        reimported(f'{measurement}_{field}{{name="{truck}"}}', every_value(value))
    result = run(iot)("query", "-w", "1", "-r", "1", "--seed", str(QUERY_SEED))
    assert result.code == 1 and "wrong answer from query" in result.stderr and "Traceback" not in result.stderr, result.stderr
    verdicts = result.answers()
    assert {name: verdict for name, (verdict, _) in verdicts.items()} == dict.fromkeys(IOT_ANSWERED, "wrong"), verdicts
    assert "avg_load_percentage is " in verdicts["avg-load"][1]
