"""The data each size of ``make bench`` runs on: a data dir (and on PostgreSQL a database) with
the bench's user, token and application, seeded with ``earful seed``.

Each size gets a dataset of its own, seeded from nothing, so that the seeding time of every
size is measured and a size can be reused alone. With ``BENCH_DATA_DIR`` the datasets are kept
there (``sqlite-1000000``, ``postgresql-10000000`` ...) with their PostgreSQL databases, and a
later run seeds only what a dataset lacks: ten million threads take minutes to seed. The
scenarios that write add rows to a kept dataset at every run (a few tens of thousands).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from app.config import CAPTURE_LIMIT_VARIABLES, QUOTA_VARIABLES

BIN = Path(sys.executable).parent
EARFUL = BIN / "earful"
EMAIL = "bench@example.com"
PASSWORD = "bench-password-1"
POSTGRES_URL = os.environ.get("EARFUL_BENCH_POSTGRES_URL", "")
DATA_DIR = os.environ.get("BENCH_DATA_DIR", "")


@dataclass
class Dataset:
    """A data dir with the bench's user, token and application, and how many threads have been
    seeded into it. Kept in its ``bench.json``, so that with ``BENCH_DATA_DIR`` a later run
    reuses the data (ten million threads take minutes to seed) and seeds only what is missing."""

    data_dir: Path
    application_id: int
    key: str
    token: str
    seeded: int = 0
    database: str = ""  # the PostgreSQL database's name ("" on SQLite)
    # The thread the thread scenarios read and reply to: the newest one right after seeding,
    # kept, so that a later run reads the same seeded thread rather than the newest thread
    # then, which would be one the last run's capture scenarios submitted (without replies).
    thread_id: int = 0
    # How the seeding of all ``seeded`` threads went, when one ``earful seed`` did all of it:
    # its seconds, its report and when (UTC), so that a run reusing the data reports it too.
    seeding: dict = field(default_factory=dict)

    @classmethod
    def load(cls, data_dir: Path) -> Dataset | None:
        marker = data_dir / "bench.json"
        if not marker.exists():
            return None
        return cls(data_dir=data_dir, **json.loads(marker.read_text()))

    def save(self) -> None:
        fields_ = {
            "application_id": self.application_id,
            "key": self.key,
            "token": self.token,
            "seeded": self.seeded,
            "database": self.database,
            "thread_id": self.thread_id,
            "seeding": self.seeding,
        }
        (self.data_dir / "bench.json").write_text(json.dumps(fields_))


def prepare_dataset(env: dict[str, str], data_dir: Path, database: str) -> Dataset:
    """The data dir's dataset, or a new one: migrated, with a user, a token and an application.
    Migrations run either way, so that a kept data dir follows the code."""
    run([str(EARFUL), "db", "upgrade"], env)
    dataset = Dataset.load(data_dir)
    if dataset is not None:
        print(f"reusing {data_dir}: {dataset.seeded:,} threads seeded", flush=True)
        return dataset
    run([str(EARFUL), "user", "create", "--email", EMAIL, "--name", "Bench", "--password", PASSWORD], env)
    run([str(EARFUL), "plan", "set", "--user", EMAIL, "team"], env)
    token = run(
        [str(EARFUL), "token", "create", "--email", EMAIL, "--scope", "read", "--scope", "write"], env
    )
    application_id, key = create_application(env)
    dataset = Dataset(data_dir, application_id, key, token.strip(), database=database)
    dataset.save()
    return dataset


def seed_to(env: dict[str, str], dataset: Dataset, size: int) -> tuple[float, dict]:
    """Seed the application up to ``size`` threads (the threads that scenarios add aside);
    the wall-clock seconds and the seed's report, those of the earlier run that seeded a kept
    dataset (with ``seeded_at``), or 0 and ``reused`` when that run did not seed it whole."""
    missing = size - dataset.seeded
    if missing <= 0:
        if dataset.seeding:  # seeded whole by an earlier run: its figures, and when
            return dataset.seeding["seconds"], {
                **dataset.seeding["report"],
                "seeded_at": dataset.seeding["at"],
            }
        return 0.0, {"threads": dataset.seeded, "reused": True}
    print(f"seeding {missing:,} threads into application {dataset.application_id} ...", flush=True)
    started = time.perf_counter()
    out = run(
        [
            str(EARFUL),
            "seed",
            "--application",
            str(dataset.application_id),
            "--threads",
            str(missing),
            # Another seed for each addition: the same data for the same sizes, run after run.
            "--seed",
            str(1 + dataset.seeded),
        ],
        env,
        timeout=7200,
    )
    seconds = time.perf_counter() - started
    seed_report = json.loads(out.strip().splitlines()[-1])
    whole = dataset.seeded == 0
    dataset.seeded = size
    dataset.seeding = (
        {
            "seconds": round(seconds, 1),
            "report": seed_report,
            "at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        }
        if whole
        else {}
    )
    dataset.thread_id = 0  # the newest thread is now another one: chosen again (bench_stage)
    dataset.save()
    print(f"seeded in {seconds:.1f} s: {seed_report}", flush=True)
    return seconds, seed_report


@contextmanager
def stage_dataset(backend: str, size: int) -> Iterator[tuple[Dataset, dict[str, str], float, dict]]:
    """The dataset of one size, seeded up to it: the dataset, the served app's environment, the
    seconds the seeding took in this run (0 when it was there already) and the seed's report.
    A temporary one (data dir, PostgreSQL database) is removed afterwards, a kept one stays."""
    if DATA_DIR:
        data_dir = Path(DATA_DIR).resolve() / f"{backend.lower()}-{size}"
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    else:
        data_dir = Path(tempfile.mkdtemp(prefix=f"earful-bench-{backend.lower()}-{size}-"))
    kept = Dataset.load(data_dir)
    database = ""
    if backend == "PostgreSQL":
        database = kept.database if kept else f"earful_bench_{secrets.token_hex(6)}"
        if kept is None:
            asyncio.run(_postgres(POSTGRES_URL, f'CREATE DATABASE "{database}"'))
    database_url = urlunsplit(urlsplit(POSTGRES_URL)._replace(path=f"/{database}")) if database else None
    env = server_env(data_dir, database_url)
    ready = False
    try:
        print(f"\n== {backend}, {size:,} threads: data dir {data_dir}", flush=True)
        dataset = prepare_dataset(env, data_dir, database)
        seconds, seed_report = seed_to(env, dataset, size)
        ready = True
        yield dataset, env, seconds, seed_report
    finally:
        # A temporary dataset goes, and so does a new one that was not finished.
        if not DATA_DIR or (kept is None and not ready):
            _remove(data_dir, database)


def _remove(data_dir: Path, database: str) -> None:
    shutil.rmtree(data_dir, ignore_errors=True)
    if database:
        asyncio.run(_postgres(POSTGRES_URL, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))


def run(args: list[str], env: dict[str, str], timeout: float = 1800) -> str:
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def create_application(env: dict[str, str]) -> tuple[int, str]:
    """The application under test, made by the service (the CLI has no command for it)."""
    code = (
        "import asyncio, json\n"
        "from app.config import load_settings\n"
        "from app.db import open_database, close_database\n"
        "from app.services.applications import create_application\n"
        "from app.services.users import get_user_by_email\n"
        "async def main():\n"
        "    s = load_settings()\n"
        "    await open_database(s.database_url)\n"
        f"    user = await get_user_by_email({EMAIL!r})\n"
        "    app = await create_application(user, {'name': 'Bench'}, None, s.data_dir)\n"
        "    print(json.dumps([app.id, app.key_javascript]))\n"
        "    await close_database()\n"
        "asyncio.run(main())\n"
    )
    application_id, key = json.loads(run([str(BIN / "python"), "-c", code], env).strip().splitlines()[-1])
    return application_id, key


def server_env(data_dir: Path, database_url: str | None) -> dict[str, str]:
    """The served app's environment: its data dir and database, nothing else of ours.

    wrk sends every capture request from one address, thousands a second: the capture rate
    limits (app.services.capture_limits) still run on every request, with a budget so large
    that the benchmark measures the service rather than its 429s; and the upload scenario sends
    gigabytes, far beyond an application's daily quota (its 413s answered 8,000 of ~10,000
    uploads in a run), so that quota is lifted too (it is still checked on every upload). The
    webhook receiver is on loopback, which Earful refuses unless told that private addresses
    are allowed.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("EARFUL_")}
    env["EARFUL_DATA_DIR"] = str(data_dir)
    env.update({variable: "1000000" for variable in CAPTURE_LIMIT_VARIABLES.values()})
    env[QUOTA_VARIABLES["upload_bytes_per_day"]] = str(10**13)
    env["EARFUL_WEBHOOK_ALLOW_PRIVATE"] = "1"
    if database_url:
        env["EARFUL_DATABASE_URL"] = database_url
    return env


