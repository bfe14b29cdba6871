"""MetricsQL durations that VictoriaMetrics reads as exactly the milliseconds meant.

VictoriaMetrics reads `2076160ms` as the float 2076160 x 0.001 seconds and turns it back into
milliseconds by truncation: 2076159.9999999998 gives 2076159, a window 1 ms short, whose start left a
sample out (double-groupby-1's last partial hour on host_0 read 207 of its 208 points and answered
WRONG). About one value in 220 is cut short so. Whole seconds are exact; any other value is written with
half a millisecond more (less when negative), which the truncation takes off again whichever way the
float rounds."""

from __future__ import annotations


def metricsql_ms(value: int) -> str:
    """`value` milliseconds as a lookbehind window, offset or step."""
    if value % 1000 == 0:
        return f"{value // 1000}s"
    return f"{value + 0.5 if value > 0 else value - 0.5}ms"
