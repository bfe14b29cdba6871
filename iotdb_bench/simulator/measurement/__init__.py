"""Measurement: the one timer, latency and throughput figures, query latency, resources and conditions."""
