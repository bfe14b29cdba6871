"""The victoriametrics module's schema and counting: the server's flags checked (a retention that
reaches back to the events, no deduplication), the run's series deleted when clean, counts of the
temperature samples after a flush (and the bounded wait until every acknowledged one is found)."""

from __future__ import annotations

import logging
import re
import time

import numpy as np

from iotdb_bench.simulator.modules.base import ModuleError, SchemaRole, count_until
from iotdb_bench.simulator.modules.victoriametrics.connection import VmConnection
from iotdb_bench.simulator.modules.victoriametrics.options import DAY_S, INSERTED_COUNTER, METRICS_CACHE_S, MONTH_S, RETENTION_UNITS_S, VmRole
from iotdb_bench.simulator.modules.victoriametrics.series import selector
from iotdb_bench.simulator.queries.parameters import iso_ms
from iotdb_bench.simulator.report import IngestionWait
from iotdb_bench.simulator.workload.tsbs import USE_CASES

# IoT's count: two series of which every row has a sample (the capacities TSBS writes as fields: a
# row's null tag leaves out one at most), exported this many trucks and samples per line at a time.
IOT_COUNTED_FIELDS = ("load_capacity", "fuel_capacity")
IOT_COUNT_TRUCKS = 64
EXPORT_ROWS_PER_LINE = 100_000

log = logging.getLogger("victoriametrics")


