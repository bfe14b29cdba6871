"""simulator/wire/text_rows.py and the write paths built with it (Elasticsearch NDJSON, InfluxDB
line protocol, MySQL values lists) against a straightforward rendering of the same values, byte for byte: str() of each
integer, two decimals of each float of two decimals (what the tool sends: `21.50`, a JSON number of
the same value as json.dumps's `21.5`), json.dumps of each string and float otherwise. Negative
values, zero, the widths where a number gains a digit (9999/10000: four digits per lookup), and
batches with and without padding (the zero bytes the rows are compacted from)."""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest

from iotdb_bench.simulator.modules import module_class
from iotdb_bench.simulator.modules.influxdb import points
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch
from iotdb_bench.simulator.workload.shapes import generator

EDGES = [0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 99_999_999, 100_000_000, 10**12 - 1, 10**12, 1_767_225_600_000,
         10**18 - 1, 10**18, 2**63 - 1]


def joined(column: np.ndarray) -> bytes:
    """One value per line, as the write paths join rows."""
    return text_rows.compact(text_rows.text_rows([column, text_rows.constant("\n")], len(column)))


def lines(values: list) -> bytes:
    return "".join(f"{value}\n" for value in values).encode()


def two_decimals_or_json(value: float) -> str:
    return f"{value:.2f}" if round(value * 100) / 100 == value else json.dumps(value)


@pytest.mark.parametrize("values", [
    EDGES,
    [-value for value in EDGES],
    [value * (-1) ** i for i, value in enumerate(EDGES)],
    [5, -5, 0],
    [1, -1, 0],
    [0],
    [-7],
    [12_345] * 4,  # one width, no padding
    [],
], ids=["positive", "negative", "mixed", "small", "minus-one", "zero", "one-negative", "one-width", "empty"])
def test_integers_as_str_writes_them(values):
    assert joined(text_rows.integers(np.array(values, dtype=np.int64))) == lines(values)


def test_integers_of_random_magnitudes_and_narrow_types():
    random = np.random.default_rng(22)
    values = (random.integers(-(10**6), 10**6, 5000) * 10 ** random.integers(0, 12, 5000)).astype(np.int64)
    assert joined(text_rows.integers(values)) == lines(values.tolist())
    for dtype in (np.int16, np.int32):  # the light and large shapes' hundredths
        narrow = random.integers(np.iinfo(dtype).min + 1, np.iinfo(dtype).max, 2000).astype(dtype)
        assert joined(text_rows.integers(narrow)) == lines(narrow.tolist())


@pytest.mark.parametrize("values", [
    [0.0, 0.01, 0.05, 0.1, 0.99, 1.0, 9.99, 10.0, 21.5, 99.99, 100.0, 999.99, 1000.0, 123456.78],
    [-0.01, -0.05, -0.1, -0.99, -1.0, -9.99, -10.0, -21.5, -100.0, -123456.78],
    [21.68, -0.05, 0.0, -30.0, 7.07, -99.99],
    [15.0] * 3,
    [],
], ids=["positive", "negative", "mixed", "one-width", "empty"])
def test_decimals_of_two_decimal_values_have_two_decimals(values):
    assert joined(text_rows.decimals(np.array(values, dtype=np.float64))) == lines([f"{value:.2f}" for value in values])


def test_decimals_of_other_values_are_the_shortest_repr():
    values = [0.1 + 0.2, -1.0 / 3, 21.125, 1e-05, -2.5e-07, 123456789.123]
    assert joined(text_rows.decimals(np.array(values))) == lines([json.dumps(value) for value in values])


def test_datetimes_are_numpys_iso_8601_with_a_space():
    random = np.random.default_rng(27)
    spans = [random.integers(0, 10**6, 1000), random.integers(0, 3 * 86_400_000, 1000), random.integers(0, 10**11, 1000)]
    days = [0, 86_399_999, 86_400_000, 951_782_400_000, 1_767_225_599_999]  # midnight's edges, a 29 February
    for epoch_ms in [np.array(days), *(1_767_225_600_000 + span for span in spans)]:
        expected = np.char.replace(np.datetime_as_string(epoch_ms.astype("datetime64[ms]")).astype("S"), b"T", b" ")
        assert text_rows.compact(text_rows.text_rows([text_rows.datetimes(epoch_ms)], len(epoch_ms))) == b"".join(expected)


def test_compact_drops_only_zero_bytes_and_keeps_rows_without_any():
    names = text_rows.fixed(np.array([b"events0", b"events11", b"e"]))  # S8: zero-padded
    rows = text_rows.text_rows([text_rows.constant("<"), names, text_rows.constant(">")], 3)
    assert text_rows.compact(rows) == b"<events0><events11><e>"
    assert text_rows.compact(rows[[2, 0]]) == b"<e><events0>"  # a selection, as the 429 retries send
    assert text_rows.compact(text_rows.text_rows([text_rows.constant("ab")], 2)) == b"abab"


