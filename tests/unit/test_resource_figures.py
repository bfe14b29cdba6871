"""What a run cost: figures over the timed phase from sampled series, the derived figures, the
client-bottleneck flag, cost at a price, and how tables and files show them (never a 0 that was
not measured)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from iotdb_bench.cli.config import Config
from iotdb_bench.cli.report import render, tables
from iotdb_bench.cli.results.cost import Cost, insert_cost, query_cost
from iotdb_bench.cli.results.resource_figures import across_runs, run_figures
from iotdb_bench.simulator.measurement.resources import ResourceGroup, ResourceUsage, Sample, Series, counter_at, summarise
from iotdb_bench.simulator.protocol import WorkerResult
from tests import factories


def series(name: str, points: list[tuple[float, float, int, int]]) -> Series:
    return Series(name=name, samples=[Sample(at=t, cpu_s=c, memory_bytes=m, written_bytes=w) for t, c, m, w in points])


def test_a_counter_is_interpolated_between_readings_and_held_outside_them():
    samples = series("db", [(10.0, 1.0, 0, 0), (12.0, 3.0, 0, 0)]).samples
    assert counter_at(samples, "cpu_s", 11.0) == pytest.approx(2.0)
    assert counter_at(samples, "cpu_s", 9.0) == 1.0 and counter_at(samples, "cpu_s", 13.0) == 3.0
    assert counter_at([], "cpu_s", 11.0) is None


def test_a_group_sums_its_series_over_the_window():
    first = series("a", [(0.0, 0.0, 100, 0), (1.0, 1.0, 300, 1000), (2.0, 2.0, 100, 3000)])
    second = series("b", [(0.5, 10.0, 50, 0), (2.5, 11.0, 50, 500)])
    group = summarise("two trees", [first, second], 0.5, 1.5)
    # a: 0.5 -> 1.5 s of cpu (1 s); b: 10.0 -> 10.5 (0.5 s)
    assert group.cpu_s == pytest.approx(1.5)
    assert group.written_bytes == 1500 + 250
    assert group.memory_peak_bytes == 350 and group.not_measured == {}


def test_readings_that_miss_most_of_the_window_do_not_count():
    ended_early = series("pod", [(0.0, 1.0, 10, 0), (0.4, 1.2, 10, 0)])  # last read before most of [0, 2] passed
    assert summarise("x", [ended_early], 0.0, 2.0).cpu_s is None
    assert summarise("x", [ended_early], 0.0, 0.5).cpu_s == pytest.approx(0.2)


def test_a_group_without_readings_says_why_instead_of_zero():
    group = summarise("gone", [Series(name="x")], 0.0, 1.0, {"cpu": "no permission"})
    assert group.cpu_s is None and group.memory_peak_bytes is None and group.written_bytes is None
    assert group.not_measured["cpu"] == "no permission" and group.not_measured["written"] == "no readings spanning the timed phase"


def usage(db_cpu: float | None, collector: float = 0.1, cli: float = 0.05, embedded: bool = False,
          written: int | None = 4_000_000, cores: int | None = None) -> ResourceUsage:
    if db_cpu is None:
        database = ResourceGroup(source="not measured", not_measured={"cpu": "no process listens on h:1", "memory": "x", "written": "x"})
    else:
        database = ResourceGroup(source="tree", cpu_s=db_cpu, memory_mean_bytes=1e8, memory_peak_bytes=2 * 10**8, written_bytes=written)
    return ResourceUsage(window_start=0.0, window_end=2.0, database=database, database_in_workers=embedded, cores=cores,
                         collector=ResourceGroup(source="c", cpu_s=collector), cli=ResourceGroup(source="cli", cpu_s=cli))


def report(db_cpu: float | None, worker_cpu: list[float], **options):
    """10,000 events in 2 s, one worker result per CPU figure."""
    built = factories.insert_report([5000, 5000], 2.0, workers=len(worker_cpu))
    built.workers = [WorkerResult(worker=i, started_at=0.0, finished_at=2.0, events=10_000 // len(worker_cpu), cpu_s=cpu)
                     for i, cpu in enumerate(worker_cpu)]
    built.collector_cpu_s = options.pop("collector_cpu_s", None)
    built.resources = usage(db_cpu, **options)
    built.server.storage_bytes, built.server.storage_bytes_at_start = 1_200_000, 200_000
    return built


def test_derived_figures_of_a_run():
    figures = run_figures(report(1.0, [0.2, 0.3], collector_cpu_s=0.08))
    assert figures.db_cpu_s_per_million == pytest.approx(100.0)  # 1 CPU s / 10,000 events
    assert figures.db_cores == pytest.approx(0.5)
    assert figures.written_bytes_per_event == pytest.approx(400.0)
    assert figures.storage_bytes_per_event == pytest.approx(120.0)  # 1.2 MB / 10,000 counted
    assert figures.storage_growth_per_event == pytest.approx(100.0)
    # the collector's own rusage is preferred to the sampled figure
    assert figures.client_cpu_s == pytest.approx(0.5 + 0.08 + 0.05)
    assert figures.client_share == pytest.approx(0.63 / 1.63)
    assert figures.worker_peak_core_share == pytest.approx(0.15)
    assert figures.client_may_be_bottleneck is False and figures.bottleneck_reason is None


def test_a_store_that_shrank_during_the_run_gives_no_growth_per_event():
    """VictoriaMetrics' merges can drop data deleted before the run while it runs (CI once: 70.5 MB at
    the start, 63.1 MB at the end): a negative growth per event is no possible figure."""
    shrunk = report(1.0, [0.2, 0.3])
    shrunk.server.storage_bytes, shrunk.server.storage_bytes_at_start = 63_078_747, 70_472_295
    figures = run_figures(shrunk)
    assert figures.storage_growth_per_event is None and figures.storage_bytes_per_event == pytest.approx(6307.8747)


def test_flag_when_the_workers_use_more_cpu_than_the_database():
    figures = run_figures(report(0.4, [0.3, 0.3]))
    assert figures.client_may_be_bottleneck is True
    assert "more CPU" in figures.bottleneck_reason


def test_flag_when_a_worker_saturates_its_core_even_without_database_figures():
    figures = run_figures(report(None, [1.9]))
    assert figures.client_may_be_bottleneck is True and "95% of a core" in figures.bottleneck_reason
    assert figures.db_cpu_s_per_million is None and figures.not_measured["cpu"] == "no process listens on h:1"


def test_no_judgement_without_database_figures_or_for_an_embedded_database():
    assert run_figures(report(None, [0.5])).client_may_be_bottleneck is None
    embedded = run_figures(report(None, [1.99], embedded=True))
    assert embedded.client_may_be_bottleneck is None and embedded.database_in_workers and embedded.client_share is None


def test_a_run_using_more_cpu_than_the_machine_had_is_refused():
    # 2 cores x 2 s = 4 CPU s at most; the workers alone report 5.4 (a worker counted twice, say)
    figures = run_figures(report(None, [2.7, 2.7], embedded=True, cores=2))
    assert figures.impossible_cpu is not None and "client 139% of 2 cores' time" in figures.impossible_cpu
    assert figures.client_cpu_s is None and figures.workers_cpu_s is None and figures.client_cpu_s_per_million is None
    assert figures.not_measured["cpu"].startswith("refused: ")
    # client and database each possible, together not: their shares add to over 100%
    shared = run_figures(report(2.5, [0.9, 0.9], cores=2))
    assert "client 49% + database 62%" in shared.impossible_cpu and shared.db_cpu_s is None and shared.client_share is None
    assert across_runs([run_figures(report(1.0, [0.2], cores=2)), shared]).impossible_cpu == shared.impossible_cpu


def test_a_possible_run_keeps_its_figures_and_no_cores_means_no_judgement():
    assert run_figures(report(2.0, [0.9, 0.9], cores=2)).impossible_cpu is None  # 3.95 of 4 CPU s
    assert run_figures(report(None, [2.7, 2.7], embedded=True)).impossible_cpu is None  # Kubernetes: several machines


def test_across_runs_means_and_any_flag():
    row = across_runs([run_figures(report(1.0, [0.2])), run_figures(report(0.1, [0.3])), None])
    assert row.db_cpu_s == pytest.approx(0.55)
    assert row.client_may_be_bottleneck is True
    assert across_runs([None]) is None


def test_cost_per_million_and_per_unit():
    hourly = Cost(per_hour=3.6, currency="USD")
    assert hourly.per_million(1000.0) == pytest.approx(1.0)  # 1e6 events take 1000 s = 1 USD at 3.6/h
    assert hourly.operations_per_unit(1000.0) == pytest.approx(1_000_000)
    monthly = Cost(per_month=730, currency="EUR")
    assert monthly.hourly == pytest.approx(1.0)
    assert insert_cost(None, 1000.0) is None
    queries = query_cost(hourly, workers=2, avg_s=0.5)  # 4 queries/s
    assert queries.per_thousand_queries == pytest.approx(0.25) and queries.queries_per_unit == pytest.approx(4000)


@pytest.mark.parametrize("bad", [{"currency": "USD"}, {"per_hour": 1, "per_month": 2, "currency": "USD"},
                                 {"per_hour": -1, "currency": "USD"}, {"per_hour": 1, "currency": "USD", "per_day": 3}])
def test_a_cost_needs_exactly_one_positive_price(bad):
    with pytest.raises(ValidationError):
        Cost.model_validate(bad)


def test_cost_in_the_config_is_typed_and_not_a_module_option():
    config = Config.model_validate({"targets": {"t": {"module": "sqlite", "path": "x", "cost": {"per_hour": 2, "currency": "USD"},
                                                       "database_process": "sqlited"}}})
    target = config.targets["t"]
    assert target.cost.hourly == 2 and target.database_process == "sqlited"
    assert target.connection == {"path": "x"}


def test_summary_rows_carry_cost_only_with_a_price():
    document = factories.document([(2, report(1.0, [0.2, 0.2]))])
    assert document.inserts[0].cost is None and document.inserts[0].resources.db_cpu_s == 1.0
    document.cost = Cost(per_hour=3.6, currency="USD")
    from iotdb_bench.cli.results import summary

    summary.summarise(document)
    assert document.inserts[0].cost.per_million_inserts == pytest.approx(1_000_000 / 5000 / 1000)


def _text(renderable, width: int = 100) -> str:
    from rich.console import Console

    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def test_tables_show_not_measured_never_zero_and_stay_within_100_columns():
    document = factories.document([(1, report(None, [0.2]))])
    text = _text(tables.section_table(factories.section(document, "inserts")))
    assert "DB CPU s/M" in text and "n/m" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    lines = render.resource_lines(document)
    assert "database CPU not measured (no process listens on h:1)" in lines[0]


def test_the_flag_and_the_cost_are_printed():
    document = factories.document([(2, report(0.1, [0.5, 0.5]))])
    document.cost = Cost(per_hour=3.6, currency="USD")
    from iotdb_bench.cli.results import summary

    summary.summarise(document)
    lines = render.resource_lines(document)
    assert any("Client may be the bottleneck" in line for line in lines)
    assert any("USD per million inserts" in line for line in lines)
    details = _text(tables.section_table(factories.section(document, "inserts"), details=True), width=400)
    assert "MAYBE" in details and "Cost/M" in details and " USD " in details


def _on_cores(built, cores: float, shares: bool = True):
    built.resources.client_cores, built.resources.database_shares_cores = cores, shares
    return built


def test_the_client_share_of_the_machine_counts_every_process_once():
    figures = run_figures(_on_cores(report(1.0, [0.2, 0.3], collector_cpu_s=0.08), 2.0))
    assert figures.client_machine_share == pytest.approx(0.63 / 4.0)  # (workers + collector + CLI) / (2 cores x 2 s)
    assert figures.machine_busy_share == pytest.approx(1.63 / 4.0)
    assert figures.client_may_be_bottleneck is False


def test_flag_when_the_client_takes_a_share_that_matters_of_a_busy_machine_it_shares_with_the_database():
    # 2 cores for 2 s: the database 2.6 s, the client 1.0 s of 4 (25%), together 90% of the machine
    figures = run_figures(_on_cores(report(2.6, [0.4, 0.45], collector_cpu_s=0.1), 2.0))
    assert figures.client_may_be_bottleneck is True
    assert "25% of the 2 cores it shares with the database" in figures.bottleneck_reason and "90%" in figures.bottleneck_reason
    # the same client on a machine with cores to spare: no flag
    assert run_figures(_on_cores(report(2.6, [0.4, 0.45], collector_cpu_s=0.1), 8.0)).client_may_be_bottleneck is False
    # a database elsewhere does not lose the client's CPU
    assert run_figures(_on_cores(report(2.6, [0.4, 0.45], collector_cpu_s=0.1), 2.0, shares=False)).client_may_be_bottleneck is False


def test_flag_when_the_client_takes_most_of_the_machine_even_without_database_figures():
    figures = run_figures(_on_cores(report(None, [0.9, 0.9, 0.9, 0.9], collector_cpu_s=0.1), 2.0, shares=False))
    assert figures.client_may_be_bottleneck is True
    assert "of the machine's 2 cores" in figures.bottleneck_reason


def _on_pods(built, cores: float, shares: bool = False):
    built.resources.client_cores, built.resources.client_cores_of, built.resources.database_shares_cores = cores, "pods", shares
    return built


def test_on_kubernetes_the_client_share_is_of_what_its_pods_could_use_without_the_cli():
    # workers 0.5 + collector 0.08 over 1 core x 2 s; the CLI's 0.05 s ran on the laptop
    figures = run_figures(_on_pods(report(1.0, [0.2, 0.3], collector_cpu_s=0.08), 1.0))
    assert figures.client_machine_share == pytest.approx(0.58 / 2.0)
    assert figures.client_cpu_s == pytest.approx(0.63)  # the client's CPU per event still counts the CLI
    document = factories.document([(2, report(1.0, [0.2, 0.3], collector_cpu_s=0.08))])
    _on_pods(document.runs[0].report, 1.0)
    from iotdb_bench.cli.results import summary

    summary.summarise(document)
    assert "29% of the 1 cores its pods could use" in " ".join(render.resource_lines(document))


def test_on_kubernetes_pods_that_used_more_than_they_could_are_refused_and_saturated_pods_flagged():
    refused = run_figures(_on_pods(report(1.0, [0.9, 0.9], collector_cpu_s=0.1), 0.5))
    assert refused.impossible_cpu and "cores they could use" in refused.impossible_cpu and refused.client_cpu_s is None
    flagged = run_figures(_on_pods(report(None, [0.9, 0.9], collector_cpu_s=0.1), 1.0))
    assert flagged.client_may_be_bottleneck is True and "of the 1 cores its pods could use" in flagged.bottleneck_reason


def test_the_client_pods_capacity_is_their_limits_or_their_nodes_cpus():
    from iotdb_bench.cli.run.platforms.kubelet_sampler import Pod, client_capacity

    def pod(name, node, limit):
        return Pod("ns", name, node, "worker", True, limit)

    nodes = {"a": 4.0, "b": 8.0}
    assert client_capacity([pod("w0", "a", 0.5), pod("w1", "a", 0.5), pod("w2", "b", 1.0)], nodes) == pytest.approx(2.0)
    # a pod without a limit may take its whole node; limits above a node's CPUs count the node's
    assert client_capacity([pod("w0", "a", None), pod("w1", "a", 0.5), pod("w2", "b", 16.0)], nodes) == pytest.approx(12.0)
    # a node's CPUs are needed and unknown: no figure rather than a wrong one
    assert client_capacity([pod("w0", "c", None)], {"c": None}) is None
    assert client_capacity([pod("w0", "c", 2.0)], {"c": None}) == pytest.approx(2.0)
    assert client_capacity([pod("w0", None, None)], {}) is None  # never scheduled


def test_a_timed_phase_without_events_prints_the_database_cores_and_no_per_event_figure():
    document = factories.document([(1, report(0.5, [0.2]))])
    document.inserts[0].resources.db_cpu_s_per_million = None  # no event stored in the timed phase
    line = render.resource_lines(document)[0]
    assert "database 0." in line and "cores" in line and "per million events" not in line.split(";")[0]


def test_a_worker_that_ended_before_its_last_reading_gets_its_own_cpu_as_the_final_one():
    from iotdb_bench.simulator.measurement.resources import Sample, Series, counter_delta, with_final_cpu

    # read at 100.0 and 101.0 (0.2 s of CPU between), then the worker ended at 101.8 before the next reading
    samples = [Sample(at=100.0, cpu_s=5.0), Sample(at=101.0, cpu_s=5.2)]
    completed = with_final_cpu(samples, started_at=100.0, finished_at=101.8, cpu_s=0.36)
    assert completed[-1].at == 101.8 and completed[-1].cpu_s == pytest.approx(5.36)
    series = [Series(name="worker 0", samples=completed)]
    assert counter_delta(series, "cpu_s", 101.0, 101.8) == pytest.approx(0.16)  # not 0: the last moments were busy
    assert with_final_cpu(samples, 100.0, 100.9, 0.3) == samples  # read after it ended: nothing to add
    assert with_final_cpu(samples, 100.0, 101.8, None) == samples  # no figure of its own
