"""TSBS's cpu-only and devops data as the tool makes them: as many rows and points as TSBS's
generator at the same scale, interval and time range, TSBS's order, tags and value distributions
(devops: its counters, derived fields and own tags), the same values whatever the workers and
batches, and the checker's recomputation equal to what was generated (IoT: test_tsbs_iot.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from iotdb_bench.simulator.spec import TSBS_TABLES, RunSpec, timestamp_ms
from iotdb_bench.simulator.workload import shapes
from iotdb_bench.simulator.workload.tsbs import hosts as tsbs_hosts
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from iotdb_bench.simulator.workload.tsbs.devops import DEVOPS
from iotdb_bench.simulator.workload.tsbs.series import HostValues

# Rows and points (fields) of TSBS's generator, counted in its output by
#   tsbs_generate_data --use-case=cpu-only --seed=123 --scale=S --log-interval=I --timestamp-start=A --timestamp-end=B \
#     --format=timescaledb | awk -F, '/^cpu,[0-9]/{rows++; points+=NF-2} END{print rows, points}'
# (TSBS 37fced7, built by ../shared/vendor/tsbs/build.sh), with first and last timestamps in ms where noted.
TSBS_COUNTS = [
    # (scale, interval, start, end): (rows, points)
    ((20, "10s", "2016-01-01T00:00:00Z", "2016-01-01T01:00:00Z"), (7_200, 72_000)),
    ((7, "7s", "2016-01-01T00:00:00Z", "2016-01-01T01:00:00Z"), (3_598, 35_980)),  # 3600 // 7 = 514 steps
    ((100, "10s", "2016-01-01T00:00:00Z", "2016-01-02T00:00:00Z"), (864_000, 8_640_000)),  # TSBS's default time range
    ((3, "1m", "2016-01-01T00:00:00Z", "2016-01-04T00:00:00Z"), (12_960, 129_600)),
    ((1000, "10s", "2016-01-01T00:00:00Z", "2016-01-01T00:10:00Z"), (60_000, 600_000)),
    ((20, "10s", "2016-01-01T00:00:00Z", "2016-01-01T13:00:00Z"), (93_600, 936_000)),  # the integration tests' data
    ((1000, "10s", "2016-01-01T00:00:00Z", "2016-01-04T00:00:00Z"), (25_920_000, 259_200_000)),  # seed 003's: benchANT's sizes
]
# First and last timestamps of the 20-host, 13-hour case: 1451606400000000000 and 1451653190000000000 ns.
FIRST_MS, LAST_MS = 1_451_606_400_000, 1_451_653_190_000
TSBS_BIN = Path(os.environ.get("TSBS_BIN", "/var/cache/tsbs-37fced7/bin"))


# The same for --use-case=devops (points: its 101 fields, in nine rows per host and step).
TSBS_DEVOPS_COUNTS = [
    ((5, "10s", "2016-01-01T00:00:00Z", "2016-01-01T01:00:00Z"), (16_200, 181_800)),
    ((3, "7s", "2016-01-01T00:00:00Z", "2016-01-01T01:00:00Z"), (13_878, 155_742)),
    ((20, "10s", "2016-01-01T00:00:00Z", "2016-01-01T13:00:00Z"), (842_400, 9_453_600)),
    ((100, "1m", "2016-01-01T00:00:00Z", "2016-01-02T00:00:00Z"), (1_296_000, 14_544_000)),
    ((1000, "10s", "2016-01-01T00:00:00Z", "2016-01-01T00:10:00Z"), (540_000, 6_060_000)),
]


def tsbs_spec(hosts: int, interval: str, start: str, end: str, workers: int = 1, shape: str = "tsbs-cpu", **fields) -> RunSpec:
    return RunSpec(run_id="tsbs", task="insert", target="null", module="null", workers=workers, devices=hosts, shape=shape, num_inserts=0,
                   primary_key="none", batch=1000, interval_ms=interval, start_ms=start, time_range_ms=timestamp_ms(end) - timestamp_ms(start), **fields)


def batches(spec: RunSpec, batch: int = 1000) -> list:
    """Every batch all workers generate (in each worker's order, workers one after the other)."""
    parts = []
    for worker in range(spec.workers):
        generator = shapes.generator(spec, worker)
        first, total = shapes.timed_stream(spec, worker, generator)
        parts += list(generator.batches(first, total, batch))
    return parts


def generated(spec: RunSpec, batch: int = 1000) -> dict[str, np.ndarray]:
    """Every row all workers generate, as columns (in each worker's order, workers one after the other):
    `measurement` its table's index, `fields` its values (NaN beyond its measurement's fields)."""
    parts = batches(spec, batch)
    return {"time": np.concatenate([p.timestamp_ms for p in parts]), "host": np.concatenate([p.host for p in parts]),
            "step": np.concatenate([p.sequence_number for p in parts]),
            "measurement": np.concatenate([np.zeros(len(p), dtype=np.int64) if p.table_index is None else p.table_index for p in parts]),
            "fields": np.concatenate([np.column_stack([p.temperature, *p.more]) for p in parts])}


def by_row(rows: dict[str, np.ndarray]) -> dict[tuple[int, int, int], tuple]:
    """(host, step, measurement) -> the row's fields (None for NaN: comparable), every row once."""
    keys = list(zip(rows["host"].tolist(), rows["step"].tolist(), rows["measurement"].tolist()))
    fields = [tuple(None if value != value else value for value in row) for row in rows["fields"].tolist()]
    found = dict(zip(keys, fields))
    assert len(found) == len(keys)
    return found


@pytest.mark.parametrize(("case", "counts", "shape"), [(*case, "tsbs-cpu") for case in TSBS_COUNTS] + [(*case, "tsbs-devops") for case in TSBS_DEVOPS_COUNTS])
def test_rows_and_points_equal_tsbs_generators(case, counts, shape):
    spec = tsbs_spec(*case, workers=3, shape=shape)
    data = TsbsData.of(spec)
    assert (shapes.timed_events(spec), data.points) == counts == (data.rows, round(data.rows * shapes.values_per_row(spec)))
    assert sum(shapes.timed_events(spec, worker) for worker in range(3)) == counts[0]


def test_the_generated_rows_are_tsbs_rows_in_tsbs_order():
    spec = tsbs_spec(20, "10s", "2016-01-01T00:00:00Z", "2016-01-01T13:00:00Z")
    rows = generated(spec)
    assert len(rows["time"]) == 93_600 and rows["fields"].shape == (93_600, 10)
    assert (rows["time"][0], rows["time"][-1]) == (FIRST_MS, LAST_MS)
    # Every host at each timestamp: host_0..host_19 at 00:00:00, then at 00:00:10, ...
    assert rows["host"][:40].tolist() == list(range(20)) * 2
    assert (np.diff(rows["time"].reshape(-1, 20)[:, 0]) == 10_000).all() and (rows["time"].reshape(-1, 20) == rows["time"][::20, None]).all()
    fields = rows["fields"]
    assert (fields == np.floor(fields)).all() and fields.min() >= 0 and fields.max() <= 100  # whole numbers in [0, 100], as TSBS's int64()


def test_value_distributions_are_tsbs():
    """Reference figures from TSBS's own rows (100 hosts, one day, 10 s; the command above, seed 123):
    steps of a host's field have a standard deviation of 1.072 (a walk of N(0, 1) steps written as
    whole numbers), 1.6% of the values sit at 0 and 0.65% at 100 (the clamp), the values spread over
    [0, 100] with a mean of 48.6, every tenth of the range holding 9-12% of them."""
    rows = generated(tsbs_spec(100, "10s", "2016-01-01T00:00:00Z", "2016-01-02T00:00:00Z"))
    values = rows["fields"]
    steps = np.diff(values.reshape(-1, 100, 10), axis=0)
    assert abs(steps.std() - 1.072) < 0.01 and abs(steps.mean()) < 0.01
    assert 0.008 < (values == 0).mean() < 0.03 and 0.002 < (values == 100).mean() < 0.015
    assert 45 < values.mean() < 55
    shares = np.histogram(values, bins=10, range=(0, 100.01))[0] / values.size
    assert shares.min() > 0.08 and shares.max() < 0.13, shares


@pytest.mark.parametrize("shape", ["tsbs-cpu", "tsbs-devops"])
def test_the_same_values_whatever_the_workers_batches_and_continuations(shape):
    one = by_row(generated(tsbs_spec(7, "10s", "2016-01-01T00:00:00Z", "2016-01-01T02:00:00Z", shape=shape), batch=1000))
    three = by_row(generated(tsbs_spec(7, "10s", "2016-01-01T00:00:00Z", "2016-01-01T02:00:00Z", workers=3, shape=shape), batch=333))
    assert one.keys() == three.keys() and all(one[key] == three[key] for key in one)
    # A run that continues the time range (--steps, --no-clean) starts its walks where the first one left them.
    second = generated(tsbs_spec(7, "10s", "2016-01-01T00:00:00Z", "2016-01-01T01:00:00Z", workers=2, stream_offset=360, shape=shape))
    assert second["step"].min() == 360 and second["time"][0] == FIRST_MS + 3_600_000
    assert all(one[key] == fields for key, fields in by_row(second).items())


@pytest.mark.parametrize("shape", ["tsbs-cpu", "tsbs-devops"])
def test_the_checker_recomputes_exactly_what_was_generated(shape):
    spec = tsbs_spec(7, "10s", "2016-01-01T00:00:00Z", "2016-01-01T02:00:00Z", workers=2, shape=shape)
    rows = by_row(generated(spec))
    data = TsbsData.of(spec)
    names = tuple(one.name for one in data.use_case.measurements)
    values = HostValues(data, names)
    values.spacing = 100  # checkpoints inside the data, so windows start after one
    values._checkpoints = np.zeros((720 // 100 + 1, 7, values._checkpoints.shape[-1]), dtype=np.int64)
    for hosts in (np.array([3]), np.array([6, 0, 2]), np.arange(7)):
        for steps in (range(0, 720), range(250, 613), range(719, 720)):
            for block, found in values.blocks(hosts, steps):
                for measurement, part in enumerate(found):
                    for i, step in enumerate(block):
                        assert all(part[i, j].tolist() == list(rows[(host, step, measurement)][: part.shape[-1]]) for j, host in enumerate(hosts.tolist()))


def test_devops_rows_are_tsbs_measurements_in_tsbs_order():
    """Every host's nine measurements at each step, cpu first (TSBS's order), with TSBS's fields: counters
    from 0 that only grow by about their mean a step, gauges in their bounds, disk's and mem's derived
    fields consistent with TSBS's formulas, kernel's boot_time fixed per host, redis's uptime the time
    since the start, and the measurements' own tags as JSON."""
    spec = tsbs_spec(4, "10s", "2016-01-01T00:00:00Z", "2016-01-01T03:00:00Z", shape="tsbs-devops")
    parts = batches(spec, 100_000)
    rows = generated(spec, 100_000)
    assert rows["measurement"][:36].tolist() == [m for m in range(9) for _ in range(4)] and rows["host"][:8].tolist() == [0, 1, 2, 3] * 2
    measurements = DEVOPS.measurements
    assert [one.name for one in measurements] == list(TSBS_TABLES["tsbs-devops"])
    assert sum(len(one.field_names) for one in measurements) == 101

    def field(table: str, name: str) -> np.ndarray:  # (steps, hosts)
        index = [one.name for one in measurements].index(table)
        return rows["fields"][rows["measurement"] == index][:, measurements[index].field_names.index(name)].reshape(-1, 4)

    reads, uptime, boot = field("diskio", "reads"), field("redis", "uptime_in_seconds"), field("kernel", "boot_time")
    assert (reads[0] == 0).all() and (np.diff(reads, axis=0) >= 0).all() and 49 < np.diff(reads, axis=0).mean() < 51
    assert uptime[:, 0].tolist() == [10 * step for step in range(1080)] and (boot == boot[0]).all() and boot.max() < 240
    total, free, used, percent = (field("disk", name) for name in ("total", "free", "used", "used_percent"))
    assert (total == 2**40).all() and (free + used == total).all() and (percent == np.trunc(100 * used / total)).all() and free[0, 0] == 2**39
    assert (field("disk", "inodes_free") == np.floor(free / 4096)).all() and (field("disk", "inodes_used") == 2**28 - field("disk", "inodes_free")).all()
    memory, available, mem_used = field("mem", "total"), field("mem", "available"), field("mem", "used")
    assert set(memory[0].tolist()) <= {8 << 30, 12 << 30, 16 << 30} and (available + mem_used == memory).all()
    assert (field("mem", "used_percent") == 100.0 * (mem_used / memory)).all() and (mem_used <= memory).all() and (mem_used >= 0).all()
    assert (field("nginx", "active") >= 0).all() and (field("nginx", "active") <= 100).all() and field("postgresl", "temp_bytes").max() > 1000
    assert np.diff(field("redis", "instantaneous_ops_per_sec")[:, 0]).mean() > 0.5  # an unbounded walk of N(1, 1) steps
    tags = next(batch.text[batch.table_index == 1][0].decode() for batch in parts)
    assert json.loads(tags).keys() == {"serial"} and len(json.loads(tags)["serial"]) == 11


def test_hosts_tags_are_tsbs_value_sets_and_the_same_for_a_seed():
    tags = tsbs_hosts.host_tags(seed=5, first=0, count=500)
    assert tags == tsbs_hosts.host_tags(seed=5, first=0, count=500) and tags != tsbs_hosts.host_tags(seed=6, first=0, count=500)
    assert tags[3] == tsbs_hosts.host_tags(seed=5, first=3, count=1)[0]
    regions = dict(tsbs_hosts.REGIONS)
    for _name, region, datacenter, rack, os_name, arch, team, service, version, environment in tags:
        assert datacenter in regions[region] and 0 <= int(rack) < 100 and 0 <= int(service) < 20 and version in ("0", "1")
        assert (os_name, arch, team, environment) in {(o, a, t, e) for o in tsbs_hosts.OPERATING_SYSTEMS for a in tsbs_hosts.ARCHITECTURES
                                                       for t in tsbs_hosts.TEAMS for e in tsbs_hosts.ENVIRONMENTS}
    assert [row[0] for row in tags[:3]] == ["host_0", "host_1", "host_2"]
    assert {row[1] for row in tags} == set(regions) and {row[3] for row in tags} >= {"0", "99"}  # every choice is drawn


def tsbs_rows(use_case: str, seed: int, scale: int, interval: str, end: str) -> list[list[str]]:
    """The data rows of TSBS's own output (timescaledb format: a measurement, the time in ns, the fields)."""
    output = tsbs_generate_data(f"--use-case={use_case}", f"--seed={seed}", f"--scale={scale}", f"--log-interval={interval}",
                                "--timestamp-start=2016-01-01T00:00:00Z", f"--timestamp-end={end}", "--format=timescaledb")
    return [fields for line in output.splitlines() if (fields := line.split(",")) and len(fields) > 1 and fields[1][:1].isdigit()]


@pytest.mark.parametrize("use_case", ["cpu-only", "devops"])
def test_counts_against_the_real_generator_when_it_is_built(use_case):
    """The counts, order and time range once more, straight from TSBS's binary."""
    shape = {"cpu-only": "tsbs-cpu", "devops": "tsbs-devops"}[use_case]
    found = tsbs_rows(use_case, 7, 13, "9s", "2016-01-01T02:00:00Z")
    spec = tsbs_spec(13, "9s", "2016-01-01T00:00:00Z", "2016-01-01T02:00:00Z", workers=2, shape=shape)
    rows = generated(spec)
    data = TsbsData.of(spec)
    assert (len(found), sum(len(row) - 2 for row in found)) == (data.rows, data.points) == (len(rows["time"]), data.points)
    assert sorted({int(row[1]) // 1_000_000 for row in found}) == sorted(set(rows["time"].tolist()))
    # TSBS's order: at each timestamp every measurement in turn, each for every host.
    tables = TSBS_TABLES[shape]
    assert [row[0] for row in found[: 13 * len(tables) : 13]] == list(tables)


def tsbs_generate_data(*flags: str) -> str:
    """What TSBS's own generator writes with these flags (build it with ../shared/vendor/tsbs/build.sh;
    TSBS_BIN names its bin folder; CI builds it: scripts/test.sh); the test is skipped where it is not built."""
    binary = TSBS_BIN / "tsbs_generate_data"
    if not binary.exists() and not shutil.which("tsbs_generate_data"):
        pytest.skip(f"TSBS's generator is not built ({binary}); ../shared/vendor/tsbs/build.sh builds it")
    return subprocess.run([str(binary) if binary.exists() else "tsbs_generate_data", *flags], capture_output=True, text=True, check=True, timeout=120).stdout
