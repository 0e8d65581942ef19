"""``make bench``: Earful under wrk at 32 connections, next to a bare reference app.

For SQLite (and PostgreSQL when ``EARFUL_BENCH_POSTGRES_URL`` names a server whose user may
create databases), for every size of ``bench_sizes`` (a million threads, and ``BENCH_THREADS``
when it is larger): prepare a dataset of that size (benchmarks/datasets.py: a migrated data dir
with a user, a token and an application, seeded with ``earful seed``), serve it with ``earful
serve --workers 2`` and, beside it, the bare reference app (``benchmarks/reference_app.py``,
also 2 workers, opening its database as Earful does), and drive every scenario with wrk, at 32
connections and again at 4 (the latency of a server that is not saturated). Prints requests/s,
p50, p99 and the ratio to the reference's throughput (its submit for the scenarios that write,
its fifty-row list for those that read) against the targets of issue #26, compares each
scenario's throughput at the smallest and the largest size, and writes
``benchmarks/results.md``. Two mixed scenarios measure a read (the feedback list, the inbox
page) on half the connections while capture submit loads the other half, as agents read while
widgets post; the reference app's ping gives the stack's floor. At the largest size, every
thread is exported as CSV through the API (``measure_export``: rows/s and the serving workers'
peak memory).

Environment: ``BENCH_THREADS`` (1000000; 10000000 measures a million and ten million in one
run), ``BENCH_SIZES`` (comma-separated sizes instead), ``BENCH_BACKENDS`` (sqlite,postgresql),
``BENCH_DATA_DIR`` (keep the seeded datasets there and reuse them in later runs),
``BENCH_DURATION`` (10s), ``BENCH_CONNECTIONS`` (32), ``BENCH_LOW_CONNECTIONS`` (4),
``BENCH_WRK_THREADS`` (2), ``BENCH_ONLY`` (comma-separated scenario names), ``BENCH_PAIRS`` (3:
capture submit and the reference's submit, and the feedback list and the reference's list, are
run in turns, this many times each), ``BENCH_WORKERS`` (2: Earful's worker processes; the sizing
advice compares 1 and 2). On PostgreSQL, capture submit and the feedback list are measured again
at the largest size with a second ``earful serve`` on the same database, the load split between
the two (two hosts behind a balancer, here on one machine). Every load goes to 127.0.0.1 only,
and every wrk run is bounded by its duration.
"""

from __future__ import annotations

import os
import platform
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import httpx

from app.config import sqlite_url
from benchmarks.datasets import (
    BIN,
    EARFUL,
    EMAIL,
    PASSWORD,
    POSTGRES_URL,
    Dataset,
    run,
    stage_dataset,
)

ROOT = Path(__file__).resolve().parent.parent
LUA = ROOT / "benchmarks" / "lua"
RESULTS = ROOT / "benchmarks" / "results.md"
NOTES = ROOT / "benchmarks" / "notes.md"
HOST = "127.0.0.1"

THREADS = int(os.environ.get("BENCH_THREADS", "1000000"))
DURATION = os.environ.get("BENCH_DURATION", "10s")
CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS", "32"))
WRK_THREADS = int(os.environ.get("BENCH_WRK_THREADS", "2"))
ONLY = {name for name in os.environ.get("BENCH_ONLY", "").split(",") if name}
PAIRS = int(os.environ.get("BENCH_PAIRS", "3"))
WORKERS = os.environ.get("BENCH_WORKERS", "2")
LOW_CONNECTIONS = int(os.environ.get("BENCH_LOW_CONNECTIONS", "4"))
MILLION = 1_000_000


def bench_sizes() -> list[int]:
    """The sizes one run measures, smallest first: ``BENCH_SIZES`` (comma-separated), else a
    million and then ``BENCH_THREADS`` when it is larger, else ``BENCH_THREADS`` alone. The
    application grows from one size to the next (only the difference is seeded), so the
    scenarios at each size run on the same data, the same day, in the same run."""
    listed = [int(size) for size in os.environ.get("BENCH_SIZES", "").split(",") if size.strip()]
    if listed:
        return sorted(set(listed))
    return [MILLION, THREADS] if THREADS > MILLION else [THREADS]


SIZES = bench_sizes()
# The databases to measure (BENCH_BACKENDS=postgresql measures PostgreSQL alone).
BACKENDS = {name.strip().lower() for name in os.environ.get("BENCH_BACKENDS", "sqlite,postgresql").split(",")}


