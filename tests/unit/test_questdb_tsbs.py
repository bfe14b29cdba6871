"""The questdb module's TSBS rows (simulator/modules/questdb/tsbs.py): its NumPy ILP lines are TSBS's
questdb serializer's lines (pkg/targets/questdb/serializer.go: the tags in TSBS's order, the fields as
integers, the timestamp in nanoseconds without a unit) and, but for that unit, the official client's
bytes for the same row() calls, which the module's other encodings send; devops' and iot's lines the
shape of TSBS's own, IoT's nulls left out as TSBS leaves them. No server needed."""

from __future__ import annotations

import re
import warnings

from iotdb_bench.simulator.modules.questdb.tsbs import TsbsRows, lines_of
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.shapes import generator, layout
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from iotdb_bench.simulator.workload.tsbs.usecases import CPU_FIELDS
from tests.unit.test_tsbs_generator import batches, tsbs_generate_data, tsbs_spec

# A line of `tsbs_generate_data --use-case=cpu-only --format=questdb` (TSBS 37fced7), values aside.
TSBS_LINE = re.compile("cpu," + ",".join(f"{name}=[^ ,]+" for name in TAG_NAMES) + " " + ",".join(f"{name}=[0-9]+i" for name in CPU_FIELDS)
                       + " [0-9]{19}")


def spec() -> RunSpec:
    return RunSpec(run_id="tsbs", task="insert", target="q", module="questdb", workers=2, batch=100, shape="tsbs-cpu", devices=7,
                   primary_key="none", num_inserts=0)


def test_lines_are_tsbs_lines_of_the_generated_rows():
    run = spec()
    batch = next(generator(run, 1).batches(30, 40, 40))  # worker 1's hosts 4..6, steps 10 to 23
    lines = lines_of("tsbs-cpu", run.seed, run.all_devices).lines(batch).decode().splitlines()
    assert len(lines) == len(batch) and all(TSBS_LINE.fullmatch(line) for line in lines), lines[0]
    tags = host_tags(run.seed, 0, run.all_devices)
    first = lines[0].split(" ")
    assert first[0] == "cpu," + ",".join(f"{name}={value}" for name, value in zip(TAG_NAMES, tags[int(batch.host[0])], strict=True))
    assert first[1] == ",".join(f"{name}={int(value)}i" for name, value in zip(CPU_FIELDS, [batch.temperature[0], *batch.more[:, 0]], strict=True))
    assert int(first[2]) == int(batch.timestamp_ms[0]) * 1_000_000


def test_lines_are_the_clients_bytes_for_the_row_calls():
    from questdb import TimestampNanos

    run = spec()
    rows = TsbsRows(layout(run), run.seed, run.all_devices)
    batch = next(generator(run, 0).batches(0, 200, 200))
    with warnings.catch_warnings():  # a standalone buffer is the deprecated module's; the bytes are the client's
        warnings.simplefilter("ignore", DeprecationWarning)
        from questdb.ingress import Buffer

        buffer = Buffer(protocol_version=2)
    for symbols, columns, ms in rows.calls(batch):
        buffer.row("cpu", symbols=symbols, columns=columns, at=TimestampNanos(ms * 1_000_000))
    assert bytes(buffer).replace(b"n\n", b"\n") == lines_of("tsbs-cpu", run.seed, run.all_devices).lines(batch)


def test_frame_holds_the_same_rows():
    run = spec()
    rows = TsbsRows(layout(run), run.seed, run.all_devices)
    batch = next(generator(run, 1).batches(0, 9, 9))
    frame = rows.frame(batch)
    assert list(frame.columns) == [*TAG_NAMES, *CPU_FIELDS, "timestamp"]
    assert [str(dtype) for dtype in frame.dtypes[len(TAG_NAMES):]] == ["int64"] * len(CPU_FIELDS) + ["datetime64[ns]"]
    calls = rows.calls(batch)
    for (symbols, columns, ms), record in zip(calls, frame.to_dict("records"), strict=True):
        assert {**symbols, **columns} == {name: record[name] for name in (*TAG_NAMES, *CPU_FIELDS)}
        assert record["timestamp"].value == ms * 1_000_000


