"""The NumPy-built BSON documents of the mongodb module are the bytes bson.encode writes."""

import bson
import numpy as np
from bson.datetime_ms import DatetimeMS
from bson.int64 import Int64

from iotdb_bench.simulator.wire import bson_events
from iotdb_bench.simulator.workload.events import EventGenerator


def reference(batch, keys=None) -> list[bytes]:
    documents = []
    for i in range(len(batch)):
        document = {"timestamp": DatetimeMS(int(batch.timestamp_ms[i])), "device_id": batch.device_id[i].decode(),
                    "sequence_number": Int64(int(batch.sequence_number[i])), "temperature": float(batch.temperature[i])}
        documents.append(bson.encode({"_id": keys[i].decode(), **document} if keys is not None else document))
    return documents


def test_documents_are_the_bytes_bson_encode_writes():
    batch = EventGenerator(3, 12, 10).batch(5_000_000_000, 500)  # sequence numbers beyond 32 bits
    assert bson_events.encode(batch) == reference(batch)
    assert bson_events.encode(batch, batch.client_key) == reference(batch, batch.client_key)
    decoded = bson.decode(bson_events.encode(batch)[7])
    assert list(decoded) == ["timestamp", "device_id", "sequence_number", "temperature"]
    assert decoded["sequence_number"] == batch.sequence_number[7] and isinstance(decoded["sequence_number"], Int64)


def test_ids_shorter_than_their_column_are_left_to_the_per_document_path():
    batch = EventGenerator(1, 0, 2).batch(0, 4)
    short = np.array([b"w0-d1"] * 4, dtype="S15")
    assert bson_events.encode(batch, short) is None
    assert bson_events.encode(batch) is not None