def _asyncpg_dsn(url: str) -> str:
    return "postgresql://" + url.split("://", 1)[1]


def settle_database(env: dict[str, str]) -> None:
    """On PostgreSQL, what autovacuum would have done by now: ``VACUUM (ANALYZE)`` of the bench
    database (Earful's tables and the reference's), run before each scenario.

    This machine's PostgreSQL runs with ``autovacuum = off``; a production server vacuums and
    analyzes a table soon after its rows change. Without it a table the scenarios fill is
    planned as PostgreSQL plans one never analyzed: after *upload 100 KB* added 7,000 files, the
    files of a page of threads were read by a sequential scan of them all (1.3 ms of the
    database's CPU on every feedback list, inbox page and thread page that followed, against
    0.17 ms by the indexes once analyzed), and index-only scans read the table for rows the
    visibility map does not mark. 3.3 s the first time on a million threads, 1.4-1.8 s after.
    On SQLite it does nothing (the seed analyzes the file; autovacuum is PostgreSQL's)."""
    url = env.get("EARFUL_DATABASE_URL")
    if url and url.startswith(("postgres://", "postgresql://")):
        asyncio.run(_postgres(url, "VACUUM (ANALYZE)"))


async def _postgres(admin_url: str, statement: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(_asyncpg_dsn(admin_url))
    try:
        await connection.execute(statement)
    finally:
        await connection.close()
