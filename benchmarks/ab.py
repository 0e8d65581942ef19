"""A/B of two versions of the code on the same seeded databases: ``make bench-ab BEFORE=<commit>``.

The machine is shared and its speed drifts within an hour, so two full ``make bench`` runs taken
apart compare the hours as much as the code. Here both versions serve the *same* data side by
side, and each scenario runs on one and then at once on the other (the order swapped every round,
``BENCH_ROUNDS`` rounds), so the two runs of a pair are seconds apart. Each pair is reported with
its ratio and the workers' CPU time per request, then the median ratio of each scenario.

``BEFORE`` is a directory holding the other version's ``app`` package (``make bench-ab`` checks the
commit out into a temporary git worktree); it is served with the same virtualenv, ``PYTHONPATH``
putting its ``app`` first. The seed, the migrations and the accounts come from this checkout: both
versions must read the same schema. Environment as ``make bench`` (``BENCH_THREADS``,
``BENCH_DURATION``, ``EARFUL_BENCH_POSTGRES_URL``), plus ``BENCH_ROUNDS`` (4),
``BENCH_AB_ONLY`` (the scenarios, comma-separated and run in that order; default: capture
submit, feedback list, inbox page, post reply; put post reply before the replies list, whose
day has no replies on a fresh seed) and ``BENCH_AB_BACKENDS`` (SQLite,PostgreSQL). The data is
seeded for the run and removed after it, or with ``BENCH_DATA_DIR`` kept there and reused
(``make bench``'s datasets: a million threads take minutes to seed). Webhooks are on as in
``make bench`` (one endpoint, the bench's receiver); each version's workers deliver what its
own commits queue, and wait for the other's only when they poll (every few seconds). The pairs
are printed and written between markers into ``benchmarks/results.md`` and
``benchmarks/notes.md``.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx

from benchmarks.datasets import (
    DATA_DIR,
    EARFUL,
    EMAIL,
    PASSWORD,
    POSTGRES_URL,
    Dataset,
    _postgres,
    create_application,
    run,
    server_env,
    settle_database,
    stage_dataset,
)
from benchmarks.load import ROOT, Deliveries, Measure, count_deliveries, measure, report, round_order
from benchmarks.report import NOTES, RESULTS
from benchmarks.run import THREADS, scenarios
from benchmarks.servers import (
    as_a_browser_would,
    free_port,
    session_cookie,
    start_receiver,
    stop,
    subscribe_receiver,
    wait_for,
)

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "4"))
DEFAULT_SCENARIOS = ("capture submit", "feedback list", "inbox page", "post reply")
ONLY = tuple(name for name in os.environ.get("BENCH_AB_ONLY", ",".join(DEFAULT_SCENARIOS)).split(",") if name)
BACKENDS = tuple(name for name in os.environ.get("BENCH_AB_BACKENDS", "SQLite,PostgreSQL").split(",") if name)
BEGIN, END = "<!-- ab:begin -->", "<!-- ab:end -->"


@dataclass
class Pair:
    backend: str
    round: int
    scenario: str
    before: Measure
    after: Measure

    @property
    def ratio(self) -> float:
        return (
            self.after.requests_per_second / self.before.requests_per_second
            if self.before.requests_per_second
            else float("nan")
        )


def prepare(backend: str, env: dict[str, str]) -> tuple[int, str, str]:
    """Accounts, the application and its threads, written by this checkout's code."""
    run([str(EARFUL), "db", "upgrade"], env)
    run([str(EARFUL), "user", "create", "--email", EMAIL, "--name", "Bench", "--password", PASSWORD], env)
    run([str(EARFUL), "plan", "set", "--user", EMAIL, "team"], env)
    token = run(
        [str(EARFUL), "token", "create", "--email", EMAIL, "--scope", "read", "--scope", "write"], env
    )
    application_id, key = create_application(env)
    print(f"{backend}: seeding {THREADS} threads ...", flush=True)
    started = time.perf_counter()
    run(
        [str(EARFUL), "seed", "--application", str(application_id), "--threads", str(THREADS)],
        env,
        timeout=7200,
    )
    print(f"{backend}: seeded in {time.perf_counter() - started:.0f} s", flush=True)
    return application_id, key, token.strip()


