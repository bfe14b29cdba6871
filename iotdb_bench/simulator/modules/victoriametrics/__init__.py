"""VictoriaMetrics (single node) over its HTTP API, with httpx.

A metrics store keeps samples (series, timestamp, float value), so events are mapped to series:
one series per device and table, `<table>_temperature{device_id="..."}` (`events_temperature`, or
`events0_temperature`..`events3_temperature` with --tables multiple), one sample per event. The
sequence number is not a measurement: it is dropped by default; `store_sequence_number=true` writes it
as a second series `<table>_sequence_number` (a float sample, exact up to 2^53), which doubles the
samples. An event has no identity beyond (series, timestamp): no primary key can be stored (a key
label would make a series per event), so `--primary-key db` (the default) and `none` mean the same
and the other modes are refused.

Ingestion (`ingestion` option), one HTTP request per call, its body built outside the timed call:
- `import` (default): `POST /api/v1/import`, JSON lines, one line per series of the batch with its
  values and millisecond timestamps (single inserts: one line per event);
- `influx`: `POST /write?precision=ms`, InfluxDB line protocol, one line per event
  (`events,device_id=... temperature=...`); VictoriaMetrics names the series `<measurement>_<field>`,
  the same series as `import`.

Samples are buffered in memory before they are searchable: `count()` first calls
`/internal/force_flush`, and the count check after a run repeats it until every acknowledged sample is
counted (bounded by `visible_wait_s`: series created by the run were seen to stay unfound for up to
10 s after the flush), reporting the wait. The data lies in the past (events start 2026-01-01), so the
server's `-retentionPeriod` must reach back that far (the default, one month, drops older samples silently):
`setup()` reads the server's flags from /metrics and refuses to run when it does not, or when
`-dedup.minScrapeInterval` is set (it would merge a device's samples). Queries are MetricsQL instant
queries (`/api/v1/query`, `nocache=1`) whose window covers every time an event can have: from the
generator's origin to now + 2 days (the newest timestamp VictoriaMetrics accepts).

Workloads (simulator/workload/shapes.py): `--measurements N` writes each further measurement as a series of its
own, `<table>_m1`..`<table>_m{N-1}` beside `<table>_temperature` (N samples per event; the count check
counts the temperature samples, one per event); `--sensors M` adds the label `sensor` (a series per
device and sensor). Seed 002's shapes (slim, light, large) are refused: their rows have no device to
name a series by (every worker's rows would fall into one series), large's text is no number, and
light's key and secondary index have no place in a metrics store. --commit-interval is refused: there
are no transactions.

TSBS's cpu-only and devops data (`--schema tsbs-cpu`, `tsbs-devops`, docs/tsbs.md) go to /write as
TSBS's victoriametrics target sends them (simulator/wire/tsbs_lines.py, TSBS's influx lines: a series
per host, measurement and field, cpu_usage_user{hostname=...}, diskio_reads{hostname=..., serial=...});
rows are counted as each measurement's first field's samples; 11 of TSBS's DevOps query types (they
read cpu) in TSBS's MetricsQL with bucket-exact windows (tsbs_queries.py), the other four refused with
TSBS's reasons. TSBS's IoT data (`--schema tsbs-iot`) the same way: a series per truck, measurement and
field, readings_velocity{name=..., fleet=..., driver=..., model=..., device_version=...}, the capacities
(tags TSBS writes as fields) series too, a null tag a label left out, a null field a sample left out;
its rows are counted as the distinct times of each label set's capacity series (schema.py); nine of
the IoT query types in MetricsQL, the other four refused, each with its reason (tsbs_iot_queries.py:
TSBS's victoriametrics target has none). Storage is the server's own accounting (vm_data_size_bytes
after a flush): everything it holds, which the run's notes say.

Reading back: the six queries' answers in the common form; device-downsample is a range query
(`/api/v1/query_range`, step 1m) of `min/avg/max_over_time(...[1m] offset -59999ms)`, whose window at
each minute m is exactly [m, m + 1 min) in milliseconds. Scans stream `/api/v1/export` line by line,
`max_rows_per_line` = the page size (each line a page of one series, in time order). A metrics store
keeps no text, so the record of expected answers is kept as samples: the zlib-compressed record,
four bytes per sample (exact integers), in the series `iotbench_expected{tables="<tables>"}`; each
save writes a new block (a length sample, then the data) ten minutes of sample times after the last
one, and the newest complete block is the record (VictoriaMetrics cannot overwrite a sample). Old
blocks stay: a few kB each.
"""

