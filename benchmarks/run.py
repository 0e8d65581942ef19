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
run in turns, this many times each), ``BENCH_GROWTH_ROUNDS`` (2: with two sizes or more, the
smallest and the largest are then served at once and every scenario but the mixed ones is run on
each in turns, this many rounds, for the growth table; 0 leaves that part out), ``BENCH_WORKERS``
(2: Earful's worker processes; the sizing advice compares 1 and 2). On PostgreSQL, capture
submit and the feedback list are measured again at the largest size with a second ``earful
serve`` on the same database, the load split between the two (two hosts behind a balancer, here
on one machine). Every load goes to 127.0.0.1 only,
and every wrk run is bounded by its duration.

This module chooses and runs the scenarios; benchmarks/load.py drives wrk and measures,
benchmarks/servers.py starts the servers, benchmarks/report.py writes the results, and
benchmarks/datasets.py seeds the data.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import httpx

from benchmarks.datasets import POSTGRES_URL, Dataset, settle_database, stage_dataset
from benchmarks.load import (
    CONNECTIONS,
    HOST,
    LOW_CONNECTIONS,
    PAIRS,
    Deliveries,
    Measure,
    Scenario,
    count_deliveries,
    database_cpu_seconds,
    database_cpu_since,
    drained,
    measure,
    measure_in_turns,
    measure_low,
    report,
    round_order,
    workers_cpu_seconds,
    wrk,
)
from benchmarks.report import BackendRun, Stage, export_line, write_results
from benchmarks.servers import (
    FLOORS,
    as_a_browser_would,
    free_port,
    measure_export,
    reference_database_url,
    save_documents,
    serve,
    session_cookie,
    start_receiver,
    start_reference,
    stop,
    subscribe_receiver,
    wait_for,
    worker_rss_mb,
)

THREADS = int(os.environ.get("BENCH_THREADS", "1000000"))
# Rounds of the smallest and the largest size served side by side (growth_in_turns); 0: none.
GROWTH_ROUNDS = int(os.environ.get("BENCH_GROWTH_ROUNDS", "2"))
ONLY = {name for name in os.environ.get("BENCH_ONLY", "").split(",") if name}
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

REFERENCE = Scenario("reference submit", "/submit", "reference_submit.lua")
REFERENCE_LIST = Scenario("reference list", "/list")

# The reference's submit that also POSTs each row to the webhook receiver: the floor of capture
# submit, which delivers every new thread to the application's endpoint.
REFERENCE_WEBHOOK = Scenario("floor of capture submit", "/submit-webhook", "reference_submit.lua")

# The least any request costs on this stack: its p50 at 32 connections bounds every target's.
REFERENCE_PING = Scenario("reference ping", "/ping")

# Earful's scenarios measured in turns with one of the reference app's, and that one.
IN_TURNS = {"capture submit": REFERENCE, "feedback list": REFERENCE_LIST}

# Measured on PostgreSQL with a second ``earful serve`` on the same database (two hosts behind a
# balancer, on one machine here): the load split half and half, the figures summed.
TWO_PROCESSES = ("capture submit", "feedback list")


def measure_two_processes(
    name: str, bases: tuple[str, str], scenario: Scenario, servers: tuple[subprocess.Popen, subprocess.Popen]
) -> Measure:
    """``scenario`` on two servers at once, each on half the connections; their sum (requests,
    CPU of both servers' workers) and the slower p50/p99."""
    half = max(1, CONNECTIONS // 2)
    before, database_before = sum(workers_cpu_seconds(server) for server in servers), database_cpu_seconds()
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(wrk, name, base, replace(scenario, connections=half)) for base in bases]
        results = [run.result() for run in runs]
    drained(results[0])
    requests = sum(result.requests for result in results)
    combined = Measure(
        scenario=f"{name} (two processes)",
        requests_per_second=sum(result.requests_per_second for result in results),
        p50_ms=max(result.p50_ms for result in results),
        p99_ms=max(result.p99_ms for result in results),
        requests=requests,
        errors=sum(result.errors for result in results),
        deliveries=results[0].deliveries,
        drain_s=results[0].drain_s,
    )
    if requests:
        combined.cpu_ms = (sum(workers_cpu_seconds(server) for server in servers) - before) * 1000 / requests
        combined.database_cpu_ms = database_cpu_since(database_before) * 1000 / requests
    return combined


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
    # A word of one seeded message in 22 (4.5 % of the threads): its page fills from the newest
    # threads, and it is counted for "Select all N matching" (app.services.inbox.count_threads).
    frequent = Scenario(
        "inbox search (frequent word)", f"/app{apps}/feedback?q=button", headers={"Cookie": cookie}
    )
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
        frequent,
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
    """Every size in turn, each on a dataset of its own (see benchmarks/datasets.py), then the
    smallest and the largest side by side (:func:`growth_in_turns`). Every dataset stays staged
    until the end of the backend's run, so that the last part can serve two of them."""
    stages, staged = [], []
    with ExitStack() as datasets:
        for size in SIZES:
            dataset, env, seed_seconds, seed_report = datasets.enter_context(stage_dataset(backend, size))
            staged.append((dataset, env))
            reference_url = reference_database_url(env.get("EARFUL_DATABASE_URL"), dataset.data_dir)
            stages.append(
                bench_stage(
                    backend, env, dataset, reference_url, seed_seconds, seed_report, last=size == SIZES[-1]
                )
            )
        growth = growth_in_turns(backend, staged[0], staged[-1]) if len(staged) > 1 and GROWTH_ROUNDS else {}
    return BackendRun(backend, stages, growth)


@dataclass
class Served:
    """A dataset served by ``earful serve`` for the bench, with its own webhook receiver."""

    base: str
    server: subprocess.Popen
    deliveries: Deliveries
    chosen: list[Scenario]


@contextmanager
def served(env: dict[str, str], dataset: Dataset) -> Iterator[Served]:
    """A server started on the dataset (so that nothing cached before the seeding is served),
    its application's one webhook endpoint a receiver of its own, and the chosen scenarios
    with their addresses on it."""
    data_dir, token, application_id = dataset.data_dir, dataset.token, dataset.application_id
    port = free_port()
    base = f"http://{HOST}:{port}"
    env = {**env, "EARFUL_BASE_URL": base}
    receiver, receiver_base = start_receiver(data_dir)
    server = serve(env, port, data_dir / "serve.log")
    try:
        wait_for(f"{base}/app/login")
        subscribe_receiver(base, token, application_id, receiver_base)
        deliveries = Deliveries(receiver_base)
        if not dataset.thread_id:
            with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as client:
                page = client.get(f"/applications/{application_id}/feedback?limit=1").json()
            dataset.thread_id = page["data"][0]["id"] if "data" in page else page["feedback"][0]["id"]
            dataset.save()
        cookie = session_cookie(base)
        upload = data_dir / "upload.bin"
        upload.write_bytes(os.urandom(100 * 1024))
        chosen = pick(scenarios(application_id, dataset.key, token, dataset.thread_id, cookie, upload))
        yield Served(base, server, deliveries, chosen)
    finally:
        count_deliveries(None)
        stop(server)
        stop(receiver)


def growth_in_turns(
    backend: str, small: tuple[Dataset, dict[str, str]], large: tuple[Dataset, dict[str, str]]
) -> dict[str, list[float]]:
    """Each scenario's throughput at the largest size over the smallest, measured in turns.

    The sizes' own parts of the run are tens of minutes apart, and this machine's speed drifts
    by a third within an hour: a scenario that read no more at ten million threads than at a
    million (the same statements, the same CPU per request in process) showed 0.60 of its
    million-thread throughput in one run. Here both datasets are served at once, each scenario
    runs on one and seconds later on the other, the order swapped every round
    (``BENCH_GROWTH_ROUNDS``), as ``make bench-ab`` compares two versions. The mixed scenarios,
    which share their connections with a capture load, are left to the sizes' own parts."""
    ratios: dict[str, list[float]] = {}
    print(f"\n-- {backend}: {small[0].seeded:,} and {large[0].seeded:,} threads in turns", flush=True)
    with served(small[1], small[0]) as smaller, served(large[1], large[0]) as larger:
        sides = {"smaller": (smaller, small), "larger": (larger, large)}
        names = [scenario.name for scenario in smaller.chosen if scenario.beside is None]
        for number in range(1, GROWTH_ROUNDS + 1):
            order = round_order(number, "smaller", "larger")
            for name in names:
                results = {}
                for side in order:
                    serving, (dataset, env) = sides[side]
                    settle_database(env)
                    count_deliveries(serving.deliveries)
                    scenario = next(chosen for chosen in serving.chosen if chosen.name == name)
                    scenario = as_a_browser_would(serving.base, scenario)
                    results[side] = measure(name, serving.base, scenario, serving.server)
                    report(results[side], f"({dataset.seeded:,} threads, round {number})")
                if results["smaller"].requests_per_second:
                    ratio = results["larger"].requests_per_second / results["smaller"].requests_per_second
                    ratios.setdefault(name, []).append(ratio)
    return ratios


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
    print(f"\n-- {backend} at {dataset.seeded:,} threads", flush=True)
    with served(env, dataset) as serving:
        base, server, chosen = serving.base, serving.server, serving.chosen
        count_deliveries(serving.deliveries)
        documents = save_documents(base, chosen, data_dir / "documents")
        reference_server, reference_base = start_reference(reference_url, data_dir, serving.deliveries.url)
        try:
            measures, in_turns = [], {}
            for scenario in chosen:
                settle_database(env)
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
            if "capture submit" in in_turns:
                floors["capture submit"] = measure(
                    REFERENCE_WEBHOOK.name, reference_base, REFERENCE_WEBHOOK, reference_server
                )
                report(floors["capture submit"])
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