@dataclass
class Scenario:
    name: str
    path: str
    script: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    connections: int = CONNECTIONS
    # A load run at the same time (mixed scenarios): the connections are shared half and half.
    beside: Scenario | None = None


REFERENCE = Scenario("reference submit", "/submit", "reference_submit.lua")
REFERENCE_LIST = Scenario("reference list", "/list")
# The least any request costs on this stack: its p50 at 32 connections bounds every target's.
REFERENCE_PING = Scenario("reference ping", "/ping")
# Earful's scenarios measured in turns with one of the reference app's, and that one.
IN_TURNS = {"capture submit": REFERENCE, "feedback list": REFERENCE_LIST}
# Scenarios that write compare with the reference's submit, the others with its list.
WRITES = {"capture submit", "capture open", "upload 100 KB", "post reply"}
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
class Measure:
    scenario: str
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int  # non-2xx/3xx responses plus socket errors
    cpu_ms: float = float("nan")  # CPU time of the serving workers per request
    beside: Measure | None = None  # the load run at the same time, if any
    low: Measure | None = None  # the same scenario at LOW_CONNECTIONS: latency when not busy


def workers_cpu_seconds(process: subprocess.Popen) -> float:
    """User + system CPU time used so far by the worker processes of a server."""
    pids = subprocess.run(
        ["pgrep", "-P", str(process.pid)], capture_output=True, text=True, check=False
    ).stdout.split()
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def measure(name: str, url: str, scenario: Scenario, server: subprocess.Popen) -> Measure:
    """wrk one scenario, and the workers' CPU time per request while it ran (steadier than
    requests/s on a shared machine). A mixed scenario's load beside it starts a second before
    and ends a second after it; its CPU time is then not told apart."""
    if scenario.beside is not None:
        return measure_beside(name, url, scenario, scenario.beside)
    before = workers_cpu_seconds(server)
    result = wrk(name, url, scenario)
    if result.requests:
        result.cpu_ms = (workers_cpu_seconds(server) - before) * 1000 / result.requests
    return result


