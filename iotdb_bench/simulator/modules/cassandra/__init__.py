"""Apache Cassandra and YugabyteDB YCQL, through the DataStax Python driver (CQL native protocol).

Table design, one partition per device and its rows clustered newest first:
    PRIMARY KEY ((device_id), timestamp, sequence_number)
    WITH CLUSTERING ORDER BY (timestamp DESC, sequence_number DESC)
Cassandra generates no keys, so the natural key is the only key: --primary-key db (the default)
and none both mean it; client, sql and uuid are refused.

Insert modes:
- single (no --batch): one prepared INSERT per event, each waiting for its acknowledgement;
- batch: the events of a batch are grouped per device and each group goes out as one UNLOGGED
  batch, a single-partition mutation; a batch of N events becomes one request per device in it.
`max_sync_calls` = 1 sends one request at a time; above 1 that many requests stay in flight
(execute_async) and each request's latency is reported from its callback.

Writes are upserts of the natural key, so retrying a timed-out or refused write is safe: timeouts,
unavailable replicas and overloaded coordinators are retried up to `max_retries` times.

Shapes (simulator/workload/shapes.py): `events` as above, with `sensor` and the measurements m1.. as regular
columns; `light` and `large` rows have a key `id`: a uuid made by Cassandra (`uuid()` in the INSERT,
--primary-key db or uuid; a timed-out write is then not retried, it might have been stored) or the
client's key (text); each row is its own partition, a batch one UNLOGGED multi-partition batch; light's
secondary index is a Cassandra secondary index on val1. `slim` (no key at all) cannot be a CQL table.

Reading back: device-downsample groups by `floor(timestamp, 1m)` on the server (Cassandra 4+); with
`per_device_queries=client` (YugabyteDB YCQL) the readings of the hour are fetched and bucketed per
minute on the client, inside the timed query. Scans read one partition at a time in ascending
timestamp order (the reverse of the clustering order), paged with the driver's fetch size. The
record of expected answers is a table of its own in the keyspace, `iotbench_expected`.

TSBS's cpu-only, devops and iot data (`--schema tsbs-cpu`, `tsbs-devops`, `tsbs-iot`) go into TSBS's
Cassandra layout, a partition per series (measurement, host or truck tags, and field) and day in
series_bigint or series_double (tsbs_series.py, tsbs_writes.py, tsbs_iot_series.py), and TSBS's 15 DevOps
query types run on their cpu series as TSBS's query runner does, a request per partition, merged on the
client inside the timed query (tsbs_queries.py); the 13 IoT types the same way (tsbs_iot_queries.py).
The storage figure is the tables' flushed SSTables (storage.py).
"""

from __future__ import annotations

import dataclasses
import logging
import socket
from typing import Any

from iotdb_bench.simulator.capabilities import Capabilities, Pace, PrepareNext
from iotdb_bench.simulator.errors import described
from iotdb_bench.simulator.modules.base import DatabaseModule, ModuleError, played_by
from iotdb_bench.simulator.modules.cassandra.options import KEYED_SHAPE_KEYS, CassandraOptions
from iotdb_bench.simulator.modules.cassandra.reader import CassandraReader
from iotdb_bench.simulator.modules.cassandra.records import CassandraRecords
from iotdb_bench.simulator.modules.cassandra.schema import CassandraSchema
from iotdb_bench.simulator.modules.cassandra.tsbs_queries import QUERY_PROFILE
from iotdb_bench.simulator.modules.cassandra.wording import reason
from iotdb_bench.simulator.modules.cassandra.writer import CassandraWriter, InsertFailed
from iotdb_bench.simulator.spec import PrimaryKey, RunSpec

log = logging.getLogger("cassandra")
# The driver leaves Nagle's algorithm on: with delayed ACKs every small request then waits ~40 ms.
NO_DELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]

__all__ = ["InsertFailed", "Module"]


