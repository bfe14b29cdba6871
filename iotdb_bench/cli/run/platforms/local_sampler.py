"""Resource sampling on the local platform, beside the run, in the CLI (the process that owns the
run's lifetime, so the figures exist even when a worker dies).

The database's processes are the server that listens on the target's host and port (found among
the machine's listening sockets) with all its descendants, or the processes a target option names
(`database_process`: a process id or a process name). Each reading of a process tree adds up:
- CPU: user + system seconds of every living process of the tree plus the time of the children
  they have reaped, so a connection's backend that ends within the run still counts;
- memory: the proportional set size (PSS) of every process, so shared memory (PostgreSQL's shared
  buffers) counts once; the resident set size where PSS cannot be read (said in the source);
- written: the bytes the processes caused to be written to storage (/proc/PID/io write_bytes; the
  kernel adds a reaped child's bytes to its parent's).
The tool's own processes (each worker, the collector) are read the same way, but for memory, their
resident set size (cheap: PSS walks every page table, and they share no buffers). The CLI is read from its
own rusage (RUSAGE_SELF): the workers and the collector are its children, and once it has reaped them
their time and bytes would count in its reaped-children time and in its /proc io a second time.
"""

from __future__ import annotations

import ipaddress
import resource
import socket
import threading
import time

import psutil

from iotdb_bench.simulator.measurement.resources import CPU, MEMORY, WRITTEN, ResourceGroup, ResourceUsage, Sample, Series, summarise, with_final_cpu

# CPU and bytes written are read once a second: the CLI learns of the timed phase's edges at once
# (its status requests are long polls) and reads then, and a counter is interpolated between the
# readings around an edge. A pass over PostgreSQL's processes costs about 2 ms of CPU (cold caches),
# taken from the database's cores on a shared machine: twice a second was 4 ms a second.
INTERVAL_S = 1.0
# Listing a tree's descendants scans every process of the machine (milliseconds): done every few
# seconds and at the timed phase's edges. A child that comes and goes in between still counts, in
# its parent's reaped-children time.
LIST_INTERVAL_S = 5.0
# Memory (PSS) costs the kernel a walk of each process's page tables (about 0.8 ms a process), most
# of the sampler's CPU: read every few seconds and at the timed phase's end, CPU and bytes written
# every second.
MEMORY_INTERVAL_S = 5.0
ALL_FIGURES = (CPU, MEMORY, WRITTEN)


class ProcessTree:
    """A root process and its descendants, read as one."""

    def __init__(self, root: psutil.Process, name: str, descendants: bool = True, pss: bool = True):
        """`pss` False: memory is the resident set size, cheap to read (the tool's own processes share
        little but the interpreter's pages; a database's processes share their buffers)."""
        self.root, self.name, self.descendants = root, name, descendants
        self.uses_rss = not pss
        self.series = Series(name=name)
        self._processes: list[psutil.Process] = [root]
        self._listed_at = -LIST_INTERVAL_S
        self._memory_at = -MEMORY_INTERVAL_S

    def read(self, at: float, relist: bool = False, memory: bool | None = None, edge: bool = False) -> None:
        """One reading stamped `at`; `relist`: list the descendants again; `memory`: read memory
        now (True), not unless its interval has passed (False), or with every relisting (None); `edge`:
        a reading at an edge of the timed phase, kept however long the series grows."""
        if not self.root.is_running():
            return  # the root has ended: its figures stop where they were
        if self.descendants and (relist or time.monotonic() - self._listed_at >= LIST_INTERVAL_S):
            try:
                self._processes = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                return
            self._listed_at = time.monotonic()
        processes = self._processes
        with_memory = (relist if memory is None else memory) or time.monotonic() - self._memory_at >= MEMORY_INTERVAL_S
        cpu = memory = written = 0.0
        cpu_read = memory_read = written_read = False
        for process in processes:
            try:
                with process.oneshot():
                    one_cpu, one_written = self._counters(process)
                    cpu += one_cpu
                    cpu_read = True
                    written += one_written
                    written_read = True
                    if with_memory:
                        memory += self._memory(process)
                        memory_read = True
            except psutil.Error:
                continue  # ended between the listing and the reading, or not readable
        if memory_read:
            self._memory_at = time.monotonic()
        # Counters never go back: a child that has ended but is not yet reaped is unreadable for a moment
        # (a zombie) before its time reaches its parent's; the tree's count holds until it does.
        last = self.series.samples[-1] if self.series.samples else None
        if last is not None and last.cpu_s is not None and cpu_read:
            cpu = max(cpu, last.cpu_s)
        if last is not None and last.written_bytes is not None and written_read:
            written = max(written, last.written_bytes)
        self.series.add(Sample(
            at=at, cpu_s=cpu if cpu_read else None, memory_bytes=int(memory) if memory_read else None,
            written_bytes=int(written) if written_read else None,
        ), pinned=edge)

    @staticmethod
    def _counters(process: psutil.Process) -> tuple[float, float]:
        """CPU seconds and bytes written by the process and the children it has reaped."""
        times = process.cpu_times()
        return times.user + times.system + times.children_user + times.children_system, process.io_counters().write_bytes

    def _memory(self, process: psutil.Process) -> float:
        if not self.uses_rss:
            try:
                return process.memory_full_info().pss
            except (psutil.AccessDenied, AttributeError):
                self.uses_rss = True
        return process.memory_info().rss


