"""The expected-answer bookkeeping: workers' tallies against a plain recount, merges across workers,
runs and steps, and the record the collector keeps with the data."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from iotdb_bench.simulator.checks.expected import DOWNSAMPLE_DEVICE, DOWNSAMPLE_START_MS, Expected, ExpectedRecord, Tally, merge_all
from iotdb_bench.simulator.collector import record_keeping
from iotdb_bench.simulator.collector.service import Collector
from iotdb_bench.simulator.protocol import WorkerResult
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import EventBatch, EventGenerator


def recount(batches: list[EventBatch]) -> dict[str, tuple]:
    """Per device (count, min, max, sum in hundredths, newest ms, low, high at newest), one event at a time."""
    found: dict[str, list] = {}
    for batch in batches:
        for device, value, ms in zip(batch.device_id.astype("U").tolist(), batch.temperature.tolist(), batch.timestamp_ms.tolist()):
            entry = found.setdefault(device, [0, value, value, 0, ms, []])
            entry[0] += 1
            entry[1], entry[2], entry[3] = min(entry[1], value), max(entry[2], value), entry[3] + round(value * 100)
            if ms > entry[4]:
                entry[4], entry[5] = ms, []
            if ms == entry[4]:
                entry[5].append(value)
    return {d: (c, lo, hi, s, ms, min(at), max(at)) for d, (c, lo, hi, s, ms, at) in found.items()}


def tallied(batches: list[EventBatch], worker: int = 0, devices: int = 10) -> Expected:
    tally = Tally.for_worker(worker, devices)
    for batch in batches:
        tally.add(batch)
    return tally.result()


def stream(worker: int = 0, devices: int = 10, events: int = 30_000, size: int = 1000, start: int = 0) -> list[EventBatch]:
    return list(EventGenerator(3, worker, devices).batches(start, events, size))


def test_tally_of_devices_taking_turns_equals_a_recount():
    batches = stream(events=150_000)  # more than one buffer fold
    assert tallied(batches).devices.rows() == recount(batches)


@pytest.mark.parametrize(("devices", "size"), [(7, 333), (1, 5000), (10, 70_001), (3, 1)])
def test_tally_with_odd_sizes_and_device_counts(devices, size):
    batches = stream(devices=devices, events=80_000 if size > 1 else 500, size=size, start=5)
    assert tallied(batches, devices=devices).devices.rows() == recount(batches)


def test_tally_of_shuffled_late_and_repeated_events():
    batches = stream(events=20_000)
    rng = np.random.default_rng(7)
    shuffled = [batch.select(rng.permutation(len(batch))) for batch in batches[:5]]
    late = [dataclasses.replace(batch, timestamp_ms=batch.timestamp_ms - 3_000) for batch in batches[5:8]]
    # Several readings of one device at its newest instant, with different values.
    last = batches[-1]
    tie = dataclasses.replace(last, temperature=last.temperature + 0.5)
    mixed = batches + shuffled + late + [tie]
    expected = tallied(mixed)
    assert expected.devices.rows() == recount(mixed)
    assert any(low != high for low, high in zip(expected.devices.newest_low, expected.devices.newest_high))


def test_downsample_buckets_cover_the_first_hour_of_worker_zeros_first_device():
    batches = stream(events=400_000, size=10_000)  # 40,000 s of data: more than the hour
    buckets = tallied(batches).downsample
    assert buckets.device == DOWNSAMPLE_DEVICE == "w000000-d000000"
    assert buckets.minute_ms == [DOWNSAMPLE_START_MS + 60_000 * m for m in range(60)]
    assert buckets.count == [60] * 60  # one reading per second (10 devices x 100 ms)
    readings = [(ms, v) for b in batches for d, ms, v in zip(b.device_index, b.timestamp_ms, b.temperature) if d == 0 and ms < DOWNSAMPLE_START_MS + 60_000]
    assert buckets.min[0] == min(v for _, v in readings) and buckets.max[0] == max(v for _, v in readings)
    assert buckets.sum_hundredths[0] == sum(round(v * 100) for _, v in readings)
    assert tallied(stream(worker=1), worker=1).downsample.minute_ms == []  # only worker 0 has the device


def test_merge_across_workers_runs_and_steps_equals_the_tally_of_everything():
    steps = [stream(worker=w, start=s * 30_000) for s in range(3) for w in range(2)]
    per_run = [tallied(batches, worker=w) for batches, w in zip(steps, [0, 1] * 3)]
    merged = merge_all(per_run)
    together = {**recount([b for batches in steps[0::2] for b in batches]), **recount([b for batches in steps[1::2] for b in batches])}
    assert merged.devices.rows() == together
    assert merged.count == 6 * 30_000
    assert merged.downsample.count == [60] * 60  # 3 x 3,000 s of the device from three steps: the whole hour
    # Merging is order-independent and the record survives its JSON round trip exactly.
    assert merge_all(reversed(per_run)) == merged
    record = ExpectedRecord(tables=["events"], complete=True, expected=merged)
    assert ExpectedRecord.load(record.dump()) == record


def test_records_that_cannot_be_trusted_or_read_say_why():
    assert ExpectedRecord.load(None) is None
    assert "did not finish" in ExpectedRecord(tables=["events"], complete=False).usable()
    assert ExpectedRecord(tables=["events"], complete=True).usable() is None
    assert "cannot be read" in ExpectedRecord.load("{not json").usable()
    assert "format 99" in ExpectedRecord.load('{"format": 99, "tables": [], "complete": true}').usable()


class Runs:
    """Insert runs through the collector's own record keeping, on a real SQLite file; the workers'
    results carry tallies of generated events as real workers' do."""

    def __init__(self, path):
        self.path = path
        self.offset = 0

    def insert(self, workers: int, events: int, clean: bool = True, tables: str = "single", finish: bool = True) -> Collector:
        spec = RunSpec(run_id="run-t", task="insert", target="sqlite", module="sqlite", workers=workers, clean=clean, batch=1000,
                       num_inserts=events, tables=tables, connection={"path": str(self.path)})
        collector = Collector(spec)
        collector.prepare()
        assert collector.state.phase == "waiting", collector.state.error
        module, results = collector.module, []
        for worker in range(workers):
            tally = Tally.for_worker(worker, 10)
            for batch in EventGenerator(1, worker, 10).batches(self.offset, events, 1000):
                tally.add(batch)
                module.writer.insert_batch(module.writer.prepare_batch(batch))
            results.append(WorkerResult(worker=worker, started_at=0, finished_at=1, events=events, expected=tally.result()))
        self.offset += events
        if finish:
            record_keeping.finish_record(collector.module, collector.state.record_base, results)
        return collector

    def record(self, tables: str = "single") -> ExpectedRecord | None:
        spec = RunSpec(run_id="run-q", task="query", target="sqlite", module="sqlite", workers=1, tables=tables,
                       connection={"path": str(self.path)})
        collector = Collector(spec)
        collector.prepare()
        return ExpectedRecord.load(collector.module.records.stored_record())


