"""The local platform: the collector and the workers as subprocesses of the CLI.

They run the same entry points as the pods. Each child is in its own session (a Ctrl-C in the
terminal reaches only the CLI, which then stops them in order) and asks the kernel to kill it if
the CLI dies, so no process outlives the run whatever happens.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
from argparse import ArgumentTypeError
from pathlib import Path

from iotdb_bench.cli.errors import RunFailed, UsageProblem
from iotdb_bench.cli.run.platforms import StatusCallback
from iotdb_bench.cli.run.platforms.follow import Deadline, follow_run, wait_for_collector
from iotdb_bench.cli.run.platforms.local_sampler import DatabaseProcesses, LocalSampler
from iotdb_bench.cli.run.platforms.sampling import marking, timed_window
from iotdb_bench.cli.run.platforms.zygote_client import ForkedProcess, Zygote
from iotdb_bench.cli.run.platforms.zygote_client import wanted as zygote_wanted
from iotdb_bench.simulator.__main__ import METRICS_PORT_ENV, port_number
from iotdb_bench.simulator.collector_client import CollectorClient
from iotdb_bench.simulator.modules import ModuleError, module_class
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec

REPO_ROOT = Path(__file__).resolve().parents[4]
FIRST_CHOSEN_PORT = 20_000  # the collector's port is chosen from here up to the ephemeral range
STOP_GRACE_S = 5.0  # above the collector's wait for a final scrape (FINAL_SCRAPE_WAIT_S)
LOG_TAIL_LINES = 15
_PR_SET_PDEATHSIG = 1


def free_port() -> int:
    """A port nobody listens on, for a server to bind a moment later (reserve_port's, let go at once)."""
    with reserve_port() as reservation:
        return reservation.getsockname()[1]


def reserve_port() -> socket.socket:
    """A socket bound to a port nobody has bound, held by the caller until the collector listens on that port (or the run ends): below
    the kernel's range of ephemeral ports where it can, since any outgoing connection of the machine may
    take a port of that range as its own in the meantime (bind(0) answers from it). Bound without
    SO_REUSEADDR, so that another run's choice meanwhile is refused it (two runs started together drew
    the same port, and the second collector failed to bind), then marked reusable, so that the
    collector's server (which binds with SO_REUSEADDR) can bind it while it is held: it never listens."""
    low = _ephemeral_ports_start()
    for port in [*random.sample(range(FIRST_CHOSEN_PORT, low), min(50, max(0, low - FIRST_CHOSEN_PORT))), 0]:  # 0: any the kernel gives
        reservation = socket.socket()
        try:
            reservation.bind(("127.0.0.1", port))
        except OSError:
            reservation.close()
            continue
        reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        return reservation
    raise OSError("no free port on 127.0.0.1 for the collector")


def _ephemeral_ports_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):  # not Linux: the kernel's choice
        return FIRST_CHOSEN_PORT


def _die_with_parent() -> None:
    """Runs in the child before exec: SIGKILL it when the CLI process goes away."""
    with contextlib.suppress(OSError):  # not Linux: the CLI's own cleanup still stops the children
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except FileNotFoundError:
        return ""
    return "\n".join(text[-lines:])


