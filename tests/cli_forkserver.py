"""run_cli's fast path: `python run.py ARGS` forked from an interpreter that has imported the CLI once,
instead of a new interpreter importing it again for each of the suite's runs (the contract suite's
SQLite and null targets: 14 CPU s forked, 21 s with an interpreter per run).

A child is the run as a user starts it, but for what an import fixed: it gets its own session, folder,
environment, argv, process title and stdio (files, read back as subprocess.run would have captured
them), then executes run.py as `__main__` and exits through the interpreter's normal path (atexit,
flushes), so its exit code is the CLI's own. What the CLI fixes at import is its terminal (width and
colours from the environment): rebuilt in the child from the child's environment. Python's random
reseeds itself in a forked child; nothing of the CLI runs in the server before a fork.

IOTBENCH_TEST_FORK_CLI=0 runs every CLI as its own interpreter, as before (to compare or to rule the
fast path out). Tests of the start-up itself (imports, the installed command, signals) start their own
subprocess and never come here.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

FORK_ENV = "IOTBENCH_TEST_FORK_CLI"
REPO_ROOT = Path(__file__).resolve().parents[1]
RUN_PY = REPO_ROOT / "run.py"
# What nearly every run imports: the entry point, the commands and the layers under them.
PRELOAD = ("iotdb_bench.cli.commands.entry", "iotdb_bench.cli.commands.insert", "iotdb_bench.cli.commands.reads",
           "iotdb_bench.cli.commands.study", "iotdb_bench.cli.commands.saved_results", "iotdb_bench.cli.terminal")
START_TIMEOUT_S = 120.0


def wanted() -> bool:
    return os.environ.get(FORK_ENV, "1") != "0"


# -- the server: `python -m tests.cli_forkserver SOCKET` ---------------------------------------------------
def serve(socket_path: str) -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_write)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    print("ready", flush=True)
    running: dict[int, socket.socket] = {}
    while True:
        readable, _, _ = select.select([listener, sys.stdin, wake_read], [], [])
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 1):  # the test process is gone
            for pid in running:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
            return
        if listener in readable:
            connection, _ = listener.accept()
            request = json.loads(connection.makefile("rb").readline())
            pid = os.fork()
            if pid == 0:
                for fd in (wake_read, wake_write, *(held.detach() for held in (listener, connection, *running.values()))):
                    os.close(fd)  # detached first: the socket objects must not close these numbers again later
                _run_in_child(request)  # never returns
            running[pid] = connection
            connection.sendall(f"{pid}\n".encode())
        if wake_read in readable:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_read, 512)
            _report_ended(running)


def _report_ended(running: dict[int, socket.socket]) -> None:
    while running:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        connection = running.pop(pid, None)
        if connection is not None:
            with contextlib.suppress(OSError):
                connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
            connection.close()


def _run_in_child(request: dict) -> None:
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, path, mode in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], os.O_WRONLY), (2, request["stderr"], os.O_WRONLY)):
        opened = os.open(path, mode)
        os.dup2(opened, fd)
        os.close(opened)
    sys.argv = [str(RUN_PY), *request["args"]]
    import setproctitle
    from rich.console import Console

    from iotdb_bench.cli import terminal

    setproctitle.setproctitle(" ".join([sys.executable, *sys.argv]))
    terminal.console.__dict__.update(Console(width=terminal.output_width()).__dict__)
    terminal.errors.__dict__.update(Console(stderr=True).__dict__)
    import runpy

    runpy.run_path(str(RUN_PY), run_name="__main__")
    raise SystemExit(0)


# -- the client, one server per test process ---------------------------------------------------------------
class _Server:
    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="iotbench-cli-fork-")
        self.socket_path = os.path.join(self.folder, "socket")
        self.process = subprocess.Popen([sys.executable, "-m", "tests.cli_forkserver", self.socket_path], cwd=REPO_ROOT,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self.process.stdout.readline() if self.process.stdout else ""
        if ready.strip() != "ready":
            raise RuntimeError(f"the CLI fork server did not start (exit code {self.process.poll()})")

    def run(self, args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str, str]:
        with tempfile.TemporaryDirectory(dir=self.folder) as outputs:
            stdout, stderr = os.path.join(outputs, "stdout"), os.path.join(outputs, "stderr")
            Path(stdout).touch()
            Path(stderr).touch()
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                connection.connect(self.socket_path)
                request = {"args": args, "cwd": str(cwd), "env": env, "stdout": stdout, "stderr": stderr}
                connection.sendall(json.dumps(request).encode() + b"\n")
                answers = connection.makefile("rb")
                pid = int(answers.readline())
                connection.settimeout(timeout)
                try:
                    line = answers.readline()
                except TimeoutError:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(pid, signal.SIGKILL)
                    raise subprocess.TimeoutExpired([str(RUN_PY), *args], timeout) from None
            if not line:
                raise RuntimeError("the CLI fork server ended during a run")
            return int(line), Path(stdout).read_text(errors="replace"), Path(stderr).read_text(errors="replace")


_server: _Server | None = None
_starting = threading.Lock()


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str, str]:
    """The CLI's exit code, stdout and stderr, as subprocess.run(..., capture_output=True, text=True) gives them."""
    global _server
    with _starting:
        if _server is None or _server.process.poll() is not None:
            _server = _Server()
    return _server.run(args, cwd, env, timeout)


if __name__ == "__main__":
    serve(sys.argv[1])
