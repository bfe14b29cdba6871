"""TSBS's `devops` use case: every host reports nine measurements each step (TSBS's
pkg/data/usecases/devops/), in TSBS's order cpu, diskio, disk, kernel, mem, net, nginx, postgresl
(TSBS's spelling), redis: 101 fields.

Counters (`monotonic`) add |N(mean, 1)| each step from 0; gauges are clamped walks; redis's three
`instantaneous_*` are unbounded walks with N(1, 1) steps; disk writes seven fields derived from its
free bytes, mem nine from used, cached and buffered bytes of the host's total (8, 12 or 16 GiB);
kernel's boot_time is a number per host, redis's uptime the time since the start. The measurements
that carry tags of their own (diskio's serial, disk's path and fstype, net's interface, nginx's and
redis's port and server) draw them per host.
"""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.workload.tsbs.hosts import Draw, entity_draws
from iotdb_bench.simulator.workload.tsbs.usecases import CPU, Context, Field, Measurement, OwnTag, UseCase, written
from iotdb_bench.simulator.workload.tsbs.walks import Walk, clamped, monotonic, normal, unbounded

ONE_TERABYTE = 1 << 40
INODE_SIZE = 4096
MEMORY_TOTALS = (8 << 30, 12 << 30, 16 << 30)
SIXTEEN_GB = float(16 << 30)
BOOT_TIMES = 240  # kernel's boot_time: a number in [0, 240) per host (TSBS's rand.Int63n(240))


def _counters(names: str, mean: float) -> tuple[Field, ...]:
    return tuple(Field(name, monotonic(normal(mean, 1.0))) for name in names.split())


def _gauges(names: str, mean: float, high: float, start: float = 0.0) -> tuple[Field, ...]:
    return tuple(Field(name, clamped(normal(mean, 1.0), 0.0, high, start)) for name in names.split())


def _port_and_server(prefix: str) -> tuple[OwnTag, ...]:
    def port(draw: Draw) -> list[str]:
        return [str(1024 + value) for value in draw(0, 20_000).tolist()]

    def server(draw: Draw) -> list[str]:
        return [f"{prefix}_{value}" for value in draw(1, 100_000).tolist()]

    return (("port", port), ("server", server))


def _serial(draw: Draw) -> list[str]:
    return [f"{a:03d}-{b:03d}-{c:03d}" for a, b, c in zip(draw(0, 1000).tolist(), draw(1, 1000).tolist(), draw(2, 1000).tolist())]