def measure_beside(name: str, url: str, scenario: Scenario, beside: Scenario) -> Measure:
    """``scenario`` while ``beside`` loads the same server, each on half the connections."""
    half = max(1, CONNECTIONS // 2)
    seconds = _milliseconds(DURATION) / 1000
    with ThreadPoolExecutor(1) as pool:
        load = pool.submit(wrk, beside.name, url, replace(beside, connections=half), f"{seconds + 2:g}s")
        time.sleep(1)
        result = wrk(name, url, replace(scenario, beside=None, connections=half))
        result.beside = load.result()
    return result


# Measured on PostgreSQL with a second ``earful serve`` on the same database (two hosts behind a
# balancer, on one machine here): the load split half and half, the figures summed.
TWO_PROCESSES = ("capture submit", "feedback list")


def measure_two_processes(
    name: str, bases: tuple[str, str], scenario: Scenario, servers: tuple[subprocess.Popen, subprocess.Popen]
) -> Measure:
    """``scenario`` on two servers at once, each on half the connections; their sum (requests,
    CPU of both servers' workers) and the slower p50/p99."""
    half = max(1, CONNECTIONS // 2)
    before = sum(workers_cpu_seconds(server) for server in servers)
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(wrk, name, base, replace(scenario, connections=half)) for base in bases]
        results = [run.result() for run in runs]
    requests = sum(result.requests for result in results)
    combined = Measure(
        scenario=f"{name} (two processes)",
        requests_per_second=sum(result.requests_per_second for result in results),
        p50_ms=max(result.p50_ms for result in results),
        p99_ms=max(result.p99_ms for result in results),
        requests=requests,
        errors=sum(result.errors for result in results),
    )
    if requests:
        combined.cpu_ms = (sum(workers_cpu_seconds(server) for server in servers) - before) * 1000 / requests
    return combined


def serve(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    """``earful serve`` with the bench's workers on ``port``, in a process group of its own."""
    return subprocess.Popen(
        [str(EARFUL), "serve", "--workers", WORKERS, "--port", str(port)],
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def bench_second_process(
    env: dict[str, str], data_dir: Path, base: str, server: subprocess.Popen, chosen: list[Scenario]
) -> list[Measure]:
    """The TWO_PROCESSES scenarios with a second server on the same PostgreSQL database."""
    port = free_port()
    second_base = f"http://{HOST}:{port}"
    second_dir = data_dir / "second"
    second_dir.mkdir(mode=0o700, exist_ok=True)
    second_env = {**env, "EARFUL_DATA_DIR": str(second_dir), "EARFUL_BASE_URL": second_base}
    secret_key = (data_dir / "secret_key").read_text().strip()
    second_env["EARFUL_SECRET_KEY"] = secret_key  # sessions and links valid on both, as two hosts
    second = serve(second_env, port, second_dir / "serve.log")
    try:
        wait_for(f"{second_base}/app/login")
        measures = []
        for scenario in chosen:
            if scenario.name in TWO_PROCESSES:
                measures.append(
                    measure_two_processes(scenario.name, (base, second_base), scenario, (server, second))
                )
                report(measures[-1])
        return measures
    finally:
        stop(second)


@dataclass
class ExportMeasure:
    """The export of every thread (open, then archived) through the API, streamed."""

    export_format: str
    rows: int
    seconds: float
    megabytes: float
    rss_before_mb: float
    rss_peak_mb: float

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
        finally:
            done = True
            sampling.result()
    seconds = time.perf_counter() - started
    # Rows counted by their line ends: the seed's messages hold no CRLF of their own.
    return ExportMeasure("csv", rows, seconds, size / 1024 / 1024, before, peak)


@dataclass
class Stage:
    """Every scenario measured at one size of the application."""

    threads: int
    seed_seconds: float  # seeding up to this size, this run (0: the data dir had it already)
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


def report(result: Measure, note: str = "") -> None:
    print(
        f"{result.scenario:24} {result.requests_per_second:9.1f} req/s  "
        f"p50 {result.p50_ms:7.2f} ms  p99 {result.p99_ms:7.2f} ms  "
        f"cpu {result.cpu_ms:6.2f} ms/req  errors {result.errors}  {note}".rstrip(),
        flush=True,
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


def _milliseconds(text: str) -> float:
    match = re.match(r"([\d.]+)(us|ms|s|m)", text)
    if not match:
        return float("nan")
    value, unit = float(match.group(1)), match.group(2)
    return value * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]


def wrk(name: str, url: str, scenario: Scenario, duration: str = DURATION) -> Measure:
    args = ["wrk", f"-t{WRK_THREADS}", f"-c{scenario.connections}", f"-d{duration}", "--latency", "--timeout"]
    args.append("10s")
    for key, value in scenario.headers.items():
        args += ["-H", f"{key}: {value}"]
    if scenario.script:
        args += ["-s", str(LUA / scenario.script)]
    args.append(url + scenario.path)
    env = {**os.environ, **scenario.env}
    out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600, check=False).stdout
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M)
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M)
    total = re.search(r"(\d+) requests in", out)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = int(bad.group(1)) if bad else 0
    if socket_errors:
        errors += sum(int(group) for group in socket_errors.groups())
    if not rps:
        print(out, file=sys.stderr)
    return Measure(
        scenario=name,
        requests_per_second=float(rps.group(1)) if rps else 0.0,
        p50_ms=_milliseconds(p50.group(1)) if p50 else float("nan"),
        p99_ms=_milliseconds(p99.group(1)) if p99 else float("nan"),
        requests=int(total.group(1)) if total else 0,
        errors=errors,
    )


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


# Where post reply writes: the REPLY_SPREAD threads (reply.lua's BENCH_SPREAD) ending this far
# below the thread the reading scenarios use.
REPLIES_BELOW = 100_000
REPLY_SPREAD = 1000


