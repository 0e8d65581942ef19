"""The servers a bench run starts and talks to: ``earful serve``, the reference app beside it,
a signed-in session as a browser keeps it, and the export of every thread through the API."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import httpx

from app.config import sqlite_url
from benchmarks.datasets import BIN, EARFUL, EMAIL, PASSWORD, run
from benchmarks.load import HOST, ROOT, Scenario

WORKERS = os.environ.get("BENCH_WORKERS", "2")


def serve(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    """``earful serve`` with the bench's workers on ``port``, in a process group of its own."""
    return subprocess.Popen(
        [str(EARFUL), "serve", "--workers", WORKERS, "--port", str(port)],
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def wait_for(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not answer within {timeout} s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def worker_rss_mb(process: subprocess.Popen) -> list[float]:
    """Resident memory of the worker processes (the children of the serving process)."""
    out = subprocess.run(
        ["ps", "-o", "rss=,args=", "--ppid", str(process.pid)], capture_output=True, text=True, check=False
    ).stdout
    sizes = []
    for line in out.splitlines():
        rss, _, args = line.strip().partition(" ")
        if "multiprocessing" in args and "resource_tracker" not in args:
            sizes.append(round(int(rss) / 1024, 1))
    return sizes


def session_cookie(base: str) -> str:
    """Sign in once through the web app; the cookie header wrk sends on the HTML pages."""
    with httpx.Client(base_url=base, timeout=10) as client:
        page = client.get("/app/login").text
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
        if not csrf:
            raise SystemExit("no CSRF token on /app/login")
        response = client.post(
            "/app/login", data={"email": EMAIL, "password": PASSWORD, "csrf_token": csrf.group(1)}
        )
        if response.status_code != 302:
            raise SystemExit(f"sign-in failed: {response.status_code}")
        return cookie_header(client.cookies.items())


def cookie_header(cookies: Iterable[tuple[str, str]]) -> str:
    """A ``Cookie`` header sending these cookies."""
    return "; ".join(f"{name}={value}" for name, value in cookies)


def as_a_browser_would(base: str, scenario: Scenario) -> Scenario:
    """``scenario`` with its session cookie brought up to date, as a browser keeps it.

    A signed-in session's cookie records the last activity, rewritten at most once a minute
    (app.views.security); a browser stores the rewritten cookie, wrk replays the one it was
    given. Once that cookie is a minute old every page request rewrites and signs it again (0.6
    ms of a 3.7 ms inbox page, measured), which no browser does. So the cookie is refreshed (one
    request, its Set-Cookie kept) right before each scenario that sends one: it is then younger
    than a minute for the scenario's runs."""
    cookie = scenario.headers.get("Cookie")
    if cookie is None:
        return scenario
    with httpx.Client(base_url=base, timeout=10) as client:
        response = client.get("/app/account", headers={"Cookie": cookie})
        if response.status_code != 200:
            raise SystemExit(f"the bench's session ended: {response.status_code} on /app/account")
        jar = dict(pair.split("=", 1) for pair in cookie.split("; "))
        jar.update(response.cookies.items())
    return replace(scenario, headers={**scenario.headers, "Cookie": cookie_header(jar.items())})


def reference_database_url(database_url: str | None, reference_dir: Path) -> str:
    """Where the reference app keeps its rows beside Earful's database: a SQLite file of its own
    with the URL Earful builds for its file (same pragmas), or Earful's PostgreSQL database (its
    own table there), opened with the same pool settings (benchmarks/reference_app.py)."""
    return database_url or sqlite_url(reference_dir / "reference.sqlite3")


# The reads whose answers the reference app also returns (benchmarks/reference_app.py, /document):
# the floor of a read of that size on this stack. Scenario name -> document file name.
FLOORS = {
    "feedback list": "feedback-list",
    "one thread": "one-thread",
    "inbox page": "inbox-page",
    "thread page": "thread-page",
}


def save_documents(base: str, chosen: list[Scenario], folder: Path) -> list[str]:
    """Earful's answer to each chosen read of FLOORS, saved for the reference app; their names."""
    folder.mkdir(exist_ok=True)
    saved = []
    with httpx.Client(base_url=base, timeout=60) as client:
        for scenario in chosen:
            if scenario.name in FLOORS and scenario.beside is None:
                response = client.get(scenario.path, headers=scenario.headers)
                response.raise_for_status()
                is_json = response.headers["content-type"].startswith("application/json")
                suffix = ".json" if is_json else ".html"
                (folder / (FLOORS[scenario.name] + suffix)).write_bytes(response.content)
                saved.append(scenario.name)
    return saved


def start_reference(reference_url: str, data_dir: Path, receiver: str = "") -> tuple[subprocess.Popen, str]:
    """Serve the reference app (2 workers) beside Earful; an idle server costs no CPU. Its
    ``/submit-webhook`` tells ``receiver``."""
    port = free_port()
    env = {
        **os.environ,
        "REFERENCE_DATABASE_URL": reference_url,
        "REFERENCE_DOCUMENTS": str(data_dir / "documents"),
        "REFERENCE_WEBHOOK": f"{receiver}/hooks/reference",
        "PYTHONPATH": str(ROOT),
    }
    run([str(BIN / "python"), "-m", "benchmarks.reference_app", "init"], env)
    server = subprocess.Popen(
        [
            str(BIN / "hypercorn"),
            "-k",
            "uvloop",
            "-w",
            "2",
            "-b",
            f"{HOST}:{port}",
            "benchmarks.reference_app:app",
        ],
        env=env,
        cwd=ROOT,
        stdout=(data_dir / "reference.log").open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://{HOST}:{port}"
    wait_for(f"{base}/")
    return server, base


def start_receiver(data_dir: Path) -> tuple[subprocess.Popen, str]:
    """The webhook receiver (benchmarks/receiver.py) on a free port; its base URL."""
    port = free_port()
    with (data_dir / "receiver.log").open("w") as log:  # the receiver keeps its own copy
        receiver = subprocess.Popen(
            [str(BIN / "python"), "-m", "benchmarks.receiver", str(port)],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://{HOST}:{port}"
    wait_for(f"{base}/count")
    return receiver, base


def subscribe_receiver(base: str, token: str, application_id: int, receiver: str) -> None:
    """The application's one webhook endpoint: the receiver, subscribed to every event (an
    earlier run's endpoint, on another port, is deleted first). Webhooks are on in every
    scenario, as issue #26's targets ask."""
    hooks = f"/applications/{application_id}/webhooks"
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        for endpoint in client.get(hooks).raise_for_status().json()["data"]:
            client.delete(f"{hooks}/{endpoint['id']}").raise_for_status()
        client.post(hooks, json={"url": f"{receiver}/hooks/earful"}).raise_for_status()


@dataclass
class ExportMeasure:
    """The export of every thread (open, then archived) through the API, streamed."""

    export_format: str
    rows: int
    seconds: float
    megabytes: float
    rss_before_mb: float
    rss_peak_mb: float
    failure: str = ""  # why the export stopped before its end, if it did

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0


def measure_export(base: str, token: str, application_id: int, server: subprocess.Popen) -> ExportMeasure:
    """GET /applications/{id}/feedback/export of every thread, both states in turn, read as it
    streams; rows/s, and the resident memory of the serving workers sampled every 50 ms while
    it ran (the largest worker's), next to theirs before it: the export reads in keyset batches,
    so a million threads must not grow a worker."""
    before = max(worker_rss_mb(server), default=0.0)
    peak = before
    done = False

    def sample() -> None:
        nonlocal peak
        while not done:
            peak = max(peak, *worker_rss_mb(server), 0.0)
            time.sleep(0.05)

    rows, size = 0, 0
    started = time.perf_counter()
    with ThreadPoolExecutor(1) as pool:
        sampling = pool.submit(sample)
        try:
            with httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=600
            ) as client:
                for archived in ("false", "true"):
                    path = f"/applications/{application_id}/feedback/export?format=csv&archived={archived}"
                    last = b""
                    with client.stream("GET", path) as response:
                        response.raise_for_status()
                        for chunk in response.iter_bytes():
                            size += len(chunk)
                            # A line end may fall across two chunks.
                            rows += chunk.count(b"\r\n") + (last == b"\r" and chunk[:1] == b"\n")
                            last = chunk[-1:]
                    rows -= 1  # the header line
        except httpx.HTTPError as error:
            # Reported in the results rather than ending the run and losing every figure.
            failure = f"{type(error).__name__}: {error}"
        else:
            failure = ""
        finally:
            done = True
            sampling.result()
    seconds = time.perf_counter() - started
    # Rows counted by their line ends: the seed's messages hold no CRLF of their own.
    return ExportMeasure("csv", rows, seconds, size / 1024 / 1024, before, peak, failure)