def serve(code: Path, env: dict[str, str], data_dir: Path) -> tuple[subprocess.Popen, str]:
    """One version served on the prepared data, on a port of its own."""
    port = free_port()
    server = subprocess.Popen(
        [str(EARFUL), "serve", "--workers", "2", "--port", str(port)],
        env={**env, "PYTHONPATH": str(code), "EARFUL_BASE_URL": f"http://127.0.0.1:{port}"},
        stdout=(data_dir / f"serve-{code.name}.log").open("a"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    wait_for(f"{base}/app/login")
    return server, base


@dataclass
class Seeded:
    """The accounts and data both versions are measured on."""

    application_id: int
    key: str
    token: str
    thread_id: int = 0  # the thread the thread scenarios read; 0: the newest, found once served


def kept(dataset: Dataset) -> Seeded:
    """A dataset kept in ``BENCH_DATA_DIR`` (seeded there once, by this run or an earlier one
    of ``make bench`` or of this; :func:`benchmarks.datasets.stage_dataset` migrates it)."""
    return Seeded(dataset.application_id, dataset.key, dataset.token, dataset.thread_id)


def bench_on_new_data(backend: str, before: Path, database_url: str | None) -> list[Pair]:
    """:func:`bench` on data seeded for this run alone, removed afterwards."""
    data_dir = Path(tempfile.mkdtemp(prefix=f"earful-ab-{backend}-"))
    env = server_env(data_dir, database_url)
    try:
        return bench(backend, before, env, data_dir, Seeded(*prepare(backend, env)))
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def bench(backend: str, before: Path, env: dict[str, str], data_dir: Path, seeded: Seeded) -> list[Pair]:
    """Both versions served side by side; each scenario measured on one then the other, seconds
    apart, the order swapped every round, so a drift of the machine's speed falls on both."""
    pairs: list[Pair] = []
    servers: dict[str, tuple[subprocess.Popen, str]] = {}
    receiver, receiver_base = start_receiver(data_dir)
    application_id, token = seeded.application_id, seeded.token
    try:
        servers = {"before": serve(before, env, data_dir), "after": serve(ROOT, env, data_dir)}
        base = servers["after"][1]
        subscribe_receiver(base, token, application_id, receiver_base)
        count_deliveries(Deliveries(receiver_base))
        thread_id = seeded.thread_id
        if not thread_id:
            with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as client:
                listed = client.get(f"/applications/{application_id}/feedback?limit=1").json()
            thread_id = listed["data"][0]["id"]
        cookie = session_cookie(base)  # the session key lives in the shared data directory
        upload = data_dir / "upload.bin"
        upload.write_bytes(os.urandom(100 * 1024))  # as make bench sends: the scenario is named for it
        chosen = sorted(
            (
                scenario
                for scenario in scenarios(application_id, seeded.key, token, thread_id, cookie, upload)
                if scenario.name in ONLY
            ),
            key=lambda scenario: ONLY.index(scenario.name),
        )
        for number in range(1, ROUNDS + 1):
            order = round_order(number, "before", "after")
            print(f"== {backend}, round {number}: {' then '.join(order)}", flush=True)
            for scenario in chosen:
                settle_database(env)
                measured = {}
                for label in order:
                    server, url = servers[label]
                    fresh = as_a_browser_would(url, scenario)
                    measured[label] = measure(scenario.name, url, fresh, server)
                    report(measured[label], f"({label})")
                pairs.append(Pair(backend, number, scenario.name, measured["before"], measured["after"]))
    finally:
        count_deliveries(None)
        for server, _ in servers.values():
            stop(server)
        stop(receiver)
    return pairs


def summary(pairs: list[Pair]) -> str:
    """Per backend and scenario, the median of the rounds' ratios (throughput and CPU per request)."""
    lines = [
        "| backend | scenario | median after / before req/s | rounds' ratios | median before / after CPU |",
        "|---|---|---:|---|---:|",
    ]
    groups: dict[tuple[str, str], list[Pair]] = {}
    for pair in pairs:
        groups.setdefault((pair.backend, pair.scenario), []).append(pair)
    for (backend, scenario), group in groups.items():
        ratios = [pair.ratio for pair in group]
        cpu = [pair.before.cpu_ms / pair.after.cpu_ms for pair in group if pair.after.cpu_ms]
        lines.append(
            f"| {backend} | {scenario} | {statistics.median(ratios):.2f} | "
            f"{', '.join(f'{ratio:.2f}' for ratio in ratios)} | "
            f"{statistics.median(cpu) if cpu else float('nan'):.2f} |"
        )
    return "\n".join(lines)


def table(pairs: list[Pair], before_label: str) -> str:
    lines = [
        f"A/B on the same seeded data ({THREADS:,} threads), `{before_label}` (before) and this checkout "
        f"(after) served in turns, {ROUNDS} rounds ({datetime.now(UTC):%Y-%m-%d %H:%M UTC}); "
        "req/s and workers' CPU ms per request:",
        "",
        "| backend | scenario | round | before req/s | after req/s | after / before "
        "| before CPU ms | after CPU ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for pair in pairs:
        lines.append(
            f"| {pair.backend} | {pair.scenario} | {pair.round} | {pair.before.requests_per_second:.0f} | "
            f"{pair.after.requests_per_second:.0f} | {pair.ratio:.2f} | {pair.before.cpu_ms:.2f} | "
            f"{pair.after.cpu_ms:.2f} |"
        )
    return "\n".join(lines)


def write_between_markers(path: Path, text: str, heading: str) -> None:
    """Replace the A/B section of a file (or add it at the end)."""
    current = path.read_text() if path.exists() else ""
    section = f"{BEGIN}\n{heading}\n\n{text}\n{END}"
    if BEGIN in current and END in current:
        start, end = current.index(BEGIN), current.index(END) + len(END)
        current = current[:start] + section + current[end:]
    else:
        current = current.rstrip() + "\n\n" + section + "\n"
    path.write_text(current)


def main() -> int:
    if len(sys.argv) != 3:
        raise SystemExit("usage: python -m benchmarks.ab BEFORE_DIR LABEL")
    before, label = Path(sys.argv[1]).resolve(), sys.argv[2]
    if not (before / "app" / "__init__.py").is_file():
        raise SystemExit(f"{before} holds no app package")
    pairs: list[Pair] = []
    for backend in BACKENDS:
        if backend == "PostgreSQL" and not POSTGRES_URL:
            continue
        if DATA_DIR:
            with stage_dataset(backend, THREADS) as (dataset, env, _, _):
                pairs += bench(backend, before, env, dataset.data_dir, kept(dataset))
        elif backend == "SQLite":
            pairs += bench_on_new_data(backend, before, None)
        else:
            name = f"earful_ab_{secrets.token_hex(6)}"
            url = urlunsplit(urlsplit(POSTGRES_URL)._replace(path=f"/{name}"))
            asyncio.run(_postgres(POSTGRES_URL, f'CREATE DATABASE "{name}"'))
            try:
                pairs += bench_on_new_data(backend, before, url)
            finally:
                asyncio.run(_postgres(POSTGRES_URL, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    text = table(pairs, label) + "\n\n" + summary(pairs)
    print("\n" + text)
    heading = "### A/B of the last code change"
    write_between_markers(RESULTS, text, heading)
    write_between_markers(NOTES, text, heading)
    print(json.dumps([(p.backend, p.scenario, p.round, round(p.ratio, 3)) for p in pairs]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