class Module(DatabaseModule):
    Options = CassandraOptions
    options: CassandraOptions
    capabilities = Capabilities(
        pace=Pace(batch_values_per_s=15_000.0),  # each value a cell, a request per partition
        # Every CQL table needs a primary key, so seed 002's keyless slim table cannot be made here.
        shapes=frozenset({"events", "light", "large"}), tsbs_shapes=frozenset({"tsbs-cpu", "tsbs-devops", "tsbs-iot"}), primary_keys=frozenset({PrimaryKey.db, PrimaryKey.none}),
        measurements=True, sensors=True, markers=True, drivers=("cassandra-driver",),
        # Batch requests are marked here, one latency per CQL request, in both sync and async mode.
        marks_own_calls=True, query_languages=("cql",),
    )
    schema, writer, reader, records = played_by(CassandraSchema, CassandraWriter, CassandraReader, CassandraRecords)

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        if spec.tsbs:
            # A batch of TSBS's rows is hundreds of requests whose completions the driver's event loop
            # thread handles one by one: a helper thread encoding the next batch meanwhile holds the
            # GIL for a switch interval at a time and made each of them wait (a batch of 1000 rows,
            # 200 requests: 4 s instead of 0.2 s). The next batch is prepared between calls instead.
            self.capabilities = dataclasses.replace(self.capabilities, prepare_next=PrepareNext.in_turn)
        self._cluster: Any = None
        self.session: Any = None  # the driver's session (cassandra-driver, untyped), shared by the roles

    def validate(self) -> None:
        self.validate_workload()
        key = self.spec.primary_key
        if self.layout.shape == "events" and key not in self.capabilities.primary_keys:
            raise ModuleError(
                f"module 'cassandra' keys events by their natural key ((device_id), timestamp, sequence_number) and "
                f"cannot use --primary-key {key.value}; use --primary-key db (the default) or none"
            )
        if self.layout.has_key and self.layout.shape != "events" and key not in KEYED_SHAPE_KEYS:
            raise ModuleError(
                f"module 'cassandra' keys --schema {self.layout.shape} rows by a uuid (--primary-key db or uuid: uuid() in the INSERT) "
                f"or the client's key (client); --primary-key {key.value} does not apply"
            )
        if self.spec.task == "insert" and not self.spec.batch and self.options.max_sync_calls > 1:
            raise ModuleError(
                f"single inserts send one event at a time and wait for it; max_sync_calls={self.options.max_sync_calls} "
                "applies to batches: add --batch N, or --extra-option max_sync_calls=1"
            )

    def batch_kind(self) -> str:
        return "UNLOGGED batches per series and day" if self.spec.tsbs else "UNLOGGED batches per device"

    def notes(self) -> list[str]:
        if self.spec.task != "insert":
            return []
        try:
            return [self.schema.storage_note()]
        except Exception as error:  # the figures stand without it
            return [f"storage: its source could not be read ({described(error)})"]

    def insert_mode(self) -> str:
        mode = super().insert_mode()
        calls = self.options.max_sync_calls
        if calls > 1:
            return f"{mode}, {calls} requests in flight" if self.spec.tsbs else f"{mode}, async, {calls} in flight"
        return mode

    # -- lifecycle -------------------------------------------------------------------------
    def server_address(self) -> tuple[str, int] | None:
        return self.options.contact_points[0], self.options.port

    def connect(self) -> None:
        from cassandra import ConsistencyLevel, UnresolvableContactPoints
        from cassandra.auth import PlainTextAuthProvider
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
        from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy

        options = self.options
        profile = ExecutionProfile(
            # Token awareness sends each single-partition batch straight to a replica of its device.
            load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=options.local_dc)),
            consistency_level=ConsistencyLevel.name_to_value[options.consistency_level],
            request_timeout=options.request_timeout,
        )
        # TSBS's queries are many requests each (tsbs_queries.py): --query-timeout bounds every one of them.
        queries = ExecutionProfile(
            load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=options.local_dc)),
            consistency_level=profile.consistency_level, request_timeout=self.spec.query_timeout or options.request_timeout,
        )
        extra = {"protocol_version": options.protocol_version} if options.protocol_version else {}
        auth = PlainTextAuthProvider(options.username, options.password or "") if options.username else None
        try:
            cluster = Cluster(
                options.contact_points, port=options.port, auth_provider=auth, connect_timeout=options.connect_timeout,
                execution_profiles={EXEC_PROFILE_DEFAULT: profile, QUERY_PROFILE: queries}, sockopts=NO_DELAY, **extra,
            )
        except UnresolvableContactPoints:
            raise ModuleError(f"cannot connect to Cassandra at {self._addresses()}: no contact point resolves") from None
        try:
            self.session = cluster.connect()
        except NoHostAvailable as error:
            cluster.shutdown()
            reasons = "; ".join(sorted({reason(problem) for problem in error.errors.values()})) or "no host available"
            raise ModuleError(f"cannot connect to Cassandra at {self._addresses()}: {reasons}") from None
        except Exception:
            cluster.shutdown()
            raise
        self._cluster = cluster
        log.info(
            "connected to %s (protocol v%d), consistency %s, %d request(s) in flight",
            self._addresses(), cluster.protocol_version, options.consistency_level, options.max_sync_calls,
        )

    def _addresses(self) -> str:
        return ", ".join(f"{host}:{self.options.port}" for host in self.options.contact_points)

    def close(self) -> None:
        if self._cluster is not None:
            self._cluster.shutdown()
        self._cluster = self.session = None
        self.writer.forget_statements()
        self.reader.forget_statements()
