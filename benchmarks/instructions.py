"""Instructions per request, counted by callgrind: ``make bench-instructions [BEFORE=<commit>]``.

This machine is shared: its speed moves by a fifth from one minute to the next, and CPU time
per request with it (two runs of the same inbox page a minute apart: 6.3 and 9.4 ms), so a
change worth a few percent is lost in ``make bench`` and even in ``make bench-ab``. Valgrind's
callgrind counts the instructions the worker's process executes instead, which do not depend
on what else the machine does: runs of the same code on the same data agree within 3 % (what
still varies is how often the event loop polls while aiosqlite's thread works).

For each read scenario of ``make bench`` (the API's lists and one thread, the inbox and thread
pages), a process under callgrind builds the app on a seeded SQLite data dir, sends the
scenario's request through Quart's test client a few times to warm up, zeroes callgrind's
counters (``callgrind_control --zero``), sends ``BENCH_REQUESTS`` (20) more and dumps the
counters: the dump's total over the requests is one request's instructions, the app's whole
work in its worker (routing, hooks, reads through aiosqlite's thread, rendering), without
Hypercorn's HTTP parsing and socket writes, which every version pays alike. With ``BEFORE`` the
commit's ``app`` is counted the same way on the same data, and the table shows the ratio.

Capture submit, the one write counted, is counted per submit over ``BENCH_CAPTURE_WAVES`` (4)
waves of 32 submits sent at once (as wrk's 32 connections send them, so that the thread
writer's group commits batch them alike), each wave's webhook deliveries awaited at the bench's
receiver, started here: a submit's count holds its validation, rate limits, sentiment, group
commit, event, delivery and the attempt's record, and the event loop's idle polls while it
waits (what varies most between runs). Its floor, the reference app's ``/submit-webhook`` (one
insert and one POST to the receiver, benchmarks/reference_app.py) is counted the same way
beside it, on a SQLite file of its own.

``BENCH_ONLY`` (comma-separated scenario names) counts only those.

The data: ``BENCH_THREADS`` (100000; reads cost the same at a million, results.md) seeded as
``make bench`` seeds, kept in ``BENCH_DATA_DIR`` when it is set. Instructions are not time (a
cache miss costs more than an add), so the A/B under wrk stays the measure of throughput; this
is the measure of work.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.datasets import BIN, EMAIL, PASSWORD, run, stage_dataset
from benchmarks.load import ROOT
from benchmarks.run import scenarios
from benchmarks.servers import reference_database_url, start_receiver, stop

THREADS = int(os.environ.get("BENCH_THREADS", "100000"))
REQUESTS = int(os.environ.get("BENCH_REQUESTS", "20"))
WARM_UP = 5
SCENARIOS = ("feedback list", "one thread", "replies list (date)", "inbox page", "thread page")
CAPTURE = "capture submit"
# Capture submits go in waves of as many at once as make bench's connections, so that the thread
# writer's group commits batch them as they do under wrk; each wave's deliveries are awaited.
WAVE = 32
WAVES = int(os.environ.get("BENCH_CAPTURE_WAVES", "4"))
ONLY = {name for name in os.environ.get("BENCH_ONLY", "").split(",") if name}  # as make bench's
TOTALS = re.compile(r"^totals: (\d+)", re.M)


def paths(application_id: int, thread_id: int) -> dict[str, str]:
    """The read scenarios' paths, as ``make bench`` asks for them (benchmarks/run.py), the
    replies list's day left for the counting process to fill in (see count_in_this_process)."""
    with tempfile.TemporaryDirectory() as folder:
        upload = Path(folder) / "upload.bin"
        upload.write_bytes(b"")
        chosen = {
            scenario.name: scenario.path
            for scenario in scenarios(application_id, "", "", thread_id, "", upload)
            if scenario.name in SCENARIOS
        }
    # make bench's post reply adds today's replies first; a kept dataset's newest may be older.
    chosen["replies list (date)"] = re.sub(r"date=[0-9-]+", "date={newest}", chosen["replies list (date)"])
    chosen[CAPTURE] = f"/applications/{application_id}/submit"
    return {name: chosen[name] for name in (*SCENARIOS, CAPTURE) if not ONLY or name in ONLY}