def line_shape(line: str) -> tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(table, tag keys, (field, kind) in order) of an ILP line; kind: integer (`12i`) or double."""
    series, fields, _ = line.split(" ")
    table, *tags = series.split(",")
    kinds = tuple((key, "integer" if re.fullmatch(r"-?\d+i", value) else "double") for key, value in (field.split("=") for field in fields.split(",")))
    return table, tuple(tag.split("=")[0] for tag in tags), kinds


def test_devops_lines_have_the_shape_of_tsbs_own_questdb_lines():
    """Every measurement: the table, the host's tags then its own, the fields in TSBS's order with TSBS's
    types (int64 `i`, mem's percentages doubles), nanoseconds; Go's positional doubles (no exponent)."""
    output = tsbs_generate_data("--use-case=devops", "--seed=3", "--scale=3", "--log-interval=30s", "--timestamp-start=2016-01-01T00:00:00Z",
                                "--timestamp-end=2016-01-01T00:02:00Z", "--format=questdb")
    theirs = [line for line in output.splitlines() if line]
    spec = tsbs_spec(3, "30s", "2016-01-01T00:00:00Z", "2016-01-01T00:02:00Z", shape="tsbs-devops")
    lines = lines_of("tsbs-devops", spec.seed, 3)
    ours = [line for batch in batches(spec) for line in lines.lines(batch).decode().splitlines()]
    assert len(ours) == len(theirs) == 4 * 3 * 9
    assert {line_shape(line) for line in ours} == {line_shape(line) for line in theirs}
    values = [field.split("=")[1] for line in ours for field in line.split(" ")[1].split(",")]
    assert all(re.fullmatch(r"-?\d+i|-?\d+(\.\d+)?", value) for value in values)
    assert all(re.fullmatch(r"[0-9]{19}", line.rsplit(" ", 1)[1]) for line in ours)
    mem = [line for line in ours if line.startswith("mem,")]
    assert all(float(dict(f.split("=") for f in line.split(" ")[1].split(","))["used_percent"]) > 0 for line in mem)


def test_iot_lines_have_the_shape_of_tsbs_own_questdb_lines():
    """Each table's complete line: the truck's string tags in TSBS's order, then its capacities (tags TSBS
    writes as fields) and the fields in TSBS's order with TSBS's types (doubles; status an int64),
    nanoseconds. TSBS's nulls are left out of a line as its serializer leaves them: a line lacks at most
    one tag (a string tag, or a capacity) and one field, and some of the tool's lines lack each."""
    output = tsbs_generate_data("--use-case=iot", "--seed=3", "--scale=3", "--log-interval=10s", "--timestamp-start=2016-01-01T00:00:00Z",
                                "--timestamp-end=2016-01-01T01:00:00Z", "--format=questdb")
    theirs = [line_shape(line) for line in output.splitlines() if line]
    spec = tsbs_spec(3, "10s", "2016-01-01T00:00:00Z", "2016-01-01T01:00:00Z", shape="tsbs-iot")
    lines = lines_of("tsbs-iot", spec.seed, 3)
    ours = [line for batch in batches(spec) for line in lines.lines(batch).decode().splitlines()]
    assert all(re.fullmatch(r"[0-9]{19}", line.rsplit(" ", 1)[1]) for line in ours)

    def complete(shapes: list) -> dict[str, tuple]:
        """Each table's line with every tag and field (the longest)."""
        return {table: max(((tags, fields) for name, tags, fields in shapes if name == table), key=lambda shape: len(shape[0]) + len(shape[1]))
                for table in ("readings", "diagnostics")}

    shaped = [line_shape(line) for line in ours]
    assert complete(shaped) == complete(theirs)
    assert complete(theirs)["diagnostics"][1][-1] == ("status", "integer")
    lacking = set()
    for shapes in (shaped, theirs):
        whole = complete(shapes)
        for table, tags, fields in shapes:
            all_tags, all_fields = whole[table]
            assert [tag for tag in all_tags if tag in tags] == list(tags) and [field for field in all_fields if field in fields] == list(fields)
            capacities = sum(1 for key, _ in all_fields[:3] if (key, "double") not in fields)
            assert len(all_tags) - len(tags) + capacities <= 1 and len(all_fields) - len(fields) - capacities <= 1
            if shapes is shaped:
                lacking |= {"tag"} if len(tags) < len(all_tags) or capacities else set()
                lacking |= {"field"} if len(all_fields) - len(fields) > capacities else set()
    assert lacking == {"tag", "field"}