class OwnProcess(ProcessTree):
    """The process the sampler runs in (the CLI), without the children it has reaped: those are the
    run's workers and collector, read on their own."""

    def __init__(self, name: str):
        super().__init__(psutil.Process(), name, descendants=False, pss=False)

    @staticmethod
    def _counters(process: psutil.Process) -> tuple[float, float]:
        usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of this process, no children
        return usage.ru_utime + usage.ru_stime, usage.ru_oublock * 512  # the kernel counts output in 512-byte blocks


class DatabaseProcesses:
    """Finds the database's process trees; `problem` says why when it cannot."""

    def __init__(self, address: tuple[str, int] | None, named: str | int | None):
        self.trees: list[ProcessTree] = []
        self.problem: str | None = None
        self.how = ""
        try:
            if named is not None:
                self._named(named)
            elif address is not None:
                self._listening(*address)
            else:
                self.problem = "the target's module names no server address; name the database's process with the target option database_process"
        except psutil.AccessDenied:
            self.problem = "no permission to list the machine's processes and sockets (run as the database's user or root, or name it with database_process)"

    def _named(self, named: str | int) -> None:
        if isinstance(named, int) or str(named).isdigit():
            try:
                root = psutil.Process(int(named))
            except psutil.NoSuchProcess:
                self.problem = f"no process {named} (target option database_process)"
                return
            self._add(root, f"process {root.pid} ({root.name()}) named by database_process")
            return
        matching = [p for p in psutil.process_iter(["name"]) if p.info["name"] == named]
        pids = {p.pid for p in matching}
        roots = [p for p in matching if p.ppid() not in pids]
        if not roots:
            self.problem = f"no process named '{named}' is running (target option database_process)"
        for root in roots:
            self._add(root, f"processes named '{named}' (database_process)")

    def _listening(self, host: str, port: int) -> None:
        if host.startswith("/"):
            pids = {c.pid for c in psutil.net_connections("unix") if c.laddr == host}
            where = f"Unix socket {host}"
        else:
            addresses = _resolve(host)
            if addresses is None:
                self.problem = f"cannot resolve the database's host {host}"
                return
            if not any(_loopback(a) for a in addresses) and not addresses & _local_addresses():
                self.problem = f"the database at {host}:{port} does not run on this machine (its processes cannot be read from here)"
                return
            pids = {
                c.pid for c in psutil.net_connections("inet")
                if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and _serves(c.laddr.ip, addresses)
            }
            where = f"{host}:{port}"
        if not pids:
            self.problem = f"no process listens on {where}"
            return
        if None in pids:
            self.problem = f"the process listening on {where} belongs to another user and cannot be seen (run as root, or name it with database_process)"
            return
        for pid in pids:
            root = _topmost_of_same_name(psutil.Process(pid))
            self._add(root, f"the server listening on {where} (process {root.pid}, {root.name()}) and its children")

    def _add(self, root: psutil.Process, how: str) -> None:
        self.trees.append(ProcessTree(root, f"{root.name()} {root.pid} and its children"))
        self.how = self.how or how


