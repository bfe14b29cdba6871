"""Counts per window of time from a run's common start, at a bounded resolution.

A run's events per second would grow by a value a second for as long as the run lasts, in every worker,
in the collector and in the CLI (50 workers for an hour: 180,000 values). `Windows` keeps at most
MAX_WINDOWS: when a count falls beyond the last window, neighbouring windows are added up in pairs and
every window becomes twice as long (1 s, 2 s, 4 s, ...). A run of up to MAX_WINDOWS seconds keeps its
1 s windows; a longer one coarser windows, every event still counted in the window its call ended in.
A window of width w starts at a multiple of w from the common start, so series of one run at different
widths add up exactly once the finer is coarsened to the coarser (`coarsened`).
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_WINDOWS = 4096  # 68 minutes at 1 s
# Windows a results file keeps of a series for display (plots, results.json); the full series is in
# series.csv beside it (cli/report/series_files.py). 720: a 12-minute run keeps its 1 s windows.
DISPLAY_WINDOWS = 720


def coarsened(values: Sequence[int], factor: int) -> list[int]:
    """The series with each `factor` neighbouring windows added up (factor 1: a copy)."""
    if factor <= 1:
        return list(values)
    return [sum(values[start:start + factor]) for start in range(0, len(values), factor)]


def fitted(values: Sequence[int], width_s: int, most: int) -> tuple[list[int], int]:
    """The series and its window width, coarsened (doubling the width) until it has at most `most` windows."""
    factor = 1
    while len(values) > most * factor:
        factor *= 2
    return coarsened(values, factor), width_s * factor


class Windows:
    """A series of counts per window of `width_s` seconds after a start, at most `most` windows long."""

    def __init__(self, most: int = MAX_WINDOWS):
        self.most = most
        self.width_s = 1
        self.values: list[int] = []

    def add(self, seconds: int, count: int) -> None:
        """`count` in the window of the moment `seconds` (whole seconds after the start, >= 0)."""
        window = seconds // self.width_s
        if window >= len(self.values):
            if window >= self.most:
                self._coarsen_for(seconds)
                window = seconds // self.width_s
            self.values.extend([0] * (window + 1 - len(self.values)))
        self.values[window] += count

    def add_series(self, values: Sequence[int], width_s: int) -> None:
        """Another series of the same run (another worker's), at its own width."""
        if not values:
            return
        if width_s > self.width_s:
            self._widen(width_s)
        own = coarsened(values, self.width_s // width_s)
        if len(own) > self.most:
            self._coarsen_for(len(own) * self.width_s - 1)
            own = coarsened(values, self.width_s // width_s)
        total = self.values
        if len(own) > len(total):
            total.extend([0] * (len(own) - len(total)))
        for index, value in enumerate(own):
            total[index] += value

    def _coarsen_for(self, seconds: int) -> None:
        width = self.width_s
        while seconds // width >= self.most:
            width *= 2
        self._widen(width)

    def _widen(self, width_s: int) -> None:
        self.values = coarsened(self.values, width_s // self.width_s)
        self.width_s = width_s


def rates(values: Sequence[int], width_s: int, duration_s: float) -> list[float]:
    """Per second in each window: its count over its width, the last window's over the part of it the
    run lasted (a run ends inside its last window)."""
    found = [value / width_s for value in values]
    last = duration_s - (len(found) - 1) * width_s
    if found and 0 < last < width_s:
        found[-1] = values[-1] / last
    return found
