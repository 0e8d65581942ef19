"""Sizing: ``earful serve`` with 1 and 2 workers, and with and without the request log line,
measured in turns on the same data (``python -m benchmarks.sizing``).

On a shared machine the speed drifts by a factor of several within minutes (benchmarks/run.py
measures against a reference app for that reason); here every server runs on the same seeded
database at once, idle while another is measured, and each scenario is run on each server in
turns, ``SIZING_ROUNDS`` times, so that two figures compared were taken seconds apart. Servers:

- ``1 worker`` and ``2 workers``: what a second worker process buys;
- ``2 workers, no log line`` (EARFUL_ACCESS_LOG=0): what the JSON line per request costs.

Prints, per backend and scenario, the median requests/s and p50 of each server, the worker CPU
per request, and the workers' resident memory. BENCH_THREADS (100000) threads are seeded;
EARFUL_BENCH_POSTGRES_URL adds PostgreSQL (a throwaway database). Everything runs on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from benchmarks.datasets import (
    EARFUL,
    EMAIL,
    PASSWORD,
    POSTGRES_URL,
    _postgres,
    create_application,
    run,
    server_env,
)
from benchmarks.load import Measure, Scenario, measure
from benchmarks.report import machine
from benchmarks.servers import free_port, session_cookie, stop, wait_for, worker_rss_mb

THREADS = int(os.environ.get("BENCH_THREADS", "100000"))
ROUNDS = int(os.environ.get("SIZING_ROUNDS", "3"))
SERVERS = {
    "1 worker": ("1", {"EARFUL_LOG_FORMAT": "json"}),
    "2 workers": ("2", {"EARFUL_LOG_FORMAT": "json"}),
    "2 workers, no log line": ("2", {"EARFUL_LOG_FORMAT": "json", "EARFUL_ACCESS_LOG": "0"}),
}


def prepare(data_dir: Path, database_url: str | None) -> tuple[dict[str, str], int, str, str]:
    env = server_env(data_dir, database_url)
    run([str(EARFUL), "db", "upgrade"], env)
    run([str(EARFUL), "user", "create", "--email", EMAIL, "--name", "Bench", "--password", PASSWORD], env)
    run([str(EARFUL), "plan", "set", "--user", EMAIL, "team"], env)
    token = run(
        [str(EARFUL), "token", "create", "--email", EMAIL, "--scope", "read", "--scope", "write"], env
    )
    application_id, key = create_application(env)
    run([str(EARFUL), "seed", "--application", str(application_id), "--threads", str(THREADS)], env)
    return env, application_id, key, token.strip()


def start(
    env: dict[str, str], workers: str, extra: dict[str, str], log: Path
) -> tuple[subprocess.Popen, str]:
    port = free_port()
    server = subprocess.Popen(
        [str(EARFUL), "serve", "--workers", workers, "--port", str(port)],
        env={**env, **extra, "EARFUL_BASE_URL": f"http://127.0.0.1:{port}"},
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),  # the JSON lines are written, as in production (to a file here)
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    wait_for(f"{base}/app/login", timeout=180)
    return server, base


def report(scenario: str, server: str, runs: list[Measure]) -> None:
    """One line: the median run's requests/s and p50, the median CPU per request, every run."""
    middle = sorted(runs, key=lambda r: r.requests_per_second)[len(runs) // 2]
    cpu = statistics.median(r.cpu_ms for r in runs)
    every = ", ".join(f"{r.requests_per_second:.0f}" for r in runs)
    print(
        f"{scenario:16} {server:24} {middle.requests_per_second:7.0f} req/s  p50 {middle.p50_ms:6.1f} ms  "
        f"cpu {cpu:5.2f} ms/req  errors {sum(r.errors for r in runs)}  (runs: {every})",
        flush=True,
    )


def bench(backend: str, database_url: str | None) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix=f"earful-sizing-{backend}-"))
    servers: dict[str, tuple[subprocess.Popen, str]] = {}
    try:
        print(f"\n== {backend}: seeding {THREADS} threads", flush=True)
        env, application_id, key, token = prepare(data_dir, database_url)
        for name, (workers, extra) in SERVERS.items():
            servers[name] = start(env, workers, extra, data_dir / f"{name}.log")
        apps = f"/applications/{application_id}"
        cookie = session_cookie(servers["2 workers"][1])
        scenarios = [
            Scenario("capture submit", f"{apps}/submit?key={key}", "submit.lua"),
            Scenario(
                "feedback list", f"{apps}/feedback?limit=50", headers={"Authorization": f"Bearer {token}"}
            ),
            Scenario("inbox page", f"/app{apps}/feedback", headers={"Cookie": cookie}),
        ]
        for scenario in scenarios:
            results: dict[str, list[Measure]] = {name: [] for name in servers}
            for _ in range(ROUNDS):
                for name, (server, base) in servers.items():
                    results[name].append(measure(scenario.name, base, scenario, server))
                    time.sleep(0.5)
            for name, runs in results.items():
                report(scenario.name, name, runs)
        for name, (server, _) in servers.items():
            print(f"resident memory, {name}: {worker_rss_mb(server)} MB", flush=True)
    finally:
        for server, _ in servers.values():
            stop(server)
        shutil.rmtree(data_dir, ignore_errors=True)


def main() -> None:
    info = machine()
    print(
        f"{info['cores']} cores ({info['cpu']}), {info['memory']}, Python {info['python']}; {ROUNDS} rounds"
    )
    bench("SQLite", None)
    if POSTGRES_URL:
        name = f"earful_sizing_{secrets.token_hex(6)}"
        url = urlunsplit(urlsplit(POSTGRES_URL)._replace(path=f"/{name}"))
        asyncio.run(_postgres(POSTGRES_URL, f'CREATE DATABASE "{name}"'))
        try:
            bench("PostgreSQL", url)
        finally:
            asyncio.run(_postgres(POSTGRES_URL, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


if __name__ == "__main__":
    main()
