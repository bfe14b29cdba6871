"""The collector's record keeping: the record of expected answers an insert run adds to, saved
marked incomplete before the run and complete after it (simulator/checks/expected.py), through the
module's `records` role. A module whose capabilities say it keeps no record is never asked."""

from __future__ import annotations

from collections.abc import Iterable

from iotdb_bench.simulator.checks.expected import Expected, ExpectedRecord, merge_all
from iotdb_bench.simulator.modules import DatabaseModule
from iotdb_bench.simulator.protocol import WorkerResult
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.tsbs.data import TsbsData


def start_record(spec: RunSpec, module: DatabaseModule, count: int | None) -> ExpectedRecord:
    """The record this insert run will add to, saved at once marked incomplete: a run that does not
    finish leaves a record that says so, and a later query does not trust it."""
    tables = spec.table_names
    workload = {"tables": tables, "shape": spec.shape, "measurements": spec.measurements, "sensors": spec.sensors}
    keeps = module.capabilities.record
    if spec.clean or not count:
        base = ExpectedRecord(complete=True, **workload)
        if spec.tsbs and spec.stream_offset:  # steps of a continuing run are added to none written before
            base = base.model_copy(update={"problem": f"a run of --schema {spec.shape} continued at step {spec.stream_offset:,} of empty tables"})
    elif keeps is not True:  # nothing to add to
        base = ExpectedRecord(tables=tables, complete=True, problem=f"module '{spec.module}' keeps no record of expected answers: {keeps.because}")
    else:
        base = ExpectedRecord.load(module.records.stored_record())
        if base is None:
            base = ExpectedRecord(tables=tables, complete=True, problem=(
                f"the tables held {count:,} events before the tool's first recorded insert (written by something else)"))
        elif base.usable() is not None:
            base = base.model_copy(update={"problem": base.usable()})  # stays unusable until a clean run
        elif (base.tables, base.shape, base.measurements, base.sensors) != tuple(workload.values()):
            base = base.model_copy(update={"problem": (
                f"the last recorded insert wrote {','.join(base.tables)} with {base.workload()}, not this run's tables and workload")})
        elif base.rows != count:
            base = base.model_copy(update={"problem": (
                f"the tables held {count:,} events before an insert run, but the record accounts for {base.rows:,}")})
        elif spec.tsbs and not (base.tsbs is not None and base.tsbs.same_series(TsbsData.of(spec)) and base.tsbs.steps == spec.stream_offset):
            base = base.model_copy(update={"problem": (
                f"the last recorded insert of --schema {spec.shape} wrote other hosts, seed, start or interval, or not the steps "
                f"before this run's (it continues at step {spec.stream_offset:,})")})
    base = base.model_copy(update=workload)
    if keeps is True:
        module.records.store_record(base.model_copy(update={"complete": False}).dump())
    return base


def finish_record(module: DatabaseModule, base: ExpectedRecord | None, results: Iterable[WorkerResult], markers: int = 0) -> str:
    """Add the workers' tallies (TSBS's shapes: the steps written) to the record and save it; says what was left."""
    spec = module.spec
    if base is None:
        return "no record kept (the database was not prepared)"
    keeps = module.capabilities.record
    if keeps is not True:
        return f"no record kept: {keeps.because}"
    merged = merge_all((r.expected or Expected() for r in results), base.expected)
    record = base.model_copy(update={"complete": True, "insert_runs": base.insert_runs + 1, "expected": merged})
    if spec.tsbs:  # every host's rows of the run's steps, after those before: the values follow from the seed
        record = record.model_copy(update={"tsbs": TsbsData.of(spec)})
    if markers and not record.problem:  # the probe's events are no worker's: no tally has them
        record = record.model_copy(update={"problem": f"--visibility wrote {markers:,} marker events that the record does not account for"})
    module.records.store_record(record.dump())
    if record.problem:
        return f"record saved, but it does not describe the data: {record.problem}"
    if record.tsbs is not None:
        return (f"record saved: {record.tsbs.hosts:,} {record.tsbs.use_case.entity}s, {record.rows:,} rows over {record.insert_runs} "
                "insert run(s)")
    return f"record saved: {len(merged.devices.device):,} devices, {merged.count:,} events over {record.insert_runs} insert run(s)"
