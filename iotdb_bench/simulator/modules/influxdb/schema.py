"""The influxdb module's schema and counting: the bucket (InfluxDB 2's buckets API) or the database
and its measurements (InfluxDB 1.8's query API), and counts of a field every point has."""

from __future__ import annotations

from iotdb_bench.simulator.modules.base import ModuleError, SchemaRole
from iotdb_bench.simulator.modules.influxdb import points
from iotdb_bench.simulator.modules.influxdb.connection import InfluxServerError
from iotdb_bench.simulator.modules.influxdb.options import RANGE, InfluxRole


class InfluxSchema(InfluxRole, SchemaRole):
    def setup(self) -> None:
        if self.module.connection.v1:
            self._setup_v1()
        else:
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

    def server_version(self) -> str:
        return f"InfluxDB {self.module.connection.version}"  # the X-Influxdb-Version header of GET /ping, read at connect

    def count(self) -> int:
        """Events in the run's measurements: the number of values of a field every point has, over all time."""
        connection = self.module.connection
        measurements = " or ".join(f'r._measurement == "{name}"' for name in self.spec.table_names)
        flux = (f'from(bucket: "{self.options.bucket}") |> {RANGE}\n'
                f'  |> filter(fn: (r) => ({measurements}) and r._field == "{points.count_field(self.layout)}") |> group() |> count()')
        tables = connection.call("counting", connection.client.query_api().query, flux, org=self.options.org)
        return sum(int(record.get_value()) for table in tables for record in table.records)
