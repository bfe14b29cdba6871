"""TSBS's use cases (the Time Series Benchmark Suite's data, read from ../shared/vendor/tsbs) as shapes
of the tool's generator: the same rows and points as `tsbs_generate_data` at the same scale,
interval and time range, with TSBS's tags and value distributions, made in the timed phase.

- walks.py: TSBS's clamped random walks, in fixed point and computable at any step from the seed;
- hosts.py: the DevOps hosts' names and tags; usecases.py: measurements, fields, use cases;
- data.py: what an insert run wrote (the record keeps it); generator.py: one worker's rows in TSBS's
  order; series.py: the same values recomputed for the checker.
"""
