"""What a query file's parameters draw from (`Written`, simulator/queries/parameters.py): the devices,
time range, measurements and value range of the data, from the record of what the tool wrote (a
`query` run), or from the run spec of the insert that is writing it (a mixed run's query clients, and
the collector's check of the texts before the timed phase).
"""

from __future__ import annotations

import hashlib
import json

from iotdb_bench.simulator.checks.expected import ExpectedRecord
from iotdb_bench.simulator.queries.parameters import Written
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import EVENT_INTERVAL_MS, TIME_ORIGIN_MS, device_ids
from iotdb_bench.simulator.workload.tsbs.data import TsbsData
from iotdb_bench.simulator.workload.tsbs.usecases import CPU, CPU_FIELDS

# The tool's events: each device's base temperature is 15 to 25 degrees, its readings the base +- 5.
EVENT_VALUES = (10.0, 30.0)


def of_record(record: ExpectedRecord) -> Written:
    """What the record says was written."""
    if record.tsbs is not None:
        return of_tsbs(record.tsbs)
    devices = record.expected.devices
    end = max(devices.newest_ms, default=TIME_ORIGIN_MS) + 1
    values = (min(devices.min), max(devices.max)) if devices.device else None
    return Written("device", len(devices.device), TIME_ORIGIN_MS, end, names=devices.device, measurements=measurement_names(record.measurements),
                   values=values)


def of_spec(spec: RunSpec) -> Written:
    """What the insert run of `spec` writes: all its devices, and the time range of the events each
    worker writes before its timed phase ends (a --duration run: what its prefill writes, at least one interval)."""
    if spec.tsbs:
        return of_tsbs(TsbsData.of(spec))
    names = [name.decode() for worker in range(spec.workers) for name in device_ids(worker, spec.devices_of(worker))]
    events = max(spec.prefill_share(worker) + (0 if spec.duration_s else spec.num_inserts) for worker in range(spec.workers))
    return Written("device", len(names), TIME_ORIGIN_MS, TIME_ORIGIN_MS + max(events, 1) * EVENT_INTERVAL_MS, names=names,
                   measurements=measurement_names(spec.measurements), values=EVENT_VALUES)


def of_tsbs(data: TsbsData) -> Written:
    field = CPU.fields[0].walk
    return Written("host", data.hosts, data.start_ms, data.end_ms, measurements=CPU_FIELDS, values=(field.low, field.high), value_step=1.0)


def measurement_names(count: int) -> tuple[str, ...]:
    """The tool's events' measurements: temperature, m1 .. m{count-1}."""
    return ("temperature", *(f"m{index}" for index in range(1, count)))


def fingerprint(record: ExpectedRecord | None) -> str | None:
    """Of the data a record describes, when it does: equal on two targets that hold the same data (same
    seed, shape, devices and counts); None when the record is missing or does not describe the data."""
    if record is None or record.usable():
        return None
    described = record.model_dump(mode="json", include={"tables", "shape", "measurements", "sensors", "expected", "tsbs"})
    return hashlib.sha256(json.dumps(described, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