class LocalSampler(threading.Thread):
    """Reads the database's and the tool's processes about once a second, and at once on `mark()`."""

    def __init__(self, database: DatabaseProcesses | None, database_note: str | None):
        super().__init__(daemon=True, name="resource-sampler")
        self.database, self.database_note = database, database_note
        self.workers: list[ProcessTree] = []
        self._worker_named: dict[str, ProcessTree] = {}  # by the name it was watched under ("worker 0")
        self.collector: ProcessTree | None = None
        self.cli = OwnProcess("the CLI")
        self._wake, self._stopped = threading.Event(), threading.Event()
        self._lock = threading.Lock()
        self._memory_at_mark = True

    def watch(self, name: str, pid: int) -> None:
        try:
            tree = ProcessTree(psutil.Process(pid), f"{name} (process {pid})", descendants=False, pss=False)
        except psutil.NoSuchProcess:
            return
        with self._lock:
            if name == "collector":
                self.collector = tree
            else:
                self.workers.append(tree)
                self._worker_named[name] = tree

    def mark(self, edge: str) -> None:
        """Read now, with fresh process lists: the `edge` ("start" or "end") of the timed phase was just
        seen. Memory is read at the end: at the start its cost (a page-table walk per process) would
        fall inside the timed phase, and the last reading before it stands for its first moments."""
        self._memory_at_mark = edge == "end"
        self._wake.set()

    def run(self) -> None:
        relist, memory = True, True
        while not self._stopped.is_set():
            self._read_all(relist, memory)
            relist = self._wake.wait(INTERVAL_S)  # woken: an edge of the timed phase (or the end)
            memory = relist and self._memory_at_mark
            self._wake.clear()

    def stop(self) -> None:
        self._stopped.set()
        self._wake.set()
        self.join()
        self._read_all(relist=True)

    def _read_all(self, relist: bool = False, memory: bool = True) -> None:
        with self._lock:
            # The CLI first: this pass's own cost (its listings and page-table walks) then falls after
            # the CLI's reading, where it happens, not before it. Each reading is stamped when taken.
            trees = [self.cli, *(self.database.trees if self.database else []), *self.workers, *filter(None, [self.collector])]
            for tree in trees:
                tree.read(time.time(), relist, memory, edge=relist)

    # -- figures ------------------------------------------------------------------------------
    def usage(self, start: float, end: float, embedded: bool, workers_cpu: dict[str, tuple[float, float, float | None]] | None = None) -> ResourceUsage:
        """The figures over [start, end]. `workers_cpu`: per watched name ("worker 0"), the process's
        own (started_at, finished_at, CPU seconds) of its timed phase, its last reading when it
        ended before the sampler read it (resources.with_final_cpu)."""
        for name, own in (workers_cpu or {}).items():
            if (tree := self._worker_named.get(name)) is not None:
                tree.series.samples = with_final_cpu(tree.series.samples, *own)
        return ResourceUsage(
            window_start=start, window_end=end, database=self._database_group(start, end), database_in_workers=embedded,
            cores=psutil.cpu_count(),
            workers=_group("the worker processes", self.workers, start, end),
            collector=_group("the collector process", [self.collector] if self.collector else [], start, end),
            cli=_group("the CLI process", [self.cli], start, end),
        )

    def _database_group(self, start: float, end: float) -> ResourceGroup:
        database = self.database
        if database is None or database.problem or not database.trees:
            reason = self.database_note or (database.problem if database else None) or "not found"
            return ResourceGroup(source="not measured", not_measured=dict.fromkeys(ALL_FIGURES, reason))
        memory = "proportional set size" if not any(tree.uses_rss for tree in database.trees) else "resident set size (PSS not readable)"
        return summarise(f"{database.how}; memory: {memory}", [tree.series for tree in database.trees], start, end)


def _group(source: str, trees: list[ProcessTree], start: float, end: float) -> ResourceGroup:
    if not trees:
        return ResourceGroup(source=source, not_measured=dict.fromkeys(ALL_FIGURES, "the process was not started"))
    return summarise(source, [tree.series for tree in trees], start, end)


def _serves(listening: str, addresses: set[str]) -> bool:
    """A socket listening on `listening` accepts connections to one of `addresses`. A JVM's socket bound
    to an IPv4 address is listed as the IPv4-mapped IPv6 address (Cassandra and Elasticsearch on
    127.0.0.1 show as ::ffff:127.0.0.1)."""
    if _is_address(listening) and (mapped := ipaddress.ip_address(listening)).version == 6 and mapped.ipv4_mapped:
        listening = str(mapped.ipv4_mapped)
    if listening in ("0.0.0.0", "::") or listening in addresses:
        return True
    return _is_address(listening) and ipaddress.ip_address(listening).is_loopback and any(_loopback(a) for a in addresses)


def _loopback(address: str) -> bool:
    return _is_address(address) and ipaddress.ip_address(address).is_loopback


def _resolve(host: str) -> set[str] | None:
    try:
        return {str(info[4][0]).split("%")[0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return None


def _local_addresses() -> set[str]:
    addresses = {"127.0.0.1", "::1", "0.0.0.0", "::"}
    for entries in psutil.net_if_addrs().values():
        for entry in entries:
            if entry.family in (socket.AF_INET, socket.AF_INET6):
                addresses.add(entry.address.split("%")[0])
    return {a for a in addresses if _is_address(a)}


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _topmost_of_same_name(process: psutil.Process) -> psutil.Process:
    """The listener's highest ancestor of the same program (a server that listens in a forked child)."""
    name = process.name()
    while (parent := process.parent()) is not None and parent.pid > 1 and parent.name() == name:
        process = parent
    return process

