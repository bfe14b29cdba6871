#!/usr/bin/env python3
"""Entry point: `python run.py insert|query|report|compare ...` (see README.md)."""

from iotdb_bench.cli.commands.entry import main

if __name__ == "__main__":
    main()