def _own_session_dying_with_the_cli() -> dict:
    """Popen options of every process the CLI starts: the package importable, its own session (a
    Ctrl-C in the terminal reaches only the CLI), killed by the kernel if the CLI dies."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    return {"env": env, "start_new_session": True, "preexec_fn": _die_with_parent}


class Child:
    def __init__(self, name: str, args: list[str], log_path: Path, zygote: Zygote | None = None):
        self.name, self.log_path = name, log_path
        if zygote is not None:
            try:
                self.process: subprocess.Popen | ForkedProcess = zygote.start(args, log_path)
            except OSError as error:
                raise RunFailed(f"could not start the {name}: {error}") from None
            return
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "iotdb_bench.simulator", *args], stdin=subprocess.DEVNULL,
                                            stdout=log, stderr=subprocess.STDOUT, **_own_session_dying_with_the_cli())

    def failure(self) -> str | None:
        code = self.process.poll()
        if code is None or code == 0:
            return None
        tail = log_tail(self.log_path, 1)
        return f"{self.name} exited with code {code}" + (f": {tail}" if tail else "")


def stop_all(children: list[Child]) -> None:
    for child in children:
        if child.process.poll() is None:
            child.process.terminate()
    for child in children:
        try:
            child.process.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            child.process.kill()
            child.process.wait()


def database_sampler(spec: RunSpec, database_process: str | int | None) -> tuple[LocalSampler, bool]:
    """A sampler of the run's database processes (and the tool's), and whether the database is
    embedded in the workers."""
    try:
        module = module_class(spec.module)(spec)
    except ModuleError as error:
        return LocalSampler(None, f"the module's options cannot be read here: {error}"), False
    location = module.capabilities.location.value
    if location == "embedded":
        return LocalSampler(None, "an embedded database: its work is inside the worker processes (see the workers' figures)"), True
    if location == "none":
        return LocalSampler(None, f"module '{spec.module}' stores nothing: there is no database"), False
    if location == "managed" and database_process is None:
        return LocalSampler(None, "a managed service: its machines are not visible to the tool"), False
    return LocalSampler(DatabaseProcesses(module.server_address(), database_process), None), False


def metrics_port() -> int:
    """The collector's metrics port: pinned by IOTBENCH_METRICS_PORT (a scraper's config names it), else 0 (any)."""
    try:
        return port_number(os.environ.get(METRICS_PORT_ENV, "0"))
    except ArgumentTypeError as error:
        raise UsageProblem(f"{METRICS_PORT_ENV}: {error}") from None


class LocalPlatform:
    def __init__(self, database_process: str | int | None = None, module: str | None = None):
        self.database_process = database_process
        self.metrics_port = metrics_port()
        self._folder = tempfile.TemporaryDirectory(prefix="iotdb-bench-")
        # Started now, its imports overlap the CLI's own preparation of the first run.
        preload = [f"iotdb_bench.simulator.modules.{module}"] if module else []
        self.zygote = Zygote(preload, Path(self._folder.name) / "zygote.log", _own_session_dying_with_the_cli) if zygote_wanted() else None

    def close(self) -> None:
        if self.zygote is not None:
            self.zygote.close()
        self._folder.cleanup()

    def run(self, spec: RunSpec, timeout: float, on_status: StatusCallback, log_dir: Path) -> RunReport:
        log_dir.mkdir(parents=True, exist_ok=True)
        deadline = Deadline(timeout)
        children: list[Child] = []
        sampler, embedded = database_sampler(spec, self.database_process)
        with tempfile.TemporaryDirectory(prefix="iotdb-bench-") as folder:
            spec_path = Path(folder) / "spec.json"
            spec.dump(spec_path)
            reservation = reserve_port()
            port = reservation.getsockname()[1]
            url = f"http://127.0.0.1:{port}"
            sampler.start()
            try:
                children.append(Child("collector", ["collector", "--spec", str(spec_path), "--port", str(port),
                                                    "--metrics-port", str(self.metrics_port)], log_dir / "collector.log", self.zygote))
                # Workers start together with the collector (they retry registering until it answers):
                # their interpreter start-up then overlaps the collector's instead of following it.
                # Query clients of a mixed run are worker processes too, after the workers (spec.role_of).
                for index in range(spec.processes):
                    args = ["worker", "--spec", str(spec_path), "--index", str(index), "--collector", url]
                    name = f"worker {index}" if spec.role_of(index) == "worker" else f"query client {index - spec.workers}"
                    children.append(Child(name, args, log_dir / f"{name.replace(' ', '-')}.log", self.zygote))
                for child in children:
                    sampler.watch(child.name, child.process.pid)

                def check_processes() -> str | None:
                    return next(filter(None, (child.failure() for child in children)), None)

                http = CollectorClient(url, run_id=spec.run_id)
                wait_for_collector(http, deadline, check_processes)
                try:
                    report = follow_run(http, deadline, marking(on_status, sampler, spec.workers), check_processes,
                                        heartbeat_timeout=spec.heartbeat_timeout)
                except RunFailed as failure:
                    raise RunFailed(f"{failure}{self._log_hint(children)}") from None
            finally:
                reservation.close()
                sampler.stop()
                stop_all(children)
            window = timed_window(report)
            if window is not None:
                own_cpu = {f"worker {w.worker}": (w.started_at, w.finished_at, w.cpu_s) for w in report.workers if w.role == "worker"}
                report.resources = sampler.usage(*window, embedded, own_cpu)
                # Every process of a local run shares this machine's cores (the database's too, when
                # its processes were found here): the client's share of them is the bottleneck figure.
                report.resources.client_cores = float(os.cpu_count() or 1)
                report.resources.client_cores_of = "machine"
                report.resources.database_shares_cores = report.resources.database.cpu_s is not None and not embedded
            return report

    @staticmethod
    def _log_hint(children: list[Child]) -> str:
        failed = [child for child in children if child.failure()]
        return f" (log: {failed[0].log_path})" if failed else ""