def requests_counted(name: str) -> int:
    """How many requests a scenario's dump holds."""
    return WAVE * WAVES if name == CAPTURE else REQUESTS


def callgrind_control(*arguments: str) -> None:
    subprocess.run(["callgrind_control", *arguments, str(os.getpid())], check=True, capture_output=True)


def submit_body(run: str, number: int) -> dict:
    """The body of benchmarks/lua/submit.lua's request ``number``: a new sender each time (and
    in each ``run``: a kept dataset is counted again)."""
    tags = [["bug"], ["billing", "ui"], ["feature request"], [], ["performance", "mobile", "export"]]
    return {
        "email": f"callgrind-{run}-{number}@example.org",
        "name": "Bench User",
        "message": "The export button does nothing when I click it, please fix.",
        "tags": tags[number % len(tags)],
        "properties": {"plan": "team", "app_version": "4.2.0", "seats": number % 50},
        "nps": number % 11,
        "url": "https://app.example.com/reports",
    }


async def delivered(receiver: str) -> int:
    """The receiver's count of deliveries (benchmarks/receiver.py)."""
    reader, writer = await asyncio.open_connection(*receiver.removeprefix("http://").split(":"))
    writer.write(b"GET /count HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
    answer = await reader.read(200)
    writer.close()
    return int(answer.rpartition(b"\r\n")[2])


async def submit_waves(client, path: str, receiver: str, first: int, waves: int, index: bool = True) -> None:
    """``waves`` waves of WAVE capture submits at once, each wave's deliveries awaited (one per
    submit: the endpoint hears of every new thread), so that the dump counts their work, and
    (``index``) the wave's threads indexed."""
    from uuid import uuid4

    batch = uuid4().hex[:8]
    for wave in range(waves):
        expected = await delivered(receiver) + WAVE
        numbers = range(first + wave * WAVE, first + (wave + 1) * WAVE)
        answers = await asyncio.gather(
            *(client.post(path, json=submit_body(batch, number)) for number in numbers)
        )
        assert all(answer.status_code == 201 for answer in answers), [a.status_code for a in answers]
        for _ in range(600):
            if await delivered(receiver) >= expected:
                break
            await asyncio.sleep(0.05)
        else:
            raise SystemExit("the capture submits' deliveries did not arrive")
        if index:
            await index_leftovers()


async def subscribe(client, token: str, application_id: int, receiver: str) -> None:
    """The application's one endpoint: this run's receiver (as benchmarks.servers.subscribe_receiver)."""
    headers = {"Authorization": f"Bearer {token}"}
    hooks = f"/applications/{application_id}/webhooks"
    for endpoint in (await (await client.get(hooks, headers=headers)).get_json())["data"]:
        assert (await client.delete(f"{hooks}/{endpoint['id']}", headers=headers)).status_code == 204
    made = await client.post(hooks, headers=headers, json={"url": f"{receiver}/hooks/earful"})
    assert made.status_code == 201, made.status_code


def quiet_background_work() -> None:
    """The background work that is no request's own, kept out of the counts.

    Under valgrind the counting takes minutes, and what runs on a timer fell inside the
    scenarios' windows as their requests' work: the housekeeping's and the retention's first
    rounds (60 and 90 s after start-up: capture submit counted 6.96 M instructions a submit
    twice, then 13.9 M with a round in it), and the search indexer, which polls four times a
    second and indexes whatever an earlier count left (the first scenario of one run counted
    33 M instead of 11). The first two never run here; the indexer runs only when called,
    :func:`index_leftovers` before a count and after each wave of capture submits, whose
    indexing is theirs."""
    from functools import partial

    from app import workers

    for name in ("run_housekeeping", "run_retention"):
        setattr(workers, name, partial(getattr(workers, name), first_delay=10**9))

    async def no_indexer(stop: asyncio.Event) -> None:
        await stop.wait()

    workers.run_indexer = no_indexer  # type: ignore[assignment]


async def index_leftovers() -> None:
    """Index the threads and senders not yet in the SQLite search file."""
    from app.services.search import index_new_rows

    await index_new_rows()


async def count_in_this_process(token: str, scenarios: dict[str, str], capture: dict) -> None:
    """The child's work: each scenario warmed up, then counted between a zero and a dump."""
    import app as package
    from app import create_app
    from app.config import load_settings

    print(f"counting {package.__file__}", file=sys.stderr)
    quiet_background_work()
    app = create_app(load_settings())
    async with app.test_app():
        client = app.test_client()
        page = await client.get("/app/login")
        found = re.search(r'name="csrf_token" value="([^"]+)"', await page.get_data(as_text=True))
        assert found, "no CSRF token on /app/login"
        signed_in = await client.post(
            "/app/login", form={"email": EMAIL, "password": PASSWORD, "csrf_token": found.group(1)}
        )
        assert signed_in.status_code == 302, signed_in.status_code
        for number, (name, path) in enumerate(scenarios.items()):
            if name == CAPTURE:
                await subscribe(client, token, capture["application_id"], capture["receiver"])
                path = f"{path}?key={capture['key']}"
                await submit_waves(client, path, capture["receiver"], 0, 1)
                callgrind_control("--zero")
                await submit_waves(client, path, capture["receiver"], WAVE, WAVES)
                callgrind_control(f"--dump=scenario-{number}")
                continue
            headers = {} if path.startswith("/app/") else {"Authorization": f"Bearer {token}"}
            if "{newest}" in path:
                newest = await client.get(path.partition("?")[0] + "?limit=1", headers=headers)
                moment = datetime.fromtimestamp((await newest.get_json())["data"][0]["created_at"], UTC)
                path = path.replace("{newest}", moment.date().isoformat())
            for _ in range(WARM_UP):
                response = await client.get(path, headers=headers)
                assert response.status_code == 200, (name, response.status_code)
            await index_leftovers()
            callgrind_control("--zero")
            for _ in range(REQUESTS):
                await client.get(path, headers=headers)
            callgrind_control(f"--dump=scenario-{number}")  # callgrind drops a dump named with brackets
        # Every dump is written. Leave without the app's shutdown: under valgrind it once
        # stopped for good in futex waits (on a million threads' data, after capture submit),
        # and nothing after the last dump is counted.
        sys.stdout.flush()
        os._exit(0)


async def count_floor_in_this_process(receiver: str) -> None:
    """The floor's child: the reference app's ``/submit-webhook`` (one insert, one POST to the
    receiver) in the same waves as capture submit, counted between a zero and a dump."""
    from benchmarks import reference_app

    async with reference_app.app.test_app():
        client = reference_app.app.test_client()
        await submit_waves(client, "/submit-webhook", receiver, 0, 1, index=False)
        callgrind_control("--zero")
        await submit_waves(client, "/submit-webhook", receiver, WAVE, WAVES, index=False)
        callgrind_control("--dump=floor")
        sys.stdout.flush()
        os._exit(0)


def callgrind_totals(child: list[str], env: dict[str, str], dumps_expected: int) -> list[int]:
    """Run this file as ``child`` under callgrind; the instructions of each dump, in order."""
    with tempfile.TemporaryDirectory(prefix="earful-callgrind-") as folder:
        out = Path(folder) / "callgrind.out"
        result = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                str(BIN / "python"),
                # Run as a file, not with -m: the working directory would then come first on the
                # path, and its ``app`` before the one of the code counted.
                str(Path(__file__).resolve()),
                *child,
            ],
            # One hash seed for every version: string hashing decides dicts' probing.
            env={**env, "PYTHONHASHSEED": "0"},
            cwd=ROOT,
            check=False,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise SystemExit(f"callgrind run of {child[0]} failed:\n{result.stderr[-3000:]}")
        dumps = sorted(Path(folder).glob("callgrind.out.*"), key=lambda dump: int(dump.suffix[1:]))
        if len(dumps) != dumps_expected:
            triggers = [re.findall(r"^desc: Trigger: (.*)$", dump.read_text(), re.M) for dump in dumps]
            raise SystemExit(f"expected {dumps_expected} dumps, found {triggers}")
        totals = [TOTALS.search(dump.read_text()) for dump in dumps]
        assert all(total is not None for total in totals), dumps
        return [int(total.group(1)) for total in totals if total is not None]