from __future__ import annotations

from iotdb_bench.simulator.capabilities import Capabilities, No, Pace
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, played_by
from iotdb_bench.simulator.modules.victoriametrics import tsbs_iot_queries, tsbs_queries
from iotdb_bench.simulator.modules.victoriametrics.connection import VictoriaMetricsError, VmConnection
from iotdb_bench.simulator.modules.victoriametrics.options import VictoriametricsOptions
from iotdb_bench.simulator.modules.victoriametrics.reader import VmReader
from iotdb_bench.simulator.modules.victoriametrics.records import VmRecords
from iotdb_bench.simulator.modules.victoriametrics.schema import VmSchema
from iotdb_bench.simulator.modules.victoriametrics.series import Series
from iotdb_bench.simulator.modules.victoriametrics.writer import VmWriter
from iotdb_bench.simulator.spec import PrimaryKey, RunSpec
from iotdb_bench.simulator.workload.tsbs import USE_CASES

__all__ = ["Module", "VictoriaMetricsError"]


class Module(DatabaseModule):
    Options = VictoriametricsOptions
    options: VictoriametricsOptions
    capabilities = Capabilities(
        pace=Pace(batch_values_per_s=450_000.0, tsbs_query_s=0.004),  # each value a point
        tsbs_shapes=frozenset({"tsbs-cpu", "tsbs-devops", "tsbs-iot"}),
        tsbs_queries_refused=tsbs_queries.REFUSED + tsbs_iot_queries.REFUSED,
        primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none}), measurements=True, sensors=True,
        transactions=No("a metrics store has no transactions to commit every S seconds"), query_languages=("promql",),
    )
    schema, writer, reader, records = played_by(VmSchema, VmWriter, VmReader, VmRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        self.connection = VmConnection(spec, self.options)  # the HTTP clients, shared by the roles
        self.series = Series(spec, self.layouts, self.options)  # what an event becomes, shared too

    def validate(self) -> None:
        if self.spec.shape != "events" and not self.spec.tsbs:  # TSBS's shapes: refused by validate_workload (not yet)
            raise ModuleError(
                f"module 'victoriametrics' does not support --schema {self.spec.shape}: a metrics store keeps numeric samples of series "
                "named by their labels, and these rows have no device to name a series by (use --schema events)"
            )
        self.validate_workload()
        if self.spec.primary_key not in self.capabilities.primary_keys:
            raise ModuleError(
                f"module 'victoriametrics' does not support --primary-key {self.spec.primary_key.value}: a sample is identified by its "
                "series and time only (db and none mean the same)"
            )

    # -- how the module describes its runs -------------------------------------------------
    def batch_kind(self) -> str:
        return "/api/v1/import request" if self.series.ingestion == "import" else "line protocol request"

    def notes(self) -> list[str]:
        if self.spec.task != "insert":
            return []
        storage = ("storage: VictoriaMetrics' own accounting after a flush, the sum of vm_data_size_bytes on /metrics: every series "
                   "the server holds, this run's and any other data (it reports no size per series)")
        if self.spec.tsbs:
            example = ("readings_velocity{name=...}, the truck's other string tags as labels; its capacities, tags TSBS writes as fields, "
                       "as samples too" if self.spec.shape == "tsbs-iot" else "cpu_usage_user{hostname=...}, the other nine tags and the "
                       "measurement's own as labels")
            return [f"TSBS's rows as its victoriametrics target sends them: line protocol on /write, a series per {USE_CASES[self.spec.shape].entity}, "
                    f"measurement ({', '.join(self.spec.table_names)}) and field ({example}), the fields as samples", storage]
        names = [column.name for column in self.series.measures] + (["sequence number"] if self.options.store_sequence_number else [])
        samples = f"{len(names)} samples per event ({', '.join(names)})" if len(names) > 1 else "one sample per event (temperature)"
        series = "one series per device, sensor and value" if self.spec.sensors > 1 else "one series per device and value"
        return [f"VictoriaMetrics stores {samples}, {series}",
                "inserts/s counts acknowledged samples; the time until all were found by queries is reported separately", storage]

    # -- lifecycle -------------------------------------------------------------------------
    def server_address(self) -> tuple[str, int] | None:
        return self.url_address(self.options.url, 8428)

    def connect(self) -> None:
        self.connection.connect()

    def close(self) -> None:
        self.connection.close()
