"""The influxdb module's schema and counting: the bucket (InfluxDB 2's buckets API) or the database
and its measurements (InfluxDB 1.8's query API), counts of a field every point has, and the data's
size on disk as InfluxDB 1.8 accounts for it."""

from __future__ import annotations

from iotdb_bench.simulator.modules.base import ModuleError, SchemaRole
from iotdb_bench.simulator.modules.influxdb import points
from iotdb_bench.simulator.modules.influxdb.connection import InfluxServerError
from iotdb_bench.simulator.modules.influxdb.options import RANGE, InfluxRole
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.usecases import Measurement


class InfluxSchema(InfluxRole, SchemaRole):
    def setup(self) -> None:
        if self.module.connection.v1:
            self._setup_v1()
            return
        if self.spec.tsbs:
            raise ModuleError(f"--schema {self.spec.shape} on InfluxDB {self.module.connection.version}: TSBS's influx target queries in "
                              "InfluxQL through the 1.x /query API, which InfluxDB 2 serves only for buckets mapped to a database and "
                              "retention policy (DBRP), and the tool maps none: run it on InfluxDB 1.8")
        self._setup_v2()

    def _setup_v2(self) -> None:
        connection = self.module.connection
        buckets = connection.client.buckets_api()
        try:
            existing = connection.call("looking up the bucket", buckets.find_bucket_by_name, self.options.bucket)
        except InfluxServerError as error:
            if error.status != 404:
                raise
            raise ModuleError(f"InfluxDB at {connection.address()} has no buckets API (InfluxDB 1.x?): set the option v1_compat: true") from None
        if existing is not None and self.spec.clean:
            connection.call("deleting the bucket", buckets.delete_bucket, existing)
            existing = None
        if existing is None:
            connection.call("creating the bucket", buckets.create_bucket, bucket_name=self.options.bucket, org=self.options.org)

    def _setup_v1(self) -> None:
        database = self.options.bucket.split("/")[0]
        self.module.connection.influxql(f'CREATE DATABASE "{database}"')
        if self.spec.clean:
            for measurement in self.spec.table_names:
                self.module.connection.influxql(f'DROP MEASUREMENT "{measurement}"', database=database)

    def storage_bytes(self) -> int | None:
        """InfluxDB 1.8's own accounting: the `diskBytes` of every shard of the bucket's database and
        retention policy (SHOW STATS: its TSM files and write-ahead log), whatever measurements they
        hold. InfluxDB 2 reports no sizes through the APIs the module uses: None."""
        if not self.module.connection.v1:
            return None
        database, _, policy = self.options.bucket.partition("/")
        shards = [one for one in self.module.connection.influxql_series("SHOW STATS FOR 'shard'")
                  if one["tags"].get("database") == database and (not policy or one["tags"].get("retentionPolicy") == policy)]
        return sum(int(dict(zip(one["columns"], one["values"][0]))["diskBytes"]) for one in shards)

    def server_version(self) -> str:
        return f"InfluxDB {self.module.connection.version}"  # the X-Influxdb-Version header of GET /ping, read at connect

    def count(self) -> int:
        """Events in the run's measurements: the number of values of a field every point has, over all
        time (TSBS's: its rows, `_tsbs_rows`)."""
        connection = self.module.connection
        if self.spec.tsbs:
            return sum(self._tsbs_rows(measurement) for measurement in USE_CASES[self.spec.shape].measurements)
        measurements = " or ".join(f'r._measurement == "{name}"' for name in self.spec.table_names)
        flux = (f'from(bucket: "{self.options.bucket}") |> {RANGE}\n'
                f'  |> filter(fn: (r) => ({measurements}) and r._field == "{points.count_field(self.layout)}") |> group() |> count()')
        tables = connection.call("counting", connection.client.query_api().query, flux, org=self.options.org)
        return sum(int(record.get_value()) for table in tables for record in table.records)

    def _tsbs_rows(self, measurement: Measurement) -> int:
        """Rows (points) of a TSBS measurement: the values of its first field, which every DevOps row
        has. An IoT row may lack any one field (TSBS's null field) and any one of the tags TSBS writes
        as fields (a null tag), so no field is in every row, and InfluxQL counts values, not points:
        the rows of a raw query of two of those tag fields (no row lacks both) are counted instead."""
        connection = self.module.connection
        use_case = USE_CASES[self.spec.shape]
        tag_fields = [name for name, kind in use_case.tags if kind != "text"]
        if tag_fields:
            return connection.influxql_rows(f'SELECT "{tag_fields[0]}", "{tag_fields[1]}" FROM "{measurement.name}"')
        counted = connection.influxql_series(f'SELECT count("{measurement.field_names[0]}") FROM "{measurement.name}"')
        return sum(int(one["values"][0][1]) for one in counted)
