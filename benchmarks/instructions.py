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

from benchmarks.datasets import BIN, EMAIL, PASSWORD, stage_dataset
from benchmarks.load import ROOT
from benchmarks.run import scenarios

THREADS = int(os.environ.get("BENCH_THREADS", "100000"))
REQUESTS = int(os.environ.get("BENCH_REQUESTS", "20"))
WARM_UP = 5
SCENARIOS = ("feedback list", "one thread", "replies list (date)", "inbox page", "thread page")
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
    return {name: chosen[name] for name in SCENARIOS}


def callgrind_control(*arguments: str) -> None:
    subprocess.run(["callgrind_control", *arguments, str(os.getpid())], check=True, capture_output=True)


async def count_in_this_process(token: str, scenarios: dict[str, str]) -> None:
    """The child's work: each scenario warmed up, then counted between a zero and a dump."""
    import app as package
    from app import create_app
    from app.config import load_settings

    print(f"counting {package.__file__}", file=sys.stderr)
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
            headers = {} if path.startswith("/app/") else {"Authorization": f"Bearer {token}"}
            if "{newest}" in path:
                newest = await client.get(path.partition("?")[0] + "?limit=1", headers=headers)
                moment = datetime.fromtimestamp((await newest.get_json())["data"][0]["created_at"], UTC)
                path = path.replace("{newest}", moment.date().isoformat())
            for _ in range(WARM_UP):
                response = await client.get(path, headers=headers)
                assert response.status_code == 200, (name, response.status_code)
            callgrind_control("--zero")
            for _ in range(REQUESTS):
                await client.get(path, headers=headers)
            callgrind_control(f"--dump=scenario-{number}")  # callgrind drops a dump named with brackets


def count(code: Path, env: dict[str, str], token: str, scenarios: dict[str, str]) -> dict[str, float]:
    """Instructions per request of each scenario, for the ``app`` package in ``code``."""
    with tempfile.TemporaryDirectory(prefix="earful-callgrind-") as folder:
        out = Path(folder) / "callgrind.out"
        result = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                str(BIN / "python"),
                # Run as a file, not with -m: the working directory would then come first on the
                # path, and its ``app`` before the one of ``code``.
                str(Path(__file__).resolve()),
                "--child",
                json.dumps({"token": token, "scenarios": scenarios}),
            ],
            # One hash seed for both versions: string hashing decides dicts' probing.
            env={**env, "PYTHONPATH": f"{code}{os.pathsep}{ROOT}", "PYTHONHASHSEED": "0"},
            cwd=ROOT,
            check=False,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise SystemExit(f"callgrind run of {code} failed:\n{result.stderr[-3000:]}")
        dumps = sorted(Path(folder).glob("callgrind.out.*"), key=lambda dump: int(dump.suffix[1:]))
        if len(dumps) != len(scenarios):
            triggers = [re.findall(r"^desc: Trigger: (.*)$", dump.read_text(), re.M) for dump in dumps]
            raise SystemExit(f"expected {len(scenarios)} dumps, found {triggers}")
        counted = {}
        for name, dump in zip(scenarios, dumps, strict=True):
            totals = TOTALS.search(dump.read_text())
            assert totals is not None, dump
            counted[name] = int(totals.group(1)) / REQUESTS
        return counted


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        request = json.loads(sys.argv[2])
        asyncio.run(count_in_this_process(request["token"], request["scenarios"]))
        return 0
    before = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else None
    label = sys.argv[2] if len(sys.argv) > 2 else "before"
    with stage_dataset("SQLite", THREADS) as (dataset, env, _, _):
        thread_id = dataset.thread_id or dataset.seeded  # the seed's newest thread has the last id
        scenarios = paths(dataset.application_id, thread_id)
        after = count(ROOT, env, dataset.token, scenarios)
        earlier = count(before, env, dataset.token, scenarios) if before else {}
    print(f"\nInstructions per request (callgrind, SQLite, {THREADS:,} threads, {REQUESTS} requests each):\n")
    if earlier:
        print(f"| scenario | `{label}` | this checkout | this / before |\n|---|---:|---:|---:|")
        for name in SCENARIOS:
            ratio = after[name] / earlier[name]
            print(f"| {name} | {earlier[name] / 1e6:.2f} M | {after[name] / 1e6:.2f} M | {ratio:.3f} |")
    else:
        print("| scenario | instructions |\n|---|---:|")
        for name in SCENARIOS:
            print(f"| {name} | {after[name] / 1e6:.2f} M |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
