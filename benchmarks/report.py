"""``benchmarks/results.md``: every size's table against the targets of issue #26, the growth
from the smallest size to the largest, and the notes kept in ``benchmarks/notes.md``."""

from __future__ import annotations

import os
import platform
import statistics
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.load import CONNECTIONS, DURATION, LOW_CONNECTIONS, PAIRS, ROOT, WRK_THREADS, Measure
from benchmarks.servers import WORKERS, ExportMeasure

RESULTS = ROOT / "benchmarks" / "results.md"
NOTES = ROOT / "benchmarks" / "notes.md"

# Scenarios that write compare with the reference's submit, the others with its list.
WRITES = {"capture submit", "capture open", "upload 100 KB", "post reply", "floor of capture submit"}

# The throughput each scenario should reach, as a share of its reference's (issue #26).
TARGETS = {
    "capture submit": 0.8,
    "feedback list": 0.8,
    "replies list (date)": 0.8,
    "one thread": 0.8,
    "inbox page": 0.5,
    "thread page": 0.5,
}

# Every scenario at the largest size should keep this share of its throughput at the smallest.
GROWTH_TARGET = 0.8


@dataclass
class Stage:
    """Every scenario measured at one size of the application."""

    threads: int
    seed_seconds: float  # seeding up to this size (0: a kept data dir had it, seeding unknown)
    seed_report: dict
    measures: list[Measure]
    reference: Measure | None
    submit_ratios: list[float]  # capture submit over the reference, run by run
    worker_rss_mb: list[float]
    reference_list: Measure | None = None
    list_ratios: list[float] = field(default_factory=list)  # feedback list over the reference list
    reference_ping: Measure | None = None
    export: ExportMeasure | None = None
    floors: dict[str, Measure] = field(default_factory=dict)  # by the scenario they bound

    def measure(self, scenario: str) -> Measure | None:
        return next((row for row in self.measures if row.scenario == scenario), None)


@dataclass
class BackendRun:
    backend: str
    stages: list[Stage]
    # Each scenario's throughput at the largest size over the smallest, round by round, both
    # served at once and measured in turns (benchmarks/run.py, growth_in_turns).
    growth: dict[str, list[float]] = field(default_factory=dict)


def machine() -> dict[str, str]:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    memory = "unknown"
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    return {
        "cores": str(os.cpu_count()),
        "cpu": cpu,
        "memory": memory,
        "os": platform.platform(),
        "python": platform.python_version(),
    }


def _ratio(row: Measure, stage: Stage) -> float:
    """A scenario's throughput over its reference's: the submit for writes, the list for reads."""
    reference = stage.reference if row.scenario in WRITES else stage.reference_list
    if reference is None or not reference.requests_per_second:
        return float("nan")
    return row.requests_per_second / reference.requests_per_second


def _number(value: float, digits: int = 1) -> str:
    return "-" if value != value else f"{value:.{digits}f}"  # NaN: not measured


def _aim(ratio: float, target: float) -> str:
    """A target and whether the ratio meets it."""
    return f"≥ {target:g} {'✓' if ratio >= target else '✗'}"


def _floor_ratio(row: Measure, floor: Measure | None) -> str:
    if floor is None or not floor.requests_per_second:
        return ""
    return f"{row.requests_per_second / floor.requests_per_second:.2f}"


def _table_row(
    label: str,
    row: Measure,
    ratio: float,
    target: float | None,
    floor: Measure | None = None,
    database: bool = False,
) -> str:
    """A row of a size's table; with ``database``, the database server's CPU per request too."""
    low = row.low.p50_ms if row.low else float("nan")
    aim = "" if target is None else _aim(ratio, target)
    database_cpu = f"{_number(row.database_cpu_ms, 2)} | " if database else ""
    return (
        f"| {label} | {row.requests_per_second:.0f} | {row.p50_ms:.1f} | {row.p99_ms:.1f} | "
        f"{_number(low)} | {_number(ratio, 2)} | {aim} | {_floor_ratio(row, floor)} | "
        f"{_number(row.cpu_ms, 2)} | {database_cpu}{row.errors} |"
    )