def test_record_accumulates_across_no_clean_runs_and_steps_and_resets_on_clean(tmp_path):
    runs = Runs(tmp_path / "data.sqlite3")
    runs.insert(workers=2, events=3000)
    runs.insert(workers=3, events=2000, clean=False)  # a --no-clean run with another worker count
    runs.insert(workers=3, events=1000, clean=False)  # a further step
    record = runs.record()
    assert record.usable() is None and record.insert_runs == 3
    assert record.expected.count == 2 * 3000 + 3 * 2000 + 3 * 1000
    assert len(record.expected.devices.device) == 30
    runs.insert(workers=1, events=500)  # --clean: a fresh record
    record = runs.record()
    assert record.insert_runs == 1 and record.expected.count == 500
    # One record, the last insert's, whatever the tables: a query finds it and reads its tables.
    assert runs.record(tables="multiple").tables == ["events"]
    runs.insert(workers=1, events=500, tables="multiple")
    assert runs.record().tables == ["events0", "events1", "events2", "events3"] and runs.record().usable() is None
    # A --no-clean insert into other tables than the recorded ones cannot add to the record.
    runs.insert(workers=1, events=500, clean=False)
    assert "the last recorded insert wrote events0,events1,events2,events3" in runs.record().usable()


def test_record_of_an_unfinished_run_or_of_foreign_data_is_not_trusted(tmp_path):
    runs = Runs(tmp_path / "data.sqlite3")
    runs.insert(workers=1, events=1000)
    runs.insert(workers=1, events=1000, clean=False, finish=False)  # a worker died: no result, no finish
    assert "did not finish" in runs.record().usable()
    runs.insert(workers=1, events=1000, clean=False)  # later runs cannot repair it
    assert "did not finish" in runs.record().usable()
    runs.insert(workers=1, events=1000)
    assert runs.record().usable() is None
    # Rows written behind the tool's back before a --no-clean run: the record no longer accounts for them.
    import sqlite3

    with sqlite3.connect(runs.path) as db:
        db.execute("DELETE FROM events WHERE rowid IN (SELECT rowid FROM events LIMIT 3)")
    runs.insert(workers=1, events=1000, clean=False)
    assert "the record accounts for 1,000" in runs.record().usable()


def test_a_record_says_which_workloads_query_and_scan_cannot_read():
    assert ExpectedRecord(tables=["events"], complete=True).unreadable() is None
    light = ExpectedRecord(tables=["events0", "events1"], complete=True, shape="light").unreadable()
    assert light.startswith("the data in events0,events1 was written with --schema light, --measurements 1, --sensors 1;")
    assert "--measurements 4" in ExpectedRecord(tables=["events"], complete=True, measurements=4).unreadable()
    assert "--sensors 2" in ExpectedRecord(tables=["events"], complete=True, sensors=2).unreadable()
    # A record saved before workloads were recorded is of the default workload.
    assert ExpectedRecord.load('{"format": 1, "tables": ["events"], "complete": true}').unreadable() is None
