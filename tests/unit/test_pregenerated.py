"""--pregenerate's batches (simulator/worker/pregenerated.py): all made before the timed loop, in stream order,
none prepared again while the loop sends them; a worker that would hold more than its limit stops with
one line before the start."""

import pytest

from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.worker.pregenerated import Pregenerated, PregenerateTooLarge, container_limit_bytes
from iotdb_bench.simulator.workload import shapes


def null_writer(batch: int):
    spec = RunSpec(run_id="t", task="insert", target="null", module="null", workers=1, batch=batch, num_inserts=10_000, pregenerate=True)
    module = module_class("null")(spec)
    module.connect()
    return spec, module.writer


class CountingWriter:
    def __init__(self, writer):
        self.writer, self.prepared = writer, 0

    def prepare_batches(self, chunk, size):
        prepared = self.writer.prepare_batches(chunk, size)
        self.prepared += len(prepared)
        return prepared


def test_every_batch_is_prepared_before_the_loop_and_never_again():
    spec, writer = null_writer(batch=1000)
    counting = CountingWriter(writer)
    pregenerated = Pregenerated(counting, shapes.generator(spec, 0).chunks(500, 10_000, 1000), 1000, 10_000)
    assert counting.prepared == 10
    sent = list(pregenerated)
    assert counting.prepared == 10  # the loop only sends
    assert [count for count, _ in sent] == [1000] * 10
    # in stream order, from the first timed position: the same bytes as each batch encoded on its own
    direct = [writer.prepare_batch(batch) for batch in shapes.generator(spec, 0).batches(500, 10_000, 1000)]
    assert [prepared for _, prepared in sent] == direct
    assert pregenerated.held_bytes >= 0


def test_batches_above_the_limit_stop_the_worker_in_one_line():
    spec, writer = null_writer(batch=1000)
    with pytest.raises(PregenerateTooLarge) as raised:
        Pregenerated(writer, shapes.generator(spec, 0).chunks(0, 2_000_000, 1000), 1000, 2_000_000, limit_bytes=4 << 20)
    message = str(raised.value)
    assert "\n" not in message and "above the 4 MiB a worker may hold" in message and "of this worker's 2,000,000 events" in message


def test_a_containers_memory_limit_is_read_from_cgroup_v2_or_v1(tmp_path):
    v2, v1 = tmp_path / "memory.max", tmp_path / "memory.limit_in_bytes"
    assert container_limit_bytes((str(v2), str(v1))) is None  # neither file: no container limit
    v1.write_text("9223372036854771712\n")  # cgroup v1 without a limit
    assert container_limit_bytes((str(v2), str(v1))) is None
    v1.write_text("1073741824\n")
    assert container_limit_bytes((str(v2), str(v1))) == 1 << 30
    v2.write_text("max\n")
    assert container_limit_bytes((str(v2), str(v1))) is None  # v2 first: no limit there
    v2.write_text("536870912\n")
    assert container_limit_bytes((str(v2), str(v1))) == 512 << 20
