"""The victoriametrics module's record of expected answers, kept as samples (a metrics store keeps no
text): the zlib-compressed record, four bytes per sample (exact integers), in the series
`iotbench_expected{tables="<tables>"}`; each save writes a new block (a length sample, then the data)
ten minutes of sample times after the last one, and the newest complete block is the record
(VictoriaMetrics cannot overwrite a sample)."""

from __future__ import annotations

import json
import logging
import zlib

import numpy as np

from iotdb_bench.simulator.modules.base import RECORD_NAME, ModuleError, RecordsRole
from iotdb_bench.simulator.modules.victoriametrics.options import RECORD_BLOCK_MS, RECORD_BYTES_PER_SAMPLE, VmRole
from iotdb_bench.simulator.workload.events import TIME_ORIGIN_MS

log = logging.getLogger("victoriametrics")


class VmRecords(VmRole, RecordsRole):
    def store_record(self, text: str) -> None:
        data = zlib.compress(text.encode())
        blocks = self._record_blocks()
        start = TIME_ORIGIN_MS + (max(blocks) + 1 if blocks else 0) * RECORD_BLOCK_MS
        padded = data + bytes(-len(data) % RECORD_BYTES_PER_SAMPLE)
        values = [len(data), *np.frombuffer(padded, dtype=">u4").tolist()]
        if len(values) > RECORD_BLOCK_MS:
            raise ModuleError(f"the record of expected answers ({len(data):,} bytes compressed) does not fit one block of samples")
        line = {"metric": {"__name__": RECORD_NAME, "tables": self.record_key()}, "values": values,
                "timestamps": list(range(start, start + len(values)))}
        self.module.connection.request("saving the record of expected answers", "POST", "/api/v1/import", content=json.dumps(line).encode())
        self.module.connection.flush()

    def stored_record(self) -> str | None:
        self.module.connection.flush()
        for index, (times, values) in sorted(self._record_blocks().items(), reverse=True):
            length = int(values[0])
            needed = 1 + -(-length // RECORD_BYTES_PER_SAMPLE)
            if len(values) == needed and times == list(range(times[0], times[0] + needed)):  # whole: every sample is in
                data = np.array(values[1:], dtype=">u4").tobytes()[:length]
                return zlib.decompress(data).decode()
            log.warning("record block %d is incomplete (%d of %d samples): an older one is read", index, len(values), needed)
        return None

    def _record_blocks(self) -> dict[int, tuple[list[int], list[int]]]:
        """The record's blocks by index: (sample times, values), in time order."""
        selector = f'{RECORD_NAME}{{tables="{self.record_key()}"}}'
        times: list[int] = []
        values: list[int] = []
        for line in self.module.connection.export(selector, 100_000):
            times += line["timestamps"]
            values += [int(value) for value in line["values"]]
        blocks: dict[int, tuple[list[int], list[int]]] = {}
        for at, value in sorted(zip(times, values)):
            block = blocks.setdefault((at - TIME_ORIGIN_MS) // RECORD_BLOCK_MS, ([], []))
            block[0].append(at)
            block[1].append(value)
        return blocks