class VmSchema(VmRole, SchemaRole):
    # vm_rows_inserted_total counts an import's or a write's rows as it handles the request, and each read
    # of /metrics waits out its one-second cache (_fresh_metrics): a second read to settle would only add that.
    counters_final = True

    def setup(self) -> None:
        connection = self.module.connection
        self._check_flags(_flags(connection.request("reading /metrics", "GET", "/metrics").text))
        if self.spec.clean:
            connection.request("deleting the run's series", "POST", "/api/v1/admin/tsdb/delete_series",
                               data={"match[]": selector(self.module.series.metrics)})

    def _check_flags(self, flags: dict[str, str]) -> None:
        """Refuse a server that would drop the run's samples: a retention that does not reach back to
        the events' times, or deduplication."""
        address = self.module.connection.address()
        retention = flags.get("retentionPeriod")
        if retention is None:
            log.warning("VictoriaMetrics at %s does not show its flags on /metrics: retention not checked", address)
        else:
            kept_s = retention_seconds(retention)
            oldest_ms = self.module.series.oldest_ms
            needed_s = time.time() - oldest_ms / 1000
            if kept_s is not None and kept_s < needed_s:
                raise ModuleError(
                    f"VictoriaMetrics at {address} keeps samples for -retentionPeriod={retention}, but the {'rows' if self.spec.tsbs else 'events'} "
                    f"start at {iso_ms(oldest_ms)[:10]} ({needed_s / DAY_S:.0f} days ago) and would be dropped: start it with -retentionPeriod=100y"
                )
        dedup = flags.get("dedup.minScrapeInterval", "0s")
        if dedup not in ("0s", "0", ""):
            raise ModuleError(f"VictoriaMetrics at {address} deduplicates samples (-dedup.minScrapeInterval={dedup}), which merges a "
                              "device's events: run it without that flag")

    def server_version(self) -> str:
        """From the vm_app_version metric; Debian's build leaves its version label empty and says so."""
        metrics = self.module.connection.request("reading /metrics", "GET", "/metrics").text
        found = re.search(r'^vm_app_version\{version="([^"]*)"', metrics, re.MULTILINE)
        version = found.group(1) if found else ""
        return f"VictoriaMetrics {version}" if version else "VictoriaMetrics (this build does not report its version)"

    def count(self) -> int:
        """Temperature samples of the run's series (TSBS's: each measurement's first field's, one per
        row; IoT's rows `_iot_rows`), after the server flushed its in-memory buffers."""
        self.module.connection.flush()
        series = self.module.series
        if self.spec.shape == "tsbs-iot":
            return sum(self._iot_rows(measurement.name) for measurement in USE_CASES[self.spec.shape].measurements)
        result = self.module.connection.instant(f"sum(count_over_time({selector(series.temperature)}[{{window}}]))", since_ms=series.oldest_ms)
        return round(float(result[0]["value"][1])) if result else 0

    def _iot_rows(self, measurement: str) -> int:
        """Rows of a TSBS IoT measurement. A row may lack any field (TSBS's null field) and any one
        capacity (a null tag; TSBS writes the capacities as fields), so no series has a sample of every
        row, and MetricsQL counts a series' samples: every row has its load or its fuel capacity, so the
        rows are the distinct times of both series of each label set, exported a few trucks at a time
        (bounded memory)."""
        connection, since_ms = self.module.connection, self.module.series.oldest_ms
        both = f'__name__=~"{measurement}_({"|".join(IOT_COUNTED_FIELDS)})"'
        names = connection.label_values("name", f"{{{both}}}", since_ms)
        chosen = [f'name=~"{"|".join(names[at : at + IOT_COUNT_TRUCKS])}"' for at in range(0, len(names), IOT_COUNT_TRUCKS)]
        rows = 0
        for trucks in [*chosen, 'name=""']:  # and the rows whose name is null, in series without one
            times: dict[tuple[tuple[str, str], ...], list[np.ndarray]] = {}
            for line in connection.export(f"{{{both}, {trucks}}}", EXPORT_ROWS_PER_LINE, since_ms):
                labels = tuple(sorted((name, value) for name, value in line["metric"].items() if name != "__name__"))
                times.setdefault(labels, []).append(np.asarray(line["timestamps"], dtype=np.int64))
            rows += sum(len(np.unique(np.concatenate(parts))) for parts in times.values())
        return rows

    def wait_for_count(self, expected: int, run_ended_at: float) -> IngestionWait:
        """Acknowledged samples are searchable after a flush, but series the run created were seen to
        stay unfound for up to 10 s: count (each time after a flush) until all are there, bounded."""
        return count_until(self.count, expected, run_ended_at, self.options.visible_wait_s, self.options.visible_poll_s)

    def server_counters(self) -> dict[str, int] | None:
        """Events as the server counted them: its samples received over the run's protocol (server-wide,
        so other clients' writes count too) divided by the samples per event."""
        metrics = _fresh_metrics(self.module.connection)
        name = INSERTED_COUNTER[self.module.series.ingestion]
        for line in metrics.splitlines():
            if line.startswith(name + " "):
                return {"events_inserted_server_wide": int(float(line.split()[-1]) // self.module.series.samples_per_event)}
        return None

    def storage_bytes(self) -> int | None:
        """VictoriaMetrics' own accounting after a flush: the sum of vm_data_size_bytes (/metrics: its data
        and index parts), which is every series the server holds, not the run's alone (it stores all
        series together and reports no size per series)."""
        connection = self.module.connection
        connection.flush()
        metrics = _fresh_metrics(connection)
        sizes = re.findall(r"^vm_data_size_bytes\{[^}]*\} ([0-9.e+]+)$", metrics, flags=re.MULTILINE)
        return round(sum(float(size) for size in sizes)) if sizes else None


def _fresh_metrics(connection: VmConnection) -> str:
    """/metrics rendered after this call began: VictoriaMetrics renders it at most once a second and
    serves that copy meanwhile, so the second of two reads a second apart is a fresh one."""
    connection.request("reading /metrics", "GET", "/metrics")
    time.sleep(METRICS_CACHE_S + 0.05)
    return connection.request("reading /metrics", "GET", "/metrics").text


def _flags(metrics: str) -> dict[str, str]:
    """The server's command-line flags, as /metrics lists them: `flag{name="...", value="..."} 1`."""
    return dict(re.findall(r'^flag\{name="([^"]+)", value="([^"]*)"', metrics, flags=re.MULTILINE))


def retention_seconds(value: str) -> float | None:
    """A -retentionPeriod value in seconds: a number with a unit (s, m, h, d, w, y), months without one."""
    match = re.fullmatch(r"([0-9.]+)([smhdwy]?)", value.strip())
    if not match:
        return None
    number, unit = float(match.group(1)), match.group(2)
    return number * (RETENTION_UNITS_S[unit] if unit else MONTH_S)