# -- the two write paths, whole batches ----------------------------------------------------------

def module(name: str, options: dict | None = None, **spec):
    options = {"elasticsearch": {"hosts": "http://127.0.0.1:9200"}, "influxdb": {"url": "http://127.0.0.1:8086"}, "mysql": {}}[name] | (options or {})
    return module_class(name)(RunSpec(run_id="text-rows", task="insert", target=name, module=name, workers=1, batch=1000,
                                      extra=options, **spec))


def batches(spec: RunSpec) -> list[EventBatch]:
    """The generator's first batch (sequence numbers of 1-3 digits: padding), a later one (often
    none), and the later one with negative values (every other event)."""
    events = generator(spec, 3)
    first, later = events.batch(0, 1000), events.batch(57_000, 1000)
    flip = np.where(np.arange(len(later)) % 2 == 0, -1, 1)
    negative = dataclasses.replace(
        later, temperature=later.temperature * flip, sequence_number=later.sequence_number * flip,
        more=None if later.more is None else later.more * flip)
    return [first, later, negative]


def json_value(kind: str, value) -> str:
    if kind in ("device", "text"):
        return json.dumps(value.decode())
    return two_decimals_or_json(value) if kind == "float" else str(value)


def ndjson(writer, batch: EventBatch) -> bytes:
    """The _bulk body as json.dumps writes each action and document (two decimals for floats)."""
    names = writer.spec.table_names
    with_key = writer._with_key
    keys = writer._keys(batch).tolist() if with_key else [None] * len(batch)
    columns = [(column.name, column.kind, column.values(batch).tolist()) for column in writer.layout.columns]
    out = []
    for i, device in enumerate(batch.device_index.tolist()):
        action = {"_index": names[device % len(names)], **({"_id": keys[i].decode()} if with_key else {})}
        fields = [f"{json.dumps(name)}:{json_value(kind, values[i])}" for name, kind, values in columns]
        if with_key:
            fields.append(f'"id":{json.dumps(keys[i].decode())}')
        out.append(json.dumps({"create": action}, separators=(",", ":")) + "\n{" + ",".join(fields) + "}\n")
    return "".join(out).encode()


@pytest.mark.parametrize("spec", [{}, {"primary_key": "client"}, {"tables": 12}, {"measurements": 3, "sensors": 2},
                                  {"shape": "light"}, {"shape": "large"}],
                         ids=["default", "client-keys", "tables", "measurements-sensors", "light", "large"])
def test_elasticsearch_bulk_body_is_json_dumps_of_each_event(spec):
    writer = module("elasticsearch", **spec).writer
    for batch in batches(writer.spec):
        body = writer.prepare_batch(batch).body()
        assert body == ndjson(writer, batch)
        documents = body.splitlines()[1::2]
        assert [json.loads(line) for line in documents][:3]  # each document line is JSON


def line_protocol(layout, table_names: list[str], batch: EventBatch) -> bytes:
    """Line protocol as the InfluxDB documentation writes it: integers with `i`, strings quoted."""
    tags = [(column.name, column.values(batch).tolist()) for column in points.tags(layout)]
    fields = [(column.name, column.kind, column.values(batch).tolist()) for column in points.fields(layout)]
    devices, times = batch.device_id.tolist(), batch.timestamp_ms.tolist()
    out = []
    for i, device in enumerate(batch.device_index.tolist()):
        key = table_names[device % len(table_names)] + ("" if layout.shape == "events" else f",device_id={devices[i].decode()}")
        key += "".join(f",{name}={values[i].decode() if isinstance(values[i], bytes) else values[i]}" for name, values in tags)
        rendered = []
        for name, kind, values in fields:
            value = values[i]
            if kind == "float":
                rendered.append(f"{name}={two_decimals_or_json(value)}")
            elif kind == "text":
                rendered.append(f'{name}="{points.string_field(value.decode())}"')
            else:
                rendered.append(f"{name}={value}i")
        out.append(f"{key} {','.join(rendered)} {times[i]}\n")
    return "".join(out).encode()


@pytest.mark.parametrize("spec", [{}, {"tables": 12}, {"measurements": 3, "sensors": 2}, {"shape": "light"}, {"shape": "large"},
                                  {"shape": "slim", "primary_key": "none"}],
                         ids=["default", "tables", "measurements-sensors", "light", "large", "slim"])
def test_influxdb_line_protocol_is_each_point_written_out(spec):
    influx = module("influxdb", **spec)
    for batch in batches(influx.spec):
        assert influx.writer.prepare_batch(batch) == line_protocol(influx.layout, influx.spec.table_names, batch)