class Disk(Measurement):
    """One walk, the free bytes (a clamped N(50, 1) walk in [0, 1 TB] from half of it), and the
    fields TSBS derives from it in integers: total, free, used, used_percent, inodes."""

    @property
    def field_names(self) -> tuple[str, ...]:
        return ("total", "free", "used", "used_percent", "inodes_total", "inodes_free", "inodes_used")

    @property
    def integer_fields(self) -> tuple[bool, ...]:
        return (True,) * len(self.field_names)

    def values(self, units: np.ndarray, steps: np.ndarray, context: Context) -> np.ndarray:
        free = written(units[:, :, 0], None)
        total = float(ONE_TERABYTE)
        used = total - free
        inodes_total = float(ONE_TERABYTE // INODE_SIZE)
        inodes_free = np.floor(free / INODE_SIZE)  # free is a whole number below 2^53: exact
        return np.stack([np.full_like(free, total), free, used, np.trunc(100.0 * (used / total)), np.full_like(free, inodes_total),
                         inodes_free, inodes_total - inodes_free], axis=-1)


class Mem(Measurement):
    """Three clamped walks of the host's total (used, cached, buffered bytes: N(0, total/64) steps,
    uniform starts) and the nine fields TSBS derives from them (available = free = total - used, the
    percentages as doubles, computed in TSBS's order of operations)."""

    @property
    def field_names(self) -> tuple[str, ...]:
        return ("total", "available", "used", "free", "cached", "buffered", "used_percent", "available_percent", "buffered_percent")

    @property
    def integer_fields(self) -> tuple[bool, ...]:
        return (True,) * 6 + (False,) * 3  # TSBS's percentages are float64s

    def totals(self, seed: int, hosts: np.ndarray) -> np.ndarray:
        return np.array(MEMORY_TOTALS, dtype=np.int64)[entity_draws(seed, self.salt, hosts)(3, len(MEMORY_TOTALS))]

    def walks(self, seed: int, hosts: np.ndarray) -> list[Walk]:
        return [clamped(normal(0.0, total / 64), 0.0, float(total)) for total in self.totals(seed, hosts).tolist() for _ in self.walked]

    def values(self, units: np.ndarray, steps: np.ndarray, context: Context) -> np.ndarray:
        total = np.broadcast_to(self.totals(context.seed, context.hosts).astype(np.float64), units.shape[:2])
        used, cached, buffered = (written(units[:, :, f], None) for f in range(3))
        available = total - used
        return np.stack([total, available, used, available, cached, buffered, 100.0 * (used / total), 100.0 * (available / total),
                         100.0 * buffered / total], axis=-1)


class Kernel(Measurement):
    """boot_time (a number per host), then five counters."""

    @property
    def field_names(self) -> tuple[str, ...]:
        return ("boot_time", *super().field_names)

    @property
    def integer_fields(self) -> tuple[bool, ...]:
        return (True, *super().integer_fields)

    def values(self, units: np.ndarray, steps: np.ndarray, context: Context) -> np.ndarray:
        boot = entity_draws(context.seed, self.salt, context.hosts)(3, BOOT_TIMES).astype(np.float64)
        counters = super().values(units, steps, context)
        return np.concatenate([np.broadcast_to(boot, units.shape[:2])[:, :, None], counters], axis=-1)


class Redis(Measurement):
    """uptime_in_seconds (the time since the start: TSBS adds the interval each tick), then 30 walks."""

    @property
    def field_names(self) -> tuple[str, ...]:
        return ("uptime_in_seconds", *super().field_names)

    @property
    def integer_fields(self) -> tuple[bool, ...]:
        return (True, *super().integer_fields)

    def values(self, units: np.ndarray, steps: np.ndarray, context: Context) -> np.ndarray:
        uptime = (steps * context.interval_ms // 1000).astype(np.float64)
        fields = super().values(units, steps, context)
        return np.concatenate([np.broadcast_to(uptime[:, None], units.shape[:2])[:, :, None], fields], axis=-1)


DISKIO = Measurement("diskio", _counters("reads writes", 50) + _counters("read_bytes write_bytes", 100)
                     + _counters("read_time write_time io_time", 5), salt=0x1B873593CC9E2D51, own_tags=(("serial", _serial),))
DISK = Disk("disk", (Field("free", clamped(normal(50.0, 1.0), 0.0, float(ONE_TERABYTE), ONE_TERABYTE / 2)),), salt=0x85EBCA6BC2B2AE35,
            own_tags=(("path", lambda draw: [f"/dev/sda{value}" for value in draw(0, 10).tolist()]),
                      ("fstype", lambda draw: [("ext3", "ext4", "btrfs")[value] for value in draw(1, 3).tolist()])))
KERNEL = Kernel("kernel", _counters("interrupts context_switches processes_forked disk_pages_in disk_pages_out", 5), salt=0x27D4EB2F165667C5)
# mem's walks depend on each host's total (Mem.walks): these only name them.
MEM = Mem("mem", tuple(Field(name, clamped(normal(0.0, 1.0), 0.0, 1.0)) for name in ("used", "cached", "buffered")), salt=0x94D049BB133111EB)
NET = Measurement("net", _counters("bytes_sent bytes_recv packets_sent packets_recv", 50) + _counters("err_in err_out drop_in drop_out", 5),
                  salt=0xD6E8FEB86659FD93, own_tags=(("interface", lambda draw: [f"eth{value}" for value in draw(0, 4).tolist()]),))
NGINX = Measurement("nginx", tuple(Field(name, monotonic(normal(5.0, 1.0)) if name in ("accepts", "handled", "requests")
                                         else clamped(normal(5.0, 1.0), 0.0, 100.0, 0.0))
                                   for name in ("accepts", "active", "handled", "reading", "requests", "waiting", "writing")),
                    salt=0xA0761D6478BD642F, own_tags=_port_and_server("nginx"))
POSTGRESQL = Measurement("postgresl", (*_gauges("numbackends xact_commit xact_rollback blks_read blks_hit tup_returned tup_fetched tup_inserted " "tup_updated tup_deleted conflicts temp_files", 5, 1000), Field("temp_bytes", clamped(normal(1024.0, 1.0), 0.0, float(1 << 30), 0.0)), *_gauges("deadlocks blk_read_time blk_write_time", 5, 1000)), salt=0xE7037ED1A0B428DB)
REDIS = Redis("redis", _counters("total_connections_received", 5) + _counters("expired_keys evicted_keys keyspace_hits keyspace_misses", 50)
              + tuple(Field(name, unbounded(normal(1.0, 1.0))) for name in ("instantaneous_ops_per_sec", "instantaneous_input_kbps",
                                                                            "instantaneous_output_kbps"))
              + _gauges("connected_clients", 50, 10_000)
              + _gauges("used_memory used_memory_rss used_memory_peak used_memory_lua", 50, SIXTEEN_GB, SIXTEEN_GB / 2)
              + _gauges("rdb_changes_since_last_save", 50, 10_000)
              + _gauges("sync_full sync_partial_ok sync_partial_err pubsub_channels pubsub_patterns latest_fork_usec connected_slaves "
                        "master_repl_offset repl_backlog_active repl_backlog_size repl_backlog_histlen", 5, 1000)
              + _gauges("mem_fragmentation_ratio", 5, 100)
              + _gauges("used_cpu_sys used_cpu_user used_cpu_sys_children used_cpu_user_children", 5, 1000),
              salt=0x9E6C63D0676A9A99, own_tags=_port_and_server("redis"))

DEVOPS = UseCase("devops", "tsbs-devops", "host", (CPU, DISKIO, DISK, KERNEL, MEM, NET, NGINX, POSTGRESQL, REDIS))
