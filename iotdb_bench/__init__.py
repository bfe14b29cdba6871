"""iotdb-bench: the CLI (iotdb_bench.cli, on the laptop) and the simulator (iotdb_bench.simulator, in the pods).

Nothing is imported here: the simulator image carries this package with the simulator alone.
"""
