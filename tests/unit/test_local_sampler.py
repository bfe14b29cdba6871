"""Finding the database's processes on this machine, and reading a process tree (real processes and
sockets of this machine, no fakes)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import psutil

from iotdb_bench.cli.run.platforms.local_sampler import DatabaseProcesses, OwnProcess, ProcessTree
from iotdb_bench.simulator.measurement.resources import Sample


def test_the_server_listening_on_the_address_is_found_with_its_children():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            found = DatabaseProcesses(("localhost", server.getsockname()[1]), None)
            assert found.problem is None, found.problem
            [tree] = found.trees
            assert tree.root.pid in {p.pid for p in [psutil.Process(), *psutil.Process().parents()]}
            tree.read(time.time(), relist=True)
            assert child.pid in {p.pid for p in tree._processes}
            assert tree.series.samples[-1].cpu_s > 0 and tree.series.samples[-1].memory_bytes > 0
        finally:
            child.kill()
            child.wait()


def test_why_a_database_is_not_found():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, not listening
        assert DatabaseProcesses(("127.0.0.1", port), None).problem == f"no process listens on 127.0.0.1:{port}"
    remote = DatabaseProcesses(("192.0.2.10", 5432), None).problem  # TEST-NET-1, never this machine
    assert remote == "the database at 192.0.2.10:5432 does not run on this machine (its processes cannot be read from here)"
    assert "names no server address" in DatabaseProcesses(None, None).problem
    assert DatabaseProcesses(None, 2**22 + 12345).problem == f"no process {2**22 + 12345} (target option database_process)"


def test_a_process_named_by_id():
    found = DatabaseProcesses(None, os.getpid())
    assert found.problem is None and found.trees[0].root.pid == os.getpid()


def test_counters_of_a_tree_never_go_back():
    tree = ProcessTree(psutil.Process(), "this process", descendants=False)
    tree.series.samples.append(Sample(at=0.0, cpu_s=1e9, memory_bytes=1, written_bytes=10**15))
    tree.read(1.0)
    last = tree.series.samples[-1]
    assert last.cpu_s == 1e9 and last.written_bytes == 10**15  # held, as while a child is a zombie
    assert last.memory_bytes > 1  # memory is not a counter: read as it is


BURN = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass\nopen('burnt', 'w').write('x' * 300_000)"


def test_the_cli_does_not_count_the_workers_it_has_reaped(tmp_path):
    """The CLI's children are the run's workers and collector, read on their own: once reaped, their
    CPU and bytes must not reach the CLI's figures as well (they did: 5.4 cores on a 2-core machine)."""
    own, with_children = OwnProcess("the CLI"), ProcessTree(psutil.Process(), "with reaped children", descendants=False)
    own.read(0.0)
    with_children.read(0.0)
    subprocess.run([sys.executable, "-c", BURN], cwd=tmp_path, check=True)  # run and reaped
    os.sync()
    own.read(1.0)
    with_children.read(1.0)

    def grew(tree, field):
        first, last = tree.series.samples[0], tree.series.samples[-1]
        return getattr(last, field) - getattr(first, field)

    assert grew(with_children, "cpu_s") >= 0.35  # the child's time, through the reaped-children counters
    assert grew(own, "cpu_s") < 0.2  # this process's own time only
    assert grew(own, "written_bytes") < 300_000 <= grew(with_children, "written_bytes")


def test_memory_is_read_every_few_seconds_and_on_a_mark_cpu_every_time(monkeypatch):
    """PSS is the sampler's costly reading: between two memory readings a sample holds CPU and bytes
    written only, and a mark (the timed phase's edges) reads memory at once."""
    from iotdb_bench.cli.run.platforms import local_sampler

    clock = [1000.0]
    monkeypatch.setattr(local_sampler.time, "monotonic", lambda: clock[0])
    tree = ProcessTree(psutil.Process(), "this process", descendants=False)
    readings = []
    for step, relist, memory in ((0.0, False, None), (1.0, False, None), (1.0, False, None), (0.5, True, None), (1.0, False, None),
                                 (5.0, False, None), (0.5, True, False), (0.5, True, True)):
        clock[0] += step
        tree.read(clock[0], relist, memory)
        readings.append(tree.series.samples[-1])
    assert [sample.memory_bytes is not None for sample in readings] == [True, False, False, True, False, True, False, True]
    assert all(sample.cpu_s is not None and sample.written_bytes is not None for sample in readings)


def test_the_start_mark_reads_cpu_at_once_and_leaves_memory_to_the_end_mark():
    """Memory's page-table walks at the start would cost the CLI CPU inside the timed phase."""
    import os

    from iotdb_bench.cli.run.platforms.local_sampler import LocalSampler

    sampler = LocalSampler(None, "no database in this test")
    sampler.watch("collector", os.getpid())
    assert sampler.collector.uses_rss and sampler.cli.uses_rss  # the tool's own processes: RSS, no page-table walks
    sampler.start()
    try:
        samples = sampler.collector.series.samples
        deadline = time.time() + 5
        while not samples and time.time() < deadline:
            time.sleep(0.01)
        # memory is read every 5 s otherwise: within this test, only a mark can read it
        for edge, memory_read in (("start", False), ("end", True)):
            before = len(samples)
            sampler.mark(edge)
            time.sleep(0.3)
            new = samples[before:]
            assert new and all(sample.cpu_s is not None for sample in new), edge
            assert any(sample.memory_bytes is not None for sample in new) is memory_read, edge
    finally:
        sampler.stop()


def test_a_jvms_ipv4_socket_listed_as_ipv4_mapped_ipv6_serves_its_address():
    """Cassandra and Elasticsearch bound to 127.0.0.1 are listed on ::ffff:127.0.0.1: their CPU was
    "not measured (no process listens on 127.0.0.1:9042)"."""
    from iotdb_bench.cli.run.platforms.local_sampler import _serves

    assert _serves("::ffff:127.0.0.1", {"127.0.0.1"})
    assert _serves("::ffff:10.0.0.5", {"10.0.0.5"})
    assert not _serves("::ffff:10.0.0.5", {"10.0.0.6"})
