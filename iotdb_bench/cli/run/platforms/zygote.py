"""A template process for the local platform: it imports the roles' code once, then forks each
collector and worker of an invocation from itself, so that none of them pays the interpreter's
start-up and the imports again (about 0.4 CPU s per worker and 0.7 per collector: most of what a
short run costs besides its timed phase).

`python -m iotdb_bench.cli.run.platforms.zygote MODULE...` reads one JSON request per line on
stdin, {"args": [role arguments], "log": path}, forks a child that runs `main(args)` with stdout and
stderr in the log, in its own session, killed by the kernel if the zygote goes away; and writes
{"started": pid} for each request and {"exited": pid, "code": code} when a child ends (negative: the
signal that ended it). At the end of stdin (the CLI closed it, or died) it kills its children and
exits, so nothing outlives the CLI.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import select
import signal
import sys
import traceback

from iotdb_bench.simulator.measurement import conditions

_PR_SET_PDEATHSIG = 1


def serve(preload: list[str]) -> int:
    for name in preload:
        with contextlib.suppress(ImportError):  # an optimisation only: the child imports what is missing
            importlib.import_module(name)
    conditions.build()  # git asked for the checkout's commit once, not by every collector of the invocation
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the CLI's to handle; it closes stdin
    requests = sys.stdin.buffer
    answers = sys.stdout
    children: set[int] = set()
    parent = os.getpid()
    pending = b""
    try:
        while True:
            readable, _, _ = select.select([requests.fileno(), wake_r], [], [])
            if wake_r in readable:
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_r, 512)
            _reap(children, answers)
            if requests.fileno() not in readable:
                continue
            chunk = os.read(requests.fileno(), 65536)
            if not chunk:
                return 0
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    os._exit(_child(request, parent, (wake_r, wake_w)))
                children.add(pid)
                answers.write(json.dumps({"started": pid}) + "\n")
                answers.flush()
    finally:
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _reap(children: set[int], answers) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        code = os.waitstatus_to_exitcode(status)
        answers.write(json.dumps({"exited": pid, "code": code}) + "\n")
        answers.flush()


def _child(request: dict, parent: int, inherited: tuple[int, ...]) -> int:
    """In the forked child: become what `python -m iotdb_bench.simulator ARGS` would be."""
    try:
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGINT):
            signal.signal(signum, signal.SIG_DFL)
        for fd in inherited:
            os.close(fd)
        os.setsid()  # a Ctrl-C in the terminal reaches only the CLI, which stops the run in order
        with contextlib.suppress(OSError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the zygote died before the line above: no one would stop this child
            return 1
        # stdin (the zygote's requests) becomes /dev/null, stdout and stderr the child's log
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(devnull)
        # What `ps` would show had it been started on its own (users and tests find processes by it),
        # written over the zygote's arguments only (the client gives it room): the environment stays
        # readable in /proc/PID/environ.
        os.environ["SPT_NOENV"] = "1"
        from setproctitle import setproctitle

        setproctitle(" ".join([sys.executable, "-m", "iotdb_bench.simulator", *request["args"]]))
        from iotdb_bench.simulator.__main__ import main

        code = main(request["args"])
    except SystemExit as leaving:
        code = leaving.code if isinstance(leaving.code, int) else (0 if leaving.code is None else 1)
    except BaseException:
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    return code or 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))  # the children are killed on the way out
    sys.exit(serve([name for name in sys.argv[1:] if name.strip()]))  # blank: the children's title room