def stage_lines(stage: Stage, database: bool = False) -> list[str]:
    """The table of one size, and what was run beside or in turns; with ``database`` (a
    PostgreSQL server on this machine), the server's CPU per request in a column of its own."""
    seed = stage.seed_report
    if seed.get("reused"):
        seeded = f"Seed: {stage.threads:,} threads, reused from `BENCH_DATA_DIR`."
    else:
        when = f" on {seed['seeded_at']}, reused from `BENCH_DATA_DIR`" if "seeded_at" in seed else ""
        seeded = (
            f"Seed: {seed.get('threads', 0):,} threads added, {seed.get('replies', 0):,} replies and notes, "
            f"{seed.get('tag_links', 0):,} tag links, {seed.get('members', 0):,} senders in "
            f"{stage.seed_seconds:.1f} s (`earful seed`, wall clock including start-up){when}."
        )
    lines = [
        f"### {stage.threads:,} threads",
        "",
        seeded,
        "",
        f"| scenario | req/s | p50 ms | p99 ms | p50 ms at {LOW_CONNECTIONS} conn. | x reference | target "
        f"| x floor | worker CPU ms/req | {'database CPU ms/req | ' if database else ''}errors |",
        f"|---|---:|---:|---:|---:|---:|---|---:|---:|{'---:|' if database else ''}---:|",
    ]
    lines += [
        _table_row(
            row.scenario,
            row,
            _ratio(row, stage),
            TARGETS.get(row.scenario),
            stage.floors.get(row.scenario),
            database,
        )
        for row in stage.measures
    ]
    references = [
        ("*reference submit*", stage.reference),
        ("*reference list*", stage.reference_list),
        ("*reference ping*", stage.reference_ping),
    ]
    lines += [_table_row(label, row, 1.0, None, database=database) for label, row in references if row]
    lines += [
        _table_row(f"*floor of {name}*", floor, _ratio(floor, stage), None, database=database)
        for name, floor in stage.floors.items()
    ]
    for row in stage.measures:
        if row.beside:
            beside = row.beside
            lines += [
                "",
                f"While *{row.scenario}* was measured on half the connections, capture submit ran "
                f"on the other half: {beside.requests_per_second:.0f} req/s, p50 {beside.p50_ms:.1f} "
                f"ms, p99 {beside.p99_ms:.1f} ms (both share the workers: no CPU per request is shown).",
            ]
    delivered = [row for row in stage.measures if row.deliveries]
    if delivered:
        lines += [
            "",
            "Webhook deliveries the receiver got while each writing scenario ran and after, until the "
            "last (seconds after the load's end; its CPU per request counts them): "
            + "; ".join(f"{row.scenario} {row.deliveries:,} ({row.drain_s:.1f} s)" for row in delivered)
            + ".",
        ]
    ratios = ", ".join(f"{ratio:.2f}" for ratio in stage.submit_ratios)
    lines += [
        "",
        f"Capture submit and the reference submit were run in turns ({PAIRS} runs each, the median run "
        f"shown); capture submit over the reference, run by run: {ratios or 'n/a'}.",
        "",
    ]
    if stage.list_ratios:
        list_ratios = ", ".join(f"{ratio:.2f}" for ratio in stage.list_ratios)
        lines += [
            "The feedback list and the reference list were run in turns the same way; feedback list "
            f"over the reference list, run by run: {list_ratios}.",
            "",
        ]
    memory = ", ".join(f"{mb:.0f} MB" for mb in stage.worker_rss_mb)
    lines += [f"Resident memory per worker after the run: {memory}.", ""]
    if stage.export:
        lines += [export_line(stage.export), ""]
    return lines