def scenarios(application_id: int, key: str, token: str, thread_id: int, cookie: str, upload: Path) -> list:
    bearer = {"Authorization": f"Bearer {token}"}
    apps = f"/applications/{application_id}"
    # Replies go to older threads, which no reading scenario shows: posted among the newest ones,
    # they piled up (thousands a run) in the threads that the archived list and the thread page
    # read, so that in a kept dataset those scenarios read more every run (the archived list's
    # fifty threads carried 1,132 replies after three runs, against about 40 seeded).
    replied = max(REPLY_SPREAD, thread_id - REPLIES_BELOW)
    today = datetime.now(UTC).date().isoformat()
    boundary = "benchboundary" + secrets.token_hex(8)
    upload_body = upload.with_suffix(".multipart")
    upload_body.write_bytes(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="screenshot.png"\r\n'
        "Content-Type: image/png\r\n\r\n".encode()
        + upload.read_bytes()
        + f"\r\n--{boundary}--\r\n".encode()
    )
    submit = Scenario("capture submit", f"{apps}/submit?key={key}", "submit.lua")
    inbox = Scenario("inbox page", f"/app{apps}/feedback", headers={"Cookie": cookie})
    feedback_list = Scenario("feedback list", f"{apps}/feedback?limit=50", headers=bearer)
    search = Scenario("inbox search (rare word)", f"/app{apps}/feedback?q=refund", headers={"Cookie": cookie})
    return [
        submit,
        Scenario("capture open", f"{apps}/open?key={key}", "post.lua"),
        Scenario(
            "upload 100 KB",
            f"{apps}/upload?key={key}",
            "post.lua",
            env={
                "BENCH_BODY_FILE": str(upload_body),
                "BENCH_CONTENT_TYPE": f"multipart/form-data; boundary={boundary}",
            },
        ),
        feedback_list,
        Scenario("feedback list archived", f"{apps}/feedback?limit=50&archived=1", headers=bearer),
        Scenario("one thread", f"{apps}/feedback/{thread_id}", headers=bearer),
        Scenario(
            "post reply",
            f"{apps}/feedback/{replied}/replies",
            "reply.lua",
            env={
                "BENCH_APPLICATION": str(application_id),
                "BENCH_THREAD_ID": str(replied),
                "BENCH_SPREAD": str(REPLY_SPREAD),
            },
            headers=bearer,
        ),
        Scenario("replies list (date)", f"{apps}/replies?date={today}&limit=50", headers=bearer),
        Scenario("tags list", f"{apps}/tags", headers=bearer),
        inbox,
        search,
        Scenario("thread page", f"/app{apps}/feedback/{thread_id}", headers={"Cookie": cookie}),
        # Agents read while widgets post: the reads' latency under a capture load.
        replace(feedback_list, name="feedback list under submits", beside=submit),
        replace(inbox, name="inbox page under submits", beside=submit),
        # On SQLite a search first indexes what the indexer has not: it waits for the indexer.
        replace(search, name="inbox search under submits", beside=submit),
    ]


def pick(items: list[Scenario]) -> list[Scenario]:
    return [item for item in items if not ONLY or item.name in ONLY]


def bench_backend(backend: str) -> BackendRun:
    """Every size in turn, each on a dataset of its own (see benchmarks/datasets.py)."""
    stages = []
    for size in SIZES:
        with stage_dataset(backend, size) as (dataset, env, seed_seconds, seed_report):
            reference_url = reference_database_url(env.get("EARFUL_DATABASE_URL"), dataset.data_dir)
            stages.append(
                bench_stage(
                    backend, env, dataset, reference_url, seed_seconds, seed_report, last=size == SIZES[-1]
                )
            )
    return BackendRun(backend, stages)


def measure_low(url: str, scenario: Scenario, server: subprocess.Popen) -> Measure:
    """The scenario at LOW_CONNECTIONS: its latency when the server is not saturated."""
    return measure(scenario.name, url, replace(scenario, connections=LOW_CONNECTIONS), server)