def count_floor(receiver: str) -> float:
    """Instructions per submit of capture submit's floor, the reference app's
    ``/submit-webhook``, on a SQLite file of its own opened as Earful opens its own."""
    with tempfile.TemporaryDirectory(prefix="earful-reference-") as folder:
        env = {
            **os.environ,
            "REFERENCE_DATABASE_URL": reference_database_url(None, Path(folder)),
            "REFERENCE_WEBHOOK": f"{receiver}/hooks/reference",
            "PYTHONPATH": str(ROOT),
        }
        run([str(BIN / "python"), "-m", "benchmarks.reference_app", "init"], env)
        (total,) = callgrind_totals(["--floor-child", receiver], env, 1)
    return total / (WAVE * WAVES)


def count(
    code: Path, env: dict[str, str], token: str, scenarios: dict[str, str], capture: dict
) -> dict[str, float]:
    """Instructions per request of each scenario, for the ``app`` package in ``code``."""
    totals = callgrind_totals(
        ["--child", json.dumps({"token": token, "scenarios": scenarios, "capture": capture})],
        {**env, "PYTHONPATH": f"{code}{os.pathsep}{ROOT}"},
        len(scenarios),
    )
    return {name: total / requests_counted(name) for name, total in zip(scenarios, totals, strict=True)}


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        request = json.loads(sys.argv[2])
        asyncio.run(count_in_this_process(request["token"], request["scenarios"], request["capture"]))
        return 0
    if sys.argv[1:2] == ["--floor-child"]:
        asyncio.run(count_floor_in_this_process(sys.argv[2]))
        return 0
    before = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else None
    label = sys.argv[2] if len(sys.argv) > 2 else "before"
    with stage_dataset("SQLite", THREADS) as (dataset, env, _, _):
        thread_id = dataset.thread_id or dataset.seeded  # the seed's newest thread has the last id
        scenarios = paths(dataset.application_id, thread_id)
        receiver, receiver_base = start_receiver(dataset.data_dir)
        capture = {"application_id": dataset.application_id, "key": dataset.key, "receiver": receiver_base}
        try:
            after = count(ROOT, env, dataset.token, scenarios, capture)
            earlier = count(before, env, dataset.token, scenarios, capture) if before else {}
            floor = count_floor(receiver_base) if CAPTURE in scenarios else None
        finally:
            stop(receiver)
    print(
        f"\nInstructions per request (callgrind, SQLite, {THREADS:,} threads, {REQUESTS} requests each, "
        f"capture submit over {WAVES} waves of {WAVE} with their deliveries):\n"
    )
    if earlier:
        print(f"| scenario | `{label}` | this checkout | this / before |\n|---|---:|---:|---:|")
        for name in scenarios:
            ratio = after[name] / earlier[name]
            print(f"| {name} | {earlier[name] / 1e6:.2f} M | {after[name] / 1e6:.2f} M | {ratio:.3f} |")
    else:
        print("| scenario | instructions |\n|---|---:|")
        for name in scenarios:
            print(f"| {name} | {after[name] / 1e6:.2f} M |")
    if floor is not None:
        print(
            f"\nFloor of capture submit (the reference app's /submit-webhook, same waves): "
            f"{floor / 1e6:.2f} M instructions a submit; capture submit is {after[CAPTURE] / floor:.2f}x it."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
