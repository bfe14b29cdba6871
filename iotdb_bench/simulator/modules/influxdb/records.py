"""The influxdb module's record of expected answers: the measurement `iotbench_expected` (tag
`tables`); string fields are limited to 64 KB, so the JSON is split into parts, one point each."""

from __future__ import annotations

from iotdb_bench.simulator.modules.base import RECORD_NAME, RecordsRole
from iotdb_bench.simulator.modules.influxdb.options import RANGE, RECORD_PART_CHARS, InfluxRole
from iotdb_bench.simulator.modules.influxdb.points import string_field, tag_value


class InfluxRecords(InfluxRole, RecordsRole):
    def store_record(self, text: str) -> None:
        """One point per part of the text, at times 0, 1, 2... ms; the first also says how many parts
        there are (a shorter record overwrites the first parts of a longer one and ignores the rest)."""
        parts = [text[i : i + RECORD_PART_CHARS] for i in range(0, len(text), RECORD_PART_CHARS)] or [""]
        tag = tag_value(self.record_key())
        lines = [f'{RECORD_NAME},tables={tag} text="{string_field(part)}"' + (f",parts={len(parts)}i" if i == 0 else "") + f" {i}"
                 for i, part in enumerate(parts)]
        self.module.connection.write_lines("\n".join(lines).encode())

    def stored_record(self) -> str | None:
        flux = (f'from(bucket: "{self.options.bucket}") |> {RANGE}\n'
                f'  |> filter(fn: (r) => r._measurement == "{RECORD_NAME}" and r.tables == "{self.record_key()}")\n'
                '  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value") |> group() |> sort(columns: ["_time"])')
        records = [record for table in self.module.connection.flux(flux) for record in table.records]
        if not records or records[0].values.get("parts") is None:
            return None
        return "".join(record.values["text"] for record in records[: int(records[0].values["parts"])])