def bench_stage(
    backend: str,
    env: dict[str, str],
    dataset: Dataset,
    reference_url: str,
    seed_seconds: float,
    seed_report: dict,
    last: bool,
) -> Stage:
    """Every chosen scenario at the dataset's current size, on a server started for it (so that
    nothing cached before the seeding is served). On the last size, the two-process scenarios
    (PostgreSQL) and the export too."""
    data_dir, token, application_id = dataset.data_dir, dataset.token, dataset.application_id
    port = free_port()
    base = f"http://{HOST}:{port}"
    env = {**env, "EARFUL_BASE_URL": base}
    print(f"\n-- {backend} at {dataset.seeded:,} threads", flush=True)
    server = serve(env, port, data_dir / "serve.log")
    try:
        wait_for(f"{base}/app/login")
        if not dataset.thread_id:
            with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as client:
                page = client.get(f"/applications/{application_id}/feedback?limit=1").json()
            dataset.thread_id = page["data"][0]["id"] if "data" in page else page["feedback"][0]["id"]
            dataset.save()
        thread_id = dataset.thread_id
        cookie = session_cookie(base)
        upload = data_dir / "upload.bin"
        upload.write_bytes(os.urandom(100 * 1024))
        chosen = pick(scenarios(application_id, dataset.key, token, thread_id, cookie, upload))
        documents = save_documents(base, chosen, data_dir / "documents")
        reference_server, reference_base = start_reference(reference_url, data_dir)
        try:
            measures, in_turns = [], {}
            for scenario in chosen:
                scenario = as_a_browser_would(base, scenario)
                if scenario.name in IN_TURNS:
                    theirs = IN_TURNS[scenario.name]
                    result, reference, ratios = measure_in_turns(
                        base, scenario, server, reference_base, theirs, reference_server
                    )
                    reference.low = measure_low(reference_base, theirs, reference_server)
                    in_turns[scenario.name] = (reference, ratios)
                    report(reference, f"({backend}, median of {PAIRS})")
                    print(
                        f"{scenario.name + ' / reference':24} " + ", ".join(f"{r:.2f}" for r in ratios),
                        flush=True,
                    )
                else:
                    result = measure(scenario.name, base, scenario, server)
                if scenario.beside is None:
                    result.low = measure_low(base, scenario, server)
                measures.append(result)
                report(result)
                if result.low:
                    report(result.low, f"({LOW_CONNECTIONS} connections)")
                if result.beside:
                    report(result.beside, "(beside it)")
            ping = measure(REFERENCE_PING.name, reference_base, REFERENCE_PING, reference_server)
            ping.low = measure_low(reference_base, REFERENCE_PING, reference_server)
            report(ping, f"({backend})")
            floors = {}
            for name in documents:
                floor = Scenario(f"floor of {name}", f"/document/{FLOORS[name]}")
                floors[name] = measure(floor.name, reference_base, floor, reference_server)
                report(floors[name])
        finally:
            stop(reference_server)
        exported = None
        if last:
            if dataset.database:
                measures += bench_second_process(env, data_dir, base, server, chosen)
            if not ONLY or "export" in ONLY:
                exported = measure_export(base, token, application_id, server)
                print(export_line(exported), flush=True)
        rss = worker_rss_mb(server)
        print(f"worker RSS after the run: {rss} MB", flush=True)
    finally:
        stop(server)
    reference, ratios = in_turns.get("capture submit", (None, []))
    reference_list, list_ratios = in_turns.get("feedback list", (None, []))
    return Stage(
        dataset.seeded,
        seed_seconds,
        seed_report,
        measures,
        reference,
        ratios,
        rss,
        reference_list,
        list_ratios,
        ping,
        exported,
        floors,
    )


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


