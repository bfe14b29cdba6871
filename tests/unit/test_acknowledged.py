"""The timed phase counts the acknowledged events and replays them afterwards for the expected
answers: the replay must give exactly the events sent, in order, whatever the workload."""

from __future__ import annotations

import numpy as np
import pytest

from iotdb_bench.simulator.checks.acknowledged import AcknowledgedPrefix
from iotdb_bench.simulator.checks.expected import Tally
from iotdb_bench.simulator.workload.events import EventGenerator


@pytest.mark.parametrize("options", [{}, {"order": "random"}, {"late_fraction": 0.2, "max_lateness_s": 5.0}, {"sensors": 3}])
@pytest.mark.parametrize("acknowledged_events", [0, 1000, 2500, 4321])
def test_the_replay_is_the_acknowledged_prefix_of_the_stream(options, acknowledged_events):
    def stream():
        return EventGenerator(7, 1, 10, **options).batches(100, 6000, 1000)

    sent = []
    prefix = AcknowledgedPrefix(stream)
    # as the timed loop does: the generator's chunks, cut into batches, each acknowledged batch counted
    for batch in (batch for chunk in EventGenerator(7, 1, 10, **options).chunks(100, 6000, 1000) for batch in chunk.split(1000)):
        take = min(len(batch), acknowledged_events - len(sent))
        if take <= 0:
            break
        sent.extend(zip(batch.sequence_number[:take].tolist(), batch.temperature[:take].tolist()))
        prefix.add(take)
    replayed = [pair for batch in prefix.replay() for pair in zip(batch.sequence_number.tolist(), batch.temperature.tolist())]
    assert replayed == sent
    assert len(replayed) == acknowledged_events


def test_the_tally_of_the_replay_equals_the_tally_kept_in_the_loop():
    def stream():
        return EventGenerator(3, 0, 10, late_fraction=0.1).batches(0, 5000, 1000)

    in_loop = Tally.for_worker(0, 10)
    prefix = AcknowledgedPrefix(stream)
    for batch in (batch for chunk in EventGenerator(3, 0, 10, late_fraction=0.1).chunks(0, 5000, 1000) for batch in chunk.split(1000)):
        in_loop.add(batch)
        prefix.add(len(batch))
    replayed = Tally.for_worker(0, 10)
    for batch in prefix.replay():
        replayed.add(batch)
    assert replayed.result() == in_loop.result()
    assert np.sum(replayed.count) == 5000
