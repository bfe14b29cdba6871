"""Latency counts of the live figures (protocol.LatencyCounts): how many timed calls took at most
each of LATENCY_BUCKETS_S, read from a worker's HdrHistogram or from a list of durations. The worker
sends them about once a second; the collector shows them as Prometheus histograms."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

import numpy as np
from hdrh.histogram import HdrHistogram

from iotdb_bench.simulator.protocol import LATENCY_BUCKETS_S, LatencyCounts

_BOUNDS_US = tuple(round(bound * 1e6) for bound in LATENCY_BUCKETS_S)


def of_histogram(histogram: HdrHistogram, sum_s: float) -> LatencyCounts:
    """The counts of a histogram of microseconds (simulator/measurement/stats.py); `sum_s`: the
    durations' exact sum (a histogram only holds them to its precision). A value counts under a
    bound when it is within the histogram's precision of it (3 significant digits)."""
    if not histogram.get_total_count():
        return LatencyCounts(sum_s=sum_s)
    # One pass over the counts array (23,552 entries, about 20 us) instead of a lookup per bucket; the
    # total is the array's own, so that the buckets agree with it while another thread records.
    cumulative = np.cumsum(np.ctypeslib.as_array(histogram.counts))
    last = len(cumulative) - 1  # a decoded histogram's array may end early
    buckets = [int(cumulative[min(histogram.get_counts_array_index(bound), last)]) for bound in _BOUNDS_US]
    return LatencyCounts(count=int(cumulative[-1]), sum_s=sum_s, buckets=buckets)


def of_seconds(seconds: Sequence[float]) -> LatencyCounts:
    """The counts of a few durations (a worker's executions of one query)."""
    if not seconds:
        return LatencyCounts()
    ordered = sorted(seconds)
    return LatencyCounts(count=len(ordered), sum_s=sum(ordered),
                         buckets=[bisect.bisect_right(ordered, bound) for bound in LATENCY_BUCKETS_S])


def added(counts: Iterable[LatencyCounts]) -> LatencyCounts:
    """Several counts as one (a query client's executions under ingest and on the idle database)."""
    total = LatencyCounts()
    for one in counts:
        if one.count:
            buckets = one.buckets if not total.buckets else [a + b for a, b in zip(total.buckets, one.buckets, strict=True)]
            total = LatencyCounts(count=total.count + one.count, sum_s=total.sum_s + one.sum_s, buckets=buckets)
    return total
