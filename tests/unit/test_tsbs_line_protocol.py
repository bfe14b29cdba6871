"""TSBS's rows as the influx and victoriametrics targets write them (simulator/wire/tsbs_lines.py),
against TSBS's own `--format=influx` lines (cpu-only, devops, iot); and how the victoriametrics module cuts a window into
MetricsQL requests whose buckets are the SQL targets' (modules/victoriametrics/tsbs_queries.py)."""

from __future__ import annotations

import re

import pytest

from iotdb_bench.simulator.modules.iotdb.schema import size_in_bytes
from iotdb_bench.simulator.modules.victoriametrics.tsbs_queries import BUCKET_LABEL, requests
from iotdb_bench.simulator.queries.parameters import Parameters, Window
from iotdb_bench.simulator.queries.tsbs_devops import DEVOPS, HOUR_MS, MINUTE_MS
from iotdb_bench.simulator.wire.tsbs_lines import TsbsLines
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.generator import TsbsGenerator
from tests.unit.test_tsbs_generator import tsbs_generate_data, tsbs_spec

START = 1_451_606_400_000  # 2016-01-01T00:00:00Z


def shape(line: str) -> tuple[str, tuple[str, ...], tuple[str, ...], bool]:
    """(measurement, tag keys, field keys, every field an integer) of a line of line protocol."""
    series, fields, _ = line.split(" ")
    measurement, *tags = series.split(",")
    values = [field.split("=") for field in fields.split(",")]
    return measurement, tuple(tag.split("=")[0] for tag in tags), tuple(key for key, _ in values), all(re.fullmatch(r"\d+i", v) for _, v in values)


