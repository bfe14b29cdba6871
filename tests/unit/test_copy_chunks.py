"""A chunk of batches encoded at once (`prepare_batches`) gives the same COPY buffers, byte for byte, as
each batch encoded on its own, for PostgreSQL, TimescaleDB (whose restarted timestamps must be applied
once) and the null target, whatever the shape, key or batch size (a chunk shorter than one batch too);
the timed loop sends the former. Every chunk's buffers are compared after all of them are made: a
buffer must stay as it was while later chunks are made (a retried batch sends its own rows again)."""

from __future__ import annotations

import pytest

from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload import shapes

WORKLOADS = [{}, {"primary_key": "client"}, {"shape": "large"}, {"measurements": 3}]
# Every workload with each module's way of encoding; several tables with the plain workload alone.
CASES = [(module, extra, workload) for module, extra in [("postgres", {}), ("timescaledb", {"restart_timestamps_each_step": "true"}), ("null", {}),
                                                         ("postgres", {"use_values_lists": "true"})] for workload in WORKLOADS]
CASES.append(("postgres", {}, {"tables": 3}))


@pytest.mark.parametrize("module,extra,workload", CASES)
@pytest.mark.parametrize("batch", [1000, 999, 10_000, 50_000])
def test_a_chunk_encodes_as_its_batches_one_by_one(module, extra, workload, batch):
    spec = RunSpec(run_id="chunks", task="insert", target="t", module=module, workers=1, batch=batch, num_inserts=30_000,
                   stream_offset=40_000, extra=extra, **workload)
    writer = module_class(module)(spec).writer
    generator = shapes.generator(spec, 0)
    chunked = [prepared for chunk in generator.chunks(40_000, 30_000, batch) for prepared in writer.prepare_batches(chunk, batch)]
    one_by_one = [writer.prepare_batch(b) for b in shapes.generator(spec, 0).batches(40_000, 30_000, batch)]
    assert len(chunked) == -(-30_000 // batch)
    assert chunked == one_by_one


def test_a_block_of_buffers_is_written_again_only_once_none_of_its_buffers_is_held():
    spec = RunSpec(run_id="chunks", task="insert", target="t", module="postgres", workers=1, batch=1000, num_inserts=80_000)
    writer = module_class("postgres")(spec).writer
    chunks = list(shapes.generator(spec, 0).chunks(0, 80_000, 1000))
    held = writer.prepare_batches(chunks[0], 1000)[3][0][1]  # one buffer kept, as a retry keeps it
    kept = bytes(held)
    blocks = {id(writer.prepare_batches(chunk, 1000)[0][0][1].obj) for chunk in chunks[1:]}
    assert bytes(held) == kept
    assert id(held.obj) not in blocks
    assert len(blocks) == 1  # the others' buffers were dropped at once: one block served them all