def sql_values(layout, with_key: bool, batch: EventBatch) -> list[str]:
    """Each event's SQL tuple as the module wrote it before (Python's own rendering of each value)."""
    stamps = np.datetime_as_string(batch.timestamp_ms.astype("datetime64[ms]")).tolist()
    columns = [stamps if column.kind == "timestamp" else column.values(batch).tolist() for column in layout.columns]
    kinds = [column.kind for column in layout.columns]
    if with_key:
        columns.append(batch.client_key.tolist())
        kinds.append("device")
    rows = []
    for row in zip(*columns):
        rendered = []
        for kind, value in zip(kinds, row):
            if kind == "timestamp":
                rendered.append(f"'{value.replace('T', ' ')}'")
            elif kind in ("device", "text"):
                rendered.append(f"'{value.decode()}'")
            else:
                rendered.append(two_decimals_or_json(value) if kind == "float" else str(value))
        rows.append("(" + ",".join(rendered) + ")")
    return rows


@pytest.mark.parametrize("batch_mode", ["values", "transaction"])
@pytest.mark.parametrize("spec", [{}, {"primary_key": "client"}, {"tables": 3}, {"measurements": 3, "sensors": 2},
                                  {"shape": "light"}, {"shape": "large"}],
                         ids=["default", "client-keys", "tables", "measurements-sensors", "light", "large"])
def test_mysql_statements_are_each_event_written_out(spec, batch_mode):
    writer = module("mysql", {"batch_mode": batch_mode}, **spec).writer
    for batch in batches(writer.spec):
        expected = []
        for table, part in writer.per_table(batch):
            head = f"INSERT INTO {table} (" + ", ".join(writer.layout.names + (("id",) if writer._with_key else ())) + ") VALUES "
            values = sql_values(writer.layout, writer._with_key, part)
            expected += [head + ",\n".join(values)] if batch_mode == "values" else [head + row for row in values]
        assert writer.prepare_batch(batch) == [statement.encode() for statement in expected]


def test_mysql_values_lists_are_cut_under_the_statement_limit(monkeypatch):
    from iotdb_bench.simulator.modules.mysql import writer as mysql_writer

    monkeypatch.setattr(mysql_writer, "MAX_STATEMENT_BYTES", 10_000)
    writer = module("mysql", {"batch_mode": "values"}).writer
    batch = batches(writer.spec)[1]
    statements = writer.prepare_batch(batch)
    assert len(statements) > 1 and all(len(statement) <= 10_000 for statement in statements)
    rows = [row for statement in statements for row in statement.split(b" VALUES ", 1)[1].split(b",\n")]
    assert rows == [row.encode() for row in sql_values(writer.layout, False, batch)]


@pytest.mark.parametrize("shape", ["tsbs-devops", "tsbs-iot"])
def test_mysql_statements_of_tsbs_rows_hold_their_nulls_and_own_tags(shape):
    """TSBS's rows as the MySQL writer renders them, a table's INSERT each (its columns quoted): IoT's
    null fields and nameless rows (tags_id) as NULL, devops' own tags as the JSON text without the
    generator's padding, each value as Python renders it."""
    writer = module("mysql", {"batch_mode": "values"}, shape=shape, devices=20, time_range_ms=3_600_000, primary_key="none", num_inserts=0).writer
    rows = generator(writer.spec, 0)
    nulls = own_tags = 0
    for batch in itertools.islice(rows.batches(0, rows.total, 1000), 8):
        expected = []
        for table, part in writer.per_table(batch):
            layout = writer.layouts[table]
            python_rows = layout.python_rows(part)
            # A float column in two decimals where all of its values have two at most (the generator's), else each value's repr.
            hundredths = [all(not isinstance(value, float) or round(value * 100) / 100 == value for value in column) for column in zip(*python_rows)]
            values = []
            for row in python_rows:
                rendered = [f"'{np.datetime_as_string(np.datetime64(row[0], 'ms')).replace('T', ' ')}'"]
                for column, value, fixed in zip(layout.columns[1:], row[1:], hundredths[1:]):
                    if value is None:
                        rendered.append("NULL")
                    elif column.kind == "json":
                        rendered.append(f"'{value}'")
                    elif column.kind == "float":
                        rendered.append(f"{value:.2f}" if fixed else repr(value))
                    else:
                        rendered.append(str(value))
                values.append("(" + ",".join(rendered) + ")")
            nulls += sum(value == "NULL" for row in values for value in row.strip("()").split(","))
            own_tags += sum('{"' in row for row in values)
            expected.append(f"INSERT INTO {table} ({', '.join(f'`{name}`' for name in layout.names)}) VALUES " + ",\n".join(values))
        assert writer.prepare_batch(batch) == [statement.encode() for statement in expected]
    assert (nulls > 0, own_tags > 0) == (shape == "tsbs-iot", shape == "tsbs-devops")
