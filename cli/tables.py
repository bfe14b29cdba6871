"""The rich tables printed at the end of a command, in the shape of the seed tool's tables."""

from __future__ import annotations

from typing import Any

from rich.table import Table


def _rate(value: float) -> str:
    return f"{value:,.0f}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}" if value < 1 else f"{value:.2f}"


def insert_table(rows: list[dict[str, Any]], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for name in ("Workers", "Runs", "Min", "Avg", "Max", "Stdev", "CV"):
        table.add_column(name, justify="right")
    table.add_column("Seed formula avg", justify="right")
    for name in ("p50 ms", "p95 ms", "p99 ms", "max ms", "Client overhead", "Start skew"):
        table.add_column(name, justify="right")
    for row in rows:
        spread = row["throughput"]
        cv = f"{spread['cv']:.1%}" + (" unstable" if spread["unstable"] else "")
        table.add_row(
            str(row["workers"]), str(row["runs"]), _rate(spread["min"]), _rate(spread["avg"]), _rate(spread["max"]),
            _rate(spread["stdev"]), cv, _rate(row["seed_formula_throughput"]["avg"]),
            f"{row['p50_ms']:.2f}", f"{row['p95_ms']:.2f}", f"{row['p99_ms']:.2f}", f"{row['max_ms']:.2f}",
            f"{row['client_overhead']:.1%}", f"{row['start_skew_s'] * 1000:.0f} ms",
        )
    table.caption = (
        "Inserts/s = events / (last worker end - common start). Seed formula = events / mean worker duration "
        "(the original tool's figure). Latency per database call."
    )
    return table


def steps_table(rows: list[dict[str, Any]], step_size: int) -> Table:
    table = Table(title=f"Fill level (step size {step_size:,} events)", title_justify="left")
    table.add_column("Level", justify="right")
    table.add_column("Inserts/s", justify="right")
    for row in rows:
        table.add_row(f"{row['level']:,}", _rate(row["throughput"]))
    return table


def query_table(rows: list[dict[str, Any]], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for name in ("Workers", "Query", "Min", "Max", "Avg", "p95", "Cold", "Warm", "Rows", "Errors"):
        table.add_column(name, justify="left" if name in ("Query", "Errors") else "right")
    for row in rows:
        table.add_row(
            str(row["workers"]), row["query"], _seconds(row["min_s"]), _seconds(row["max_s"]), _seconds(row["avg_s"]),
            _seconds(row["p95_s"]), _seconds(row["cold_avg_s"]), _seconds(row["warm_avg_s"]),
            "-" if row["rows"] is None else f"{row['rows']:,}", "; ".join(row["errors"]) or "",
        )
    table.caption = "Seconds per execution. Cold = first execution on each worker, warm = the others."
    return table
