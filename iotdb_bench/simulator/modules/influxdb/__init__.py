"""InfluxDB through the v2 API (influxdb-client): InfluxDB 2.x, and InfluxDB 1.8 in its v2-compatible mode.

Events are points of the measurement `events` (events0..eventsN-1 with --tables N), tag `device_id`
(and `sensor` with --sensors), fields `temperature` (and m1.. with --measurements) and
`sequence_number`, timestamps in milliseconds. Other shapes (simulator/workload/shapes.py) keep the device tag
(a point is identified by its series and time: without it, the points of workers with equal
timestamps would overwrite each other); light's indexed column val1 is a tag (InfluxDB indexes tags
only, so that is its secondary index), the other values are fields, large's text a string field. A point is
identified by its series (measurement + tags) and time, so there is no primary key: `--primary-key db`
(the default) and `none` are accepted and mean the same, every other mode is rejected.

Insert modes, both with the synchronous write API (the call returns once the server acknowledged):
- single (no --batch): one point per write call;
- batch: one write call per batch, the next batch's line protocol built while the server works on
  the current one.

Setup: on InfluxDB 2 the bucket is deleted and recreated (clean) or created when missing through the
buckets API. InfluxDB 1.8 has no buckets API: there `bucket` is "database/retention-policy", and the
1.x query API creates the database and drops the run's measurements (clean). Which API applies is
read from the server's version (the /ping header), or forced with `v1_compat`.

TSBS's data (`--schema tsbs-cpu`, `tsbs-devops`, `tsbs-iot`, docs/tsbs.md) is written as TSBS's influx
target writes it (simulator/wire/tsbs_lines.py: a measurement per TSBS measurement, the entity's and the
measurement's own tags as tags, TSBS's int64 fields as integers, its null tags and fields left out) and
queried with TSBS's InfluxQL through the 1.x /query API (tsbs_queries.py: the DevOps types;
tsbs_iot_queries.py and tsbs_iot_grouped.py: the 12 IoT types InfluxQL answers exactly,
avg-daily-driving-session refused); InfluxDB 1.8 only
(2.x refuses it in setup: its /query needs a DBRP mapping the tool does not make). The data's size on disk is InfluxDB
1.8's own accounting (SHOW STATS, the shards' diskBytes).

Reading back: device-downsample is `aggregateWindow(every: 1m)` (min, mean, max, windows labelled by
their start); scans stream each device's series as CSV (the query API's streaming response) and
cut it into pages. The record of expected answers is kept in the measurement `iotbench_expected`
(tag `tables`): string fields are limited to 64 KB, so the JSON is split into parts, one point each.
"""

from __future__ import annotations

from iotdb_bench.simulator.capabilities import ALL_SHAPES, Capabilities, Pace, PrepareNext
from iotdb_bench.simulator.modules.base import DatabaseModule, played_by
from iotdb_bench.simulator.modules.influxdb import tsbs_iot_queries
from iotdb_bench.simulator.modules.influxdb.connection import InfluxConnection, InfluxServerError
from iotdb_bench.simulator.modules.influxdb.options import InfluxdbOptions
from iotdb_bench.simulator.modules.influxdb.reader import InfluxReader
from iotdb_bench.simulator.modules.influxdb.records import InfluxRecords
from iotdb_bench.simulator.modules.influxdb.schema import InfluxSchema
from iotdb_bench.simulator.modules.influxdb.writer import InfluxWriter
from iotdb_bench.simulator.spec import TSBS_TABLES, PrimaryKey, RunSpec

__all__ = ["InfluxServerError", "Module"]


class Module(DatabaseModule):
    Options = InfluxdbOptions
    options: InfluxdbOptions
    capabilities = Capabilities(
        pace=Pace(batch_values_per_s=150_000.0, tsbs_query_s=0.008),  # each value a point
        shapes=ALL_SHAPES, tsbs_shapes=frozenset(TSBS_TABLES), tsbs_queries_refused=tsbs_iot_queries.REFUSED, primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none}), measurements=True,
        sensors=True, markers=True,
        drivers=("influxdb-client",),
        # The next batch is generated and encoded once a write is on the wire (about 0.2 ms per 1000
        # events against milliseconds of server work), without a helper thread's hand-offs.
        prepare_next=PrepareNext.during_call, query_languages=("influxql",),
    )
    schema, writer, reader, records = played_by(InfluxSchema, InfluxWriter, InfluxReader, InfluxRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        self.connection = InfluxConnection(spec, self.options)  # the clients, shared by the roles

    # -- lifecycle -------------------------------------------------------------------------
    def batch_kind(self) -> str:
        return "line protocol write"

    def notes(self) -> list[str]:
        database, _, policy = self.options.bucket.partition("/")
        notes = [] if self.spec.task != "insert" else [f"storage: InfluxDB 1.8's own accounting, the diskBytes of the shards of database {database}"
                 f"{' retention policy ' + policy if policy else ''} (SHOW STATS: TSM files and write-ahead log), every measurement "
                 "in them (a database of its own gives the run's share); none on InfluxDB 2"]
        if self.spec.tsbs:
            notes.append(f"TSBS's rows as its influx target writes them: a measurement per TSBS measurement ({', '.join(self.spec.table_names)}), "
                         "the tags as tags, int64 fields as integers, times in milliseconds; TSBS's InfluxQL queries (docs/databases/influxdb.md)")
        return notes

    def server_address(self) -> tuple[str, int] | None:
        return self.url_address(self.options.url, 8086)

    def connect(self) -> None:
        self.connection.connect()

    def close(self) -> None:
        self.connection.close()
