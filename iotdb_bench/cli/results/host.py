"""The machine the CLI runs on (and, on the local platform, the run): CPU, memory, operating system.

Read from Linux's /proc and /etc/os-release where they exist; elsewhere what Python's platform
module knows, and None for the rest.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from pydantic import BaseModel, Field


class Host(BaseModel):
    cpu_model: str | None = None
    logical_cpus: int | None = Field(default=None, description="CPUs this process may run on")
    memory_bytes: int | None = None
    os: str | None = Field(default=None, description="the distribution's name, else the system's")
    kernel: str | None = None
    architecture: str | None = None


def describe() -> Host:
    return Host(
        cpu_model=_cpu_model(), logical_cpus=usable_cpus(), memory_bytes=_memory_bytes(),
        os=_os_name(), kernel=platform.release() or None, architecture=platform.machine() or None,
    )


def _cpu_model() -> str | None:
    for line in _read("/proc/cpuinfo").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Hardware", "Processor") and value.strip():
            return " ".join(value.split())
    return platform.processor() or None


def usable_cpus() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def _memory_bytes() -> int | None:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return None


def _os_name() -> str | None:
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.partition("=")[2].strip().strip('"')
    return f"{platform.system()} {platform.release()}".strip() or None


def _read(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""