def test_lines_have_the_shape_of_tsbs_own_influx_lines():
    """Same measurement, tag keys in TSBS's order, field keys, integer fields, one line per row, and the
    rows in TSBS's order (every host at each timestamp); the values are the tool's own."""
    output = tsbs_generate_data("--use-case=cpu-only", "--seed=7", "--scale=3", "--log-interval=10s", "--timestamp-start=2016-01-01T00:00:00Z",
                                "--timestamp-end=2016-01-01T00:01:00Z", "--format=influx")
    theirs = [line for line in output.splitlines() if line.startswith("cpu,")]
    spec = tsbs_spec(3, "10s", "2016-01-01T00:00:00Z", "2016-01-01T00:01:00Z")
    ours = TsbsLines(USE_CASES["tsbs-cpu"], spec.seed, 3).lines(TsbsGenerator(spec, 0).rows(0, 18)).decode().splitlines()
    assert len(ours) == len(theirs) == 18
    assert {shape(line) for line in ours} == {shape(line) for line in theirs}
    assert [line.split(",")[1] for line in ours] == [line.split(",")[1] for line in theirs]  # hostname=host_0, host_1, host_2, host_0...
    # TSBS writes nanoseconds, the tool milliseconds (its writes ask for precision=ms): the same times.
    assert [int(line.rsplit(" ", 1)[1]) for line in ours] == [int(line.rsplit(" ", 1)[1]) // 1_000_000 for line in theirs]


def typed(line: str) -> tuple[str, frozenset[str], frozenset[tuple[str, bool]]]:
    """(measurement, tag keys, (field key, an integer)) of a line of line protocol."""
    series, fields, _ = line.split(" ")
    measurement, *tags = series.split(",")
    return measurement, frozenset(tag.split("=")[0] for tag in tags), frozenset((key, value.endswith("i")) for key, value in
                                                                                  (field.split("=") for field in fields.split(",")))


@pytest.mark.parametrize(("use_case", "schema"), [("devops", "tsbs-devops"), ("iot", "tsbs-iot")])
def test_devops_and_iot_lines_have_the_shape_of_tsbs_own(use_case, schema):
    """Each measurement's tags and fields, integers where TSBS's are (`i`), a line per row; IoT's null
    tags and fields left out of a line as TSBS leaves them: a line lacks at most one tag (or a capacity,
    a tag TSBS writes as a field) and one field."""
    output = tsbs_generate_data(f"--use-case={use_case}", "--seed=7", "--scale=3", "--log-interval=10s", "--timestamp-start=2016-01-01T00:00:00Z",
                                "--timestamp-end=2016-01-01T01:00:00Z", "--format=influx")
    theirs = [typed(line) for line in output.splitlines() if re.match(r"[a-z]+,", line)]
    spec = tsbs_spec(3, "10s", "2016-01-01T00:00:00Z", "2016-01-01T01:00:00Z", shape=schema)
    generator = TsbsGenerator(spec, 0)
    rows = next(generator.batches(0, None, 10**6)) if schema == "tsbs-iot" else generator.rows(0, generator.total)
    ours = [typed(line) for line in TsbsLines(USE_CASES[schema], spec.seed, 3).lines(rows).decode().splitlines()]
    assert len(ours) == generator.total and (schema == "tsbs-iot" or len(ours) == len(theirs))

    def whole(lines: list) -> dict[str, tuple[frozenset, frozenset]]:
        """Each measurement's tags and fields: those of its lines together."""
        found: dict[str, tuple[frozenset, frozenset]] = {}
        for measurement, tags, fields in lines:
            known = found.get(measurement, (frozenset(), frozenset()))
            found[measurement] = (known[0] | tags, known[1] | fields)
        return found

    assert whole(ours) == whole(theirs)
    for lines in (ours, theirs):
        complete = whole(lines)
        # A null tag: a tag, or a capacity field (TSBS writes a tag that is not a string as a field); a null field.
        assert all(len(complete[m][0] - tags) <= 1 and len(complete[m][0] - tags) + len(complete[m][1] - fields) <= 2 for m, tags, fields in lines)
    if schema == "tsbs-iot":  # ours writes TSBS's nulls too
        assert any(tags != whole(ours)[m][0] for m, tags, _ in ours) and any(fields != whole(ours)[m][1] for m, _, fields in ours)


def execution(name: str, start_ms: int, end_ms: int, hosts: tuple[str, ...] = ("host_3",)) -> Parameters:
    return Parameters({"hosts": hosts, "window": Window(start_ms, end_ms)} if DEVOPS[name].hosts else {"window": Window(start_ms, end_ms)})


def test_a_window_inside_buckets_is_a_range_query_and_an_instant_query_of_its_edges():
    """single-groupby-1-1-1 over [00:05:07.118, 01:05:07.118): the whole minutes 00:06..01:04 in one range
    query stamped at each minute's start, the partial 00:05 and 01:05 each with its own lookbehind, ending
    at its part's end, evaluated at the last one's start."""
    start, end = START + 5 * MINUTE_MS + 7_118, START + HOUR_MS + 5 * MINUTE_MS + 7_118
    planned = requests(DEVOPS["single-groupby-1-1-1"], execution("single-groupby-1-1-1", start, end))
    assert planned.whole == ("max(max_over_time(cpu_usage_user{hostname='host_3'}[60s] offset -59999.5ms)) by (__name__)",
                             START + 6 * MINUTE_MS, START + HOUR_MS + 4 * MINUTE_MS, MINUTE_MS)
    expression, at = planned.partial
    first, last = START + 5 * MINUTE_MS, START + HOUR_MS + 5 * MINUTE_MS
    assert at == last
    # [start, first + 1 min): 52,882 ms ending at first + 59,999 ms; [last, end): 7,118 ms ending at end - 1.
    # Each length with half a millisecond more (less when negative), which VictoriaMetrics' reading of a duration truncates.
    assert f"[{first + MINUTE_MS - start}.5ms] offset {at - (first + MINUTE_MS - 1)}.5ms" in expression
    assert f"[{end - last}.5ms] offset {at - (end - 1)}.5ms" in expression
    assert f'"{BUCKET_LABEL}", "{first}"' in expression and f'"{BUCKET_LABEL}", "{last}"' in expression


def test_a_window_of_whole_buckets_is_one_range_query():
    planned = requests(DEVOPS["double-groupby-5"], execution("double-groupby-5", START, START + 12 * HOUR_MS))
    assert planned.partial is None
    expression, first, last, step = planned.whole
    assert (first, last, step) == (START, START + 11 * HOUR_MS, HOUR_MS)
    assert expression == ("avg(avg_over_time({__name__=~'cpu_(usage_user|usage_system|usage_idle|usage_nice|usage_iowait)'}"
                          "[3600s] offset -3599999.5ms)) by (__name__, hostname)")


def test_several_hosts_are_selected_as_tsbs_does():
    planned = requests(DEVOPS["cpu-max-all-8"], execution("cpu-max-all-8", START, START + 8 * HOUR_MS, ("host_5", "host_9")))
    assert planned.whole[0].startswith("max(max_over_time({__name__=~'cpu_(usage_user|usage_system|")
    assert "usage_guest_nice)', hostname=~'host_5|host_9'}[3600s]" in planned.whole[0]


@pytest.mark.parametrize(("text", "size"), [("5.26 KB", 5_260), ("431.35 KB", 431_350), ("1.2 MB", 1_200_000), ("12 B", 12), ("Unknown", 0), ("", 0)])
def test_iotdb_region_sizes_are_read_as_si_units(text, size):
    assert size_in_bytes(text) == size
