"""The worker's ways of preparing the next batches (simulator/worker/preparing.py), checked with a recording
fake module (in memory): every batch reaches the database once, in stream order, whichever way it
was prepared, and during calls the next chunk is prepared while the database holds the last batch
of the current one."""

from __future__ import annotations

import pytest

from iotdb_bench.simulator.capabilities import PrepareNext
from iotdb_bench.simulator.modules.base import DatabaseModule, ReaderRole, RecordsRole, SchemaRole, WriterRole
from iotdb_bench.simulator.roles import WorkerHooks
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.worker.preparing import PIPELINES
from iotdb_bench.simulator.workload.events import CHUNK_EVENTS, EventGenerator


class RecordingFakeModule(DatabaseModule, SchemaRole, WriterRole, ReaderRole, RecordsRole):
    """Stores sequence numbers; `signal_calls` says how often an insert calls `while_waiting`. Plays
    every role itself (a real module gives each role a class of its own)."""

    schema = writer = reader = records = property(lambda self: self)

    def __init__(self, spec, signal_calls: int = 1):
        super().__init__(spec)
        self.signal_calls, self.log, self.stored = signal_calls, [], []

    def connect(self): pass
    def setup(self): pass
    def count(self): return len(self.stored)
    def server_version(self): return "fake"
    def insert_single(self, item): raise AssertionError("batch mode only")
    def queries(self): return {}

    def prepare_batch(self, batch):
        self.log.append(("prepare", int(batch.sequence_number[0])))
        return batch

    def insert_batch(self, prepared):
        self.log.append(("send", int(prepared.sequence_number[0])))
        for _ in range(self.signal_calls):  # more than once: a retried call
            self.hooks.while_waiting()
        self.stored.extend(prepared.sequence_number.tolist())
        self.log.append(("done", int(prepared.sequence_number[0])))


EVENTS, BATCH = 20_000, 1000
PER_CHUNK = CHUNK_EVENTS // BATCH  # batches per chunk


def _spec() -> RunSpec:
    return RunSpec(run_id="r", task="insert", target="t", module="null", workers=1, num_inserts=EVENTS, batch=BATCH)


def _pipeline(kind: PrepareNext, module: RecordingFakeModule):
    """The worker's pipeline of that kind, bound to the module as the worker binds it."""
    pipeline = PIPELINES[kind](module, EventGenerator(1, 0, 10).chunks(0, EVENTS, BATCH), BATCH)
    module.bind(WorkerHooks(while_waiting=pipeline.while_waiting))
    return pipeline


@pytest.mark.parametrize("pipeline", list(PrepareNext))
@pytest.mark.parametrize("signal_calls", [0, 1, 3])
def test_every_event_is_stored_once_in_stream_order(pipeline, signal_calls):
    module = RecordingFakeModule(_spec(), signal_calls)
    for events, prepared in _pipeline(pipeline, module):
        assert events == len(prepared) == BATCH
        module.insert_batch(prepared)
    assert module.stored == list(range(EVENTS))


def test_during_calls_the_next_chunk_is_prepared_while_the_database_holds_the_current_ones_last_batch():
    module = RecordingFakeModule(_spec(), signal_calls=2)
    for _, prepared in _pipeline(PrepareNext.during_call, module):
        module.insert_batch(prepared)
    firsts = list(range(0, EVENTS, BATCH))
    chunks = [firsts[i : i + PER_CHUNK] for i in range(0, len(firsts), PER_CHUNK)]
    expected = [("prepare", first) for first in chunks[0]]
    for index, chunk in enumerate(chunks):
        for first in chunk:
            expected.append(("send", first))
            if first == chunk[-1] and index + 1 < len(chunks):  # the last batch's call prepares the next chunk
                expected += [("prepare", upcoming) for upcoming in chunks[index + 1]]
            expected.append(("done", first))
    assert len(chunks) == 3 and module.log == expected
    module.hooks.while_waiting()  # after the run: a late call prepares nothing
    assert module.log[-1] == ("done", firsts[-1])
