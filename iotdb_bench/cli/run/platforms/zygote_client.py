"""The CLI's side of zygote.py: one template process per invocation of the local platform,
started beside the CLI's own preparation, from which every collector and worker is forked.

`ForkedProcess` answers as much of subprocess.Popen as the local platform uses (pid, poll, wait,
terminate, kill). The zygote, not the CLI, is the children's parent: it reports their exit codes.
IOTBENCH_ZYGOTE=0 starts every process as its own interpreter instead (as before; for comparisons).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

ZYGOTE_ENV = "IOTBENCH_ZYGOTE"
# The code every collector and worker runs; the target's module is added per invocation.
PRELOAD = ["iotdb_bench.simulator.collector.service", "iotdb_bench.simulator.worker.worker"]
# A blank argument of the zygote: room in its command line for each child's own (setproctitle writes a
# child's over the arguments it inherited, never over its environment).
TITLE_ROOM = " " * 400
ANSWER_TIMEOUT_S = 60.0
CLOSE_WAIT_S = 5.0


def wanted() -> bool:
    return os.environ.get(ZYGOTE_ENV, "1") != "0"


class ForkedProcess:
    def __init__(self, zygote: Zygote, pid: int):
        self.zygote, self.pid = zygote, pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.exit_code(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        code = self.zygote.wait_for(self.pid, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(f"process {self.pid}", timeout or 0)
        self.returncode = code
        return code

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def _signal(self, signum: int) -> None:
        if self.poll() is None:  # not reaped yet: the pid is still this child's
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)


class Zygote:
    def __init__(self, preload: list[str], log_path: Path, popen_options: Callable[[], dict]):
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "iotdb_bench.cli.run.platforms.zygote", *PRELOAD, *preload, TITLE_ROOM],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, **popen_options(),
            )
        self._started: queue.Queue[int | None] = queue.Queue()
        self._exited: dict[int, int] = {}
        self._changed = threading.Condition()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True, name="zygote-answers")
        self._reader.start()

    def start(self, args: list[str], log_path: Path) -> ForkedProcess:
        with self._lock:
            request = json.dumps({"args": args, "log": str(log_path)}) + "\n"
            try:
                self.process.stdin.write(request.encode())
                self.process.stdin.flush()
                pid = self._started.get(timeout=ANSWER_TIMEOUT_S)
            except (OSError, ValueError, queue.Empty):
                pid = None
            if pid is None:
                raise OSError(f"the zygote (pid {self.process.pid}) did not start the process: see {log_path.parent}")
            return ForkedProcess(self, pid)

    def exit_code(self, pid: int) -> int | None:
        with self._changed:
            if pid not in self._exited and not self._reader.is_alive():
                return -signal.SIGKILL  # the zygote is gone: the kernel killed its children with it
            return self._exited.get(pid)

    def wait_for(self, pid: int, timeout: float | None) -> int | None:
        with self._changed:
            self._changed.wait_for(lambda: pid in self._exited or not self._reader.is_alive(), timeout)
        return self.exit_code(pid)

    def close(self) -> None:
        """End of stdin: the zygote kills any child left and exits."""
        with contextlib.suppress(OSError, ValueError):
            self.process.stdin.close()
        try:
            self.process.wait(CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _read(self) -> None:
        for line in self.process.stdout:
            answer = json.loads(line)
            if "started" in answer:
                self._started.put(answer["started"])
            else:
                with self._changed:
                    self._exited[answer["exited"]] = answer["code"]
                    self._changed.notify_all()
        self._started.put(None)  # the zygote is gone: nobody waits for an answer in vain
        with self._changed:
            self._changed.notify_all()
