"""Entry points of the roles: `python -m iotdb_bench.simulator collector`, `... worker`, and `... conductor` (detached runs).

The same entry points run in the pods and, on the local platform, as subprocesses. Arguments fall
back to environment variables, which is how the helm chart configures the pods.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from pathlib import Path

from iotdb_bench.simulator.spec import RunSpec

METRICS_PORT_ENV = "IOTBENCH_METRICS_PORT"


def port_number(text: str) -> int:
    """A TCP port, or 0 for any free one."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"a port number from 0 to 65535, got '{text}'")
    return int(text)


def _exit_on_signal(signum, frame) -> None:
    # As PID 1 in a container a process ignores SIGTERM unless it handles it: exit promptly (the
    # worker's `finally` still closes its connection) so an aborted run's pods go away at once.
    # Ctrl-C is handled alike. The collector replaces both once it serves (see collector.serve).
    sys.exit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _exit_on_signal)
    signal.signal(signal.SIGINT, _exit_on_signal)
    parser = argparse.ArgumentParser(prog="python -m iotdb_bench.simulator")
    roles = parser.add_subparsers(dest="role", required=True)
    collector = roles.add_parser("collector", help="prepare the database, run the barrier, gather results")
    collector.add_argument("--host", default=os.environ.get("IOTBENCH_HOST", "127.0.0.1"))
    collector.add_argument("--port", type=int, default=int(os.environ.get("IOTBENCH_PORT", "8080")))
    collector.add_argument("--metrics-port", type=port_number, default=os.environ.get(METRICS_PORT_ENV, "0"),
                           help=f"port of the Prometheus metrics (/metrics); 0 = any free port (env {METRICS_PORT_ENV})")
    conductor = roles.add_parser("conductor", help="a detached run's runs, one after another (insert --detach)")
    conductor.add_argument("--plan", type=Path, default=Path(os.environ.get("IOTBENCH_PLAN", "/etc/iotbench/runs.json")))
    worker = roles.add_parser("worker", help="one benchmark client")
    worker.add_argument("--index", type=int, default=int(os.environ.get("JOB_COMPLETION_INDEX", "0")))
    worker.add_argument("--collector", default=os.environ.get("IOTBENCH_COLLECTOR_URL", "http://127.0.0.1:8080"))
    for role in (collector, worker):
        role.add_argument("--spec", type=Path, default=Path(os.environ.get("IOTBENCH_SPEC", "/etc/iotbench/spec.json")))
    args = parser.parse_args(argv)

    logging.basicConfig(
        level=os.environ.get("IOTBENCH_LOG_LEVEL", "INFO"),
        format=f"%(asctime)s {args.role}{f'-{args.index}' if args.role == 'worker' else ''} %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    # Drivers built on httpx (Elasticsearch, InfluxDB setup) would log every request at INFO.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    if args.role == "conductor":
        from iotdb_bench.simulator.detached.conductor import main as conduct

        return conduct(args.plan)
    spec = RunSpec.load(args.spec)
    if args.role == "collector":
        from iotdb_bench.simulator.collector.service import serve

        return serve(spec, args.host, args.port, args.metrics_port)
    from iotdb_bench.simulator.worker.worker import Worker

    return Worker(spec, args.index, args.collector).run()


if __name__ == "__main__":
    sys.exit(main())
