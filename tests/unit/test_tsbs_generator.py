"""TSBS's cpu-only data as the tool makes it: as many rows and points as TSBS's generator at the same
scale, interval and time range, TSBS's order, tags and value distributions, the same values whatever
the workers and batches, and the checker's recomputation equal to what was generated."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from iotdb_bench.simulator.spec import RunSpec, timestamp_ms
from iotdb_bench.simulator.workload import shapes
from iotdb_bench.simulator.workload.tsbs import hosts as tsbs_hosts
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
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


def tsbs_spec(hosts: int, interval: str, start: str, end: str, workers: int = 1, **fields) -> RunSpec:
    return RunSpec(run_id="tsbs", task="insert", target="null", module="null", workers=workers, devices=hosts, shape="tsbs-cpu", num_inserts=0,
                   primary_key="none", batch=1000, interval_ms=interval, start_ms=start, time_range_ms=timestamp_ms(end) - timestamp_ms(start), **fields)


def generated(spec: RunSpec, batch: int = 1000) -> dict[str, np.ndarray]:
    """Every row all workers generate, as columns (in each worker's order, workers one after the other)."""
    parts = []
    for worker in range(spec.workers):
        generator = shapes.generator(spec, worker)
        first, total = shapes.timed_stream(spec, worker, generator)
        parts += list(generator.batches(first, total, batch))
    return {"time": np.concatenate([p.timestamp_ms for p in parts]), "host": np.concatenate([p.host for p in parts]),
            "step": np.concatenate([p.sequence_number for p in parts]),
            "fields": np.concatenate([np.column_stack([p.temperature, *p.more]) for p in parts])}


@pytest.mark.parametrize(("case", "counts"), TSBS_COUNTS)
def test_rows_and_points_equal_tsbs_generators(case, counts):
    spec = tsbs_spec(*case, workers=3)
    points = spec.timed_events() * shapes.layout(spec).values_per_row
    assert (spec.timed_events(), points) == counts
    assert sum(spec.timed_events(worker) for worker in range(3)) == counts[0]


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


def test_the_same_values_whatever_the_workers_batches_and_continuations():
    one = generated(tsbs_spec(7, "10s", "2016-01-01T00:00:00Z", "2016-01-01T02:00:00Z"), batch=1000)
    three = generated(tsbs_spec(7, "10s", "2016-01-01T00:00:00Z", "2016-01-01T02:00:00Z", workers=3), batch=333)
    by_row = {(h, s): tuple(f) for h, s, f in zip(one["host"].tolist(), one["step"].tolist(), one["fields"].tolist())}
    assert by_row == {(h, s): tuple(f) for h, s, f in zip(three["host"].tolist(), three["step"].tolist(), three["fields"].tolist())}
    # A run that continues the time range (--steps, --no-clean) starts its walks where the first one left them.
    second = generated(tsbs_spec(7, "10s", "2016-01-01T00:00:00Z", "2016-01-01T01:00:00Z", workers=2, stream_offset=360))
    assert second["step"].min() == 360 and second["time"][0] == FIRST_MS + 3_600_000
    assert all(by_row[(h, s)] == tuple(f) for h, s, f in zip(second["host"].tolist(), second["step"].tolist(), second["fields"].tolist()))


def test_the_checker_recomputes_exactly_what_was_generated():
    spec = tsbs_spec(7, "10s", "2016-01-01T00:00:00Z", "2016-01-01T02:00:00Z", workers=2)
    rows = generated(spec)
    by_row = {(h, s): f for h, s, f in zip(rows["host"].tolist(), rows["step"].tolist(), rows["fields"].tolist())}
    values = HostValues(TsbsData.of(spec))
    values.spacing = 100  # checkpoints inside the data, so windows start after one
    values._checkpoints = np.zeros((720 // 100 + 1, 7, 10), dtype=np.int64)
    for hosts in (np.array([3]), np.array([6, 0, 2]), np.arange(7)):
        for steps in (range(0, 720), range(250, 613), range(719, 720)):
            for block, found in values.blocks(hosts, steps):
                for i, step in enumerate(block):
                    assert all(found[i, j].tolist() == by_row[(host, step)] for j, host in enumerate(hosts.tolist()))


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


def test_counts_against_the_real_generator_when_it_is_built():
    """The counts and time range once more, straight from TSBS's binary (build it with
    ../shared/vendor/tsbs/build.sh; TSBS_BIN names its bin folder)."""
    output = tsbs_generate_data("--use-case=cpu-only", "--seed=7", "--scale=13", "--log-interval=9s", "--timestamp-start=2016-01-01T00:00:00Z",
                                "--timestamp-end=2016-01-01T02:00:00Z", "--format=timescaledb")
    cpu = [line.split(",") for line in output.splitlines() if line.startswith("cpu,1")]
    spec = tsbs_spec(13, "9s", "2016-01-01T00:00:00Z", "2016-01-01T02:00:00Z", workers=2)
    rows = generated(spec)
    assert (len(cpu), sum(len(row) - 2 for row in cpu)) == (spec.timed_events(), spec.timed_events() * 10)
    assert sorted({int(row[1]) // 1_000_000 for row in cpu}) == sorted(set(rows["time"].tolist()))


def tsbs_generate_data(*flags: str) -> str:
    """What TSBS's own generator writes with these flags; the test is skipped where it is not built."""
    binary = TSBS_BIN / "tsbs_generate_data"
    if not binary.exists() and not shutil.which("tsbs_generate_data"):
        pytest.skip(f"TSBS's generator is not built ({binary}); ../shared/vendor/tsbs/build.sh builds it")
    return subprocess.run([str(binary) if binary.exists() else "tsbs_generate_data", *flags], capture_output=True, text=True, check=True, timeout=60).stdout
