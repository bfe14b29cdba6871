"""Loaded by every Python process of a run that benchmarks/profile_run.py starts (it puts this folder
on PYTHONPATH; the CLI passes PYTHONPATH on to the collector and the workers). With
IOTBENCH_PROFILE_OUT set, each process profiles its main thread and every thread it starts with
cProfile, timed by the thread's own CPU clock (time.thread_time: waiting costs nothing), and writes one stats file per thread when it exits, os._exit included (the collector leaves
that way on SIGTERM). Nothing of the tool is changed; without the variable this file does nothing."""

from __future__ import annotations

import os

_OUT = os.environ.get("IOTBENCH_PROFILE_OUT")

if _OUT:
    import atexit
    import cProfile
    import sys
    import threading
    import time

    _profiles: list[tuple[str, cProfile.Profile]] = []
    _dumped = False

    def _role() -> str:
        argv = sys.argv
        if "worker" in argv:
            return f"worker-{argv[argv.index('--index') + 1]}" if "--index" in argv else "worker"
        if "collector" in argv:
            return "collector"
        return "cli"

    def _dump() -> None:
        global _dumped
        if _dumped:
            return
        _dumped = True
        role = _role()
        for number, (thread, profile) in enumerate(list(_profiles)):
            try:
                profile.create_stats()
                profile.dump_stats(os.path.join(_OUT, f"{role}.{os.getpid()}.{number}.{thread}.prof"))
            except Exception:  # a profile of a thread that is still running may not dump: leave it
                pass

    _main = cProfile.Profile(time.thread_time)
    _profiles.append(("main", _main))
    # Wrapped below `run`, which subclasses override (threading's private entry point of every thread).
    _original_bootstrap = threading.Thread._bootstrap_inner

    def _profiled_bootstrap(self) -> None:
        profile = cProfile.Profile(time.thread_time)
        _profiles.append((self.name.replace(" ", "_").replace("/", "_"), profile))
        profile.enable()
        try:
            _original_bootstrap(self)
        finally:
            profile.disable()

    threading.Thread._bootstrap_inner = _profiled_bootstrap
    _original_exit = os._exit

    def _exit(code: int) -> None:
        _dump()
        _original_exit(code)

    os._exit = _exit
    atexit.register(_dump)
    _main.enable()