def growth_lines(stages: list[Stage], in_turns: dict[str, list[float]] | None = None) -> list[str]:
    """Each scenario's throughput at the smallest and the largest size, side by side: as each
    size's part of the run measured it, and (``in_turns``) both sizes served at once and
    measured seconds apart, whose median ratio the target is judged on when there is one (the
    parts are tens of minutes apart, the machine's speed drifts within an hour)."""
    small, large = stages[0], stages[-1]
    in_turns = in_turns or {}
    lines = [
        f"### From {small.threads:,} to {large.threads:,} threads",
        "",
    ]
    if in_turns:
        rounds = max(len(ratios) for ratios in in_turns.values())
        lines += [
            f"*in turns*: both sizes served at once, each scenario run on one and then on the other "
            f"(the order swapped every round), {rounds} rounds; their median ratio is the one judged "
            "against the target. *apart*: the two sizes' own parts of the run above.",
            "",
        ]
    lines += [
        f"| scenario | req/s at {small.threads:,} | req/s at {large.threads:,} | ratio apart | in turns "
        f"| target | p50 ms at {LOW_CONNECTIONS} conn., {small.threads:,} | same, {large.threads:,} |",
        "|---|---:|---:|---:|---|---|---:|---:|",
    ]
    for row in small.measures:
        grown = large.measure(row.scenario)
        if grown is None or not row.requests_per_second:
            continue
        ratio = grown.requests_per_second / row.requests_per_second
        turns = in_turns.get(row.scenario, [])
        judged = statistics.median(turns) if turns else ratio
        shown = f"{judged:.2f} ({', '.join(f'{r:.2f}' for r in turns)})" if turns else ""
        lows = [_number(measure.low.p50_ms) if measure.low else "-" for measure in (row, grown)]
        lines.append(
            f"| {row.scenario} | {row.requests_per_second:.0f} | {grown.requests_per_second:.0f} | "
            f"{ratio:.2f} | {shown} | {_aim(judged, GROWTH_TARGET)} | {lows[0]} | {lows[1]} |"
        )
    return [*lines, ""]


def export_line(measure: ExportMeasure) -> str:
    """The export's sentence of the results."""
    return (
        f"Export of every thread ({measure.rows:,} rows, {measure.export_format.upper()}, "
        f"{measure.megabytes:.0f} MB, streamed through `GET /applications/{{id}}/feedback/export`, "
        f"open then archived): {measure.seconds:.1f} s, {measure.rows_per_second:,.0f} rows/s; "
        f"the serving worker's resident memory peaked at {measure.rss_peak_mb:.0f} MB "
        f"({measure.rss_before_mb:.0f} MB before it)."
        + (f" **It failed** after those rows: {measure.failure}." if measure.failure else "")
    )


def write_results(runs: list[BackendRun]) -> None:
    sizes = sorted({stage.threads for result in runs for stage in result.stages})
    info = machine()
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`benchmarks/run.py`); run it again to refresh. Every load runs on",
        f"127.0.0.1: `earful serve --workers {WORKERS}` (Hypercorn, uvloop) driven by wrk with "
        f"{WRK_THREADS} threads and {CONNECTIONS} connections for {DURATION} per scenario,",
        f"wrk on the same machine, and again with {LOW_CONNECTIONS} connections for the latency of a server "
        "that is not saturated.",
        "The ratio is a scenario's throughput over the bare reference app's (`benchmarks/reference_app.py`:",
        "Quart + Hypercorn + Tortoise, 2 workers, opening its database exactly as Earful does, checked by",
        "tests/test_bench_reference.py): its submit (validate JSON, insert one row) for the scenarios that",
        "write, its list (fifty rows read through the ORM, returned as JSON) for those that read. Both",
        "are measured in turns with capture submit and the feedback list.",
        "Its ping endpoint (`GET /ping` answers `ok`) is the least any request costs here: no scenario",
        "can have a lower p50 at the same connections. *x floor* compares a read with the reference app",
        "reading its fifty rows and then answering with Earful's own answer to that read, saved at the",
        "start (a JSON document encoded again on every request, a page sent as it is): what a read",
        "returning that much costs on this stack before any of Earful's work. Webhooks are on: the",
        "application has one endpoint subscribed to every event, a receiver on loopback",
        "(`benchmarks/receiver.py`, answering 204); the floor of capture submit is the reference's submit",
        "that also POSTs each new row to it. On PostgreSQL,",
        "*database CPU ms/req* is the database server's own CPU time per request (its processes on",
        "this machine, sharing its cores with the workers and wrk), which the workers' figure leaves out.",
        "",
        f"- Date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Machine: {info['cores']} cores ({info['cpu']}), {info['memory']} RAM, {info['os']}",
        f"- Python {info['python']}; sizes measured: {', '.join(f'{size:,}' for size in sizes)} threads",
        "",
    ]
    for result in runs:
        lines += [f"## {result.backend}", ""]
        for stage in result.stages:
            lines += stage_lines(stage, database=result.backend == "PostgreSQL")
        if len(result.stages) > 1:
            lines += growth_lines(result.stages, result.growth)
    if NOTES.exists():
        lines += [NOTES.read_text().rstrip(), ""]
    RESULTS.write_text("\n".join(lines))
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")