def start_reference(reference_url: str, data_dir: Path) -> tuple[subprocess.Popen, str]:
    """Serve the reference app (2 workers) beside Earful; an idle server costs no CPU."""
    port = free_port()
    env = {
        **os.environ,
        "REFERENCE_DATABASE_URL": reference_url,
        "REFERENCE_DOCUMENTS": str(data_dir / "documents"),
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


def median_run(runs: list[Measure]) -> Measure:
    """The run with the median throughput, reported whole (its own p50 and p99)."""
    return sorted(runs, key=lambda run: run.requests_per_second)[len(runs) // 2]


def measure_in_turns(
    base: str,
    scenario: Scenario,
    server: subprocess.Popen,
    reference_base: str,
    reference_scenario: Scenario,
    reference: subprocess.Popen,
) -> tuple[Measure, Measure, list[float]]:
    """One of Earful's scenarios and its counterpart in the reference app in turns, PAIRS times each.

    The machine is shared and its speed drifts by a third within an hour, so a reference measured
    minutes away from the submit gave ratios from 0.69 to 0.94 on the same code. Taken in turns,
    each ratio compares two runs seconds apart; the median run of each is reported.
    """
    ours, theirs, ratios = [], [], []
    for _ in range(PAIRS):
        theirs.append(measure(reference_scenario.name, reference_base, reference_scenario, reference))
        ours.append(measure(scenario.name, base, scenario, server))
        if theirs[-1].requests_per_second:
            ratios.append(ours[-1].requests_per_second / theirs[-1].requests_per_second)
    return median_run(ours), median_run(theirs), ratios


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
    label: str, row: Measure, ratio: float, target: float | None, floor: Measure | None = None
) -> str:
    """A row of a size's table."""
    low = row.low.p50_ms if row.low else float("nan")
    aim = "" if target is None else _aim(ratio, target)
    return (
        f"| {label} | {row.requests_per_second:.0f} | {row.p50_ms:.1f} | {row.p99_ms:.1f} | "
        f"{_number(low)} | {_number(ratio, 2)} | {aim} | {_floor_ratio(row, floor)} | "
        f"{_number(row.cpu_ms, 2)} | {row.errors} |"
    )


def stage_lines(stage: Stage) -> list[str]:
    """The table of one size, and what was run beside or in turns."""
    seed, seconds, when = stage.seed_report, stage.seed_seconds, ""
    kept = seed.get("seeding") or {}
    if seed.get("reused") and kept:
        seed, seconds, when = (
            kept["report"],
            kept["seconds"],
            f" on {kept['at']}, reused from `BENCH_DATA_DIR`",
        )
    if seed.get("reused"):
        seeded = f"Seed: {stage.threads:,} threads, reused from `BENCH_DATA_DIR`."
    else:
        seeded = (
            f"Seed: {seed.get('threads', 0):,} threads added, {seed.get('replies', 0):,} replies and notes, "
            f"{seed.get('tag_links', 0):,} tag links, {seed.get('members', 0):,} senders in "
            f"{seconds:.1f} s (`earful seed`, wall clock including start-up){when}."
        )
    lines = [
        f"### {stage.threads:,} threads",
        "",
        seeded,
        "",
        f"| scenario | req/s | p50 ms | p99 ms | p50 ms at {LOW_CONNECTIONS} conn. | x reference | target "
        "| x floor | worker CPU ms/req | errors |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    lines += [
        _table_row(
            row.scenario, row, _ratio(row, stage), TARGETS.get(row.scenario), stage.floors.get(row.scenario)
        )
        for row in stage.measures
    ]
    references = [
        ("*reference submit*", stage.reference),
        ("*reference list*", stage.reference_list),
        ("*reference ping*", stage.reference_ping),
    ]
    lines += [_table_row(label, row, 1.0, None) for label, row in references if row]
    lines += [
        _table_row(f"*floor of {name}*", floor, _ratio(floor, stage), None)
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


def growth_lines(stages: list[Stage]) -> list[str]:
    """Each scenario's throughput at the smallest and the largest size, side by side."""
    small, large = stages[0], stages[-1]
    lines = [
        f"### From {small.threads:,} to {large.threads:,} threads",
        "",
        f"| scenario | req/s at {small.threads:,} | req/s at {large.threads:,} | ratio | target "
        f"| p50 ms at {LOW_CONNECTIONS} conn., {small.threads:,} | same, {large.threads:,} |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    for row in small.measures:
        grown = large.measure(row.scenario)
        if grown is None or not row.requests_per_second:
            continue
        ratio = grown.requests_per_second / row.requests_per_second
        lows = [_number(measure.low.p50_ms) if measure.low else "-" for measure in (row, grown)]
        lines.append(
            f"| {row.scenario} | {row.requests_per_second:.0f} | {grown.requests_per_second:.0f} | "
            f"{ratio:.2f} | {_aim(ratio, GROWTH_TARGET)} | {lows[0]} | {lows[1]} |"
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
    )


def write_results(runs: list[BackendRun]) -> None:
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
        "returning that much costs on this stack before any of Earful's work.",
        "",
        f"- Date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Machine: {info['cores']} cores ({info['cpu']}), {info['memory']} RAM, {info['os']}",
        f"- Python {info['python']}; sizes measured: {', '.join(f'{size:,}' for size in SIZES)} threads",
        "",
    ]
    for result in runs:
        lines += [f"## {result.backend}", ""]
        for stage in result.stages:
            lines += stage_lines(stage)
        if len(result.stages) > 1:
            lines += growth_lines(result.stages)
    if NOTES.exists():
        lines += [NOTES.read_text().rstrip(), ""]
    RESULTS.write_text("\n".join(lines))
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")


def main() -> int:
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (make bench installs the Debian package)")
    runs = [bench_backend("SQLite")] if "sqlite" in BACKENDS else []
    if POSTGRES_URL and "postgresql" in BACKENDS:
        runs.append(bench_backend("PostgreSQL"))
    elif not POSTGRES_URL:
        print("\nEARFUL_BENCH_POSTGRES_URL is not set: PostgreSQL skipped.")
    write_results(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
