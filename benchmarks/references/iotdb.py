"""IoTDB: the `apache-iotdb` Session's insert_aligned_tablets, the tree model as the tool's iotdb module
writes it by default: one aligned device per simulated device (root.ref.ref_events.`<device id>`,
measurements sequence_number INT64 and temperature DOUBLE, created by each Writer before the clock),
a batch as one aligned NumpyTablet per device (big-endian columns, time order), all of them in one
call. Done when the call has returned; the points are countable then."""

from __future__ import annotations

import os

import numpy as np

from ._events import DEVICES, Events

TARGET = "iotdb-local"
CONTRACT = "insert_aligned_tablets returned (acknowledged); countable then (timed until the last acknowledgement, the count checks)"
COUNTABLE_WHEN_ACKNOWLEDGED = True
DATABASE, TABLE = "root.ref", "ref_events"
TOOL_DATABASE = "root.iotbench"  # the iotdb-local target's
MEASUREMENTS = ["sequence_number", "temperature"]


def _session():
    from iotdb.Session import Session

    session = Session(os.environ.get("IOTDB_HOST", "127.0.0.1"), int(os.environ.get("IOTDB_PORT", "6667")),
                      "root", os.environ.get("IOTDB_PASSWORD", "root"), zone_id="UTC")
    session.open(False)
    return session


def reset() -> None:
    from iotdb.utils.exception import StatementExecutionException

    session = _session()
    # The tool's database of the measurement before goes too (the next tool run makes it anew): each
    # database holds data regions in the DataNode's direct memory, and the test server's 256 MB hold
    # too few for the reference's beside the tool's and the contract tests' ("no available
    # DataRegionGroup").
    for database in (DATABASE, TOOL_DATABASE):
        try:
            session.execute_non_query_statement(f"DELETE DATABASE {database}")
        except StatementExecutionException as error:
            if "does not exist" not in str(error) and "not exist" not in str(error).lower():
                raise
    session.execute_non_query_statement(f"CREATE DATABASE {DATABASE}")
    session.close()


def drop() -> None:
    """The database goes whole: each one holds data regions in the DataNode's direct memory, which a
    small server (the test server's 256 MB) runs out of, refusing the next database."""
    session = _session()
    session.execute_non_query_statement(f"DELETE DATABASE {DATABASE}")
    session.close()


_counting = []  # count()'s session, opened once


def count() -> int:
    if not _counting:
        _counting.append(_session())
    with _counting[0].execute_query_statement(f"SELECT count(temperature) FROM {DATABASE}.** GROUP BY LEVEL = 1") as data:
        frame = data.todf()
    return int(frame.iloc[0, 0]) if len(frame) else 0


class Writer:
    def __init__(self, worker: int, batch: int):
        from iotdb.utils.IoTDBConstants import TSDataType

        self.events, self.session = Events(worker, batch), _session()
        self.paths = [f"{DATABASE}.{TABLE}.`{device}`" for device in self.events.devices.tolist()]
        self.types = [TSDataType.INT64, TSDataType.DOUBLE]
        for path in self.paths:
            self.session.execute_non_query_statement(f"CREATE ALIGNED TIMESERIES {path}(sequence_number INT64, temperature DOUBLE)")

    def body(self, index: int) -> list:
        from iotdb.utils.NumpyTablet import NumpyTablet

        times, device, sequence, values = self.events.columns(index)
        times, sequence, values = times.astype(">i8"), sequence.astype(">i8"), values.astype(">f8")
        tablets = []
        for d in range(DEVICES):
            mine = np.flatnonzero(device == d)
            tablets.append(NumpyTablet(self.paths[d], MEASUREMENTS, self.types, [sequence[mine], values[mine]], times[mine]))
        return tablets

    def send(self, body: list) -> None:
        self.session.insert_aligned_tablets(body)
