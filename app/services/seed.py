"""Realistic demo and benchmark data for one application, loaded fast with bulk inserts.

``earful seed`` writes members, threads, tags and their links, replies and internal notes with
the repositories' multi-row inserts, in batches, one transaction per batch, and moves every
counter the app keeps on write (app.services.counters) by exactly what each batch inserted, in
its transaction. Rows get explicit ids above the current maximum (on PostgreSQL the sequences
are moved past them afterwards), so no id has to be read back.

Run it while nothing else writes to the database: the ids are taken from the current maximum.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import random
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from app.db import transactional
from app.errors import NotFound, ValidationError
from app.repositories import accounts, applications, maintenance, replies, tags
from app.repositories import threads as thread_rows
from app.repositories.accounts import UserRow
from app.repositories.replies import ReplyRow
from app.repositories.threads import SenderRow, ThreadRow
from app.services import counters
from app.services.search import index_in_bulk
from app.services.seed_data import (
    AGENT_REPLIES,
    CUSTOMER_REPLIES,
    FIRST_NAMES,
    LAST_NAMES,
    MESSAGES,
    NOTES,
    TAG_NAMES,
    URLS,
    USER_AGENTS,
)
from app.services.tags import ensure_tags

MAX_THREADS = 10_000_000
# Threads (with their replies and tag links) per transaction. Every commit writes each page the
# batch changed to the WAL, and the threads' index by sender takes rows at random places: at a
# million threads a batch of 20,000 changed most of that index's pages, so fewer, larger batches
# write them fewer times (1M threads: 46-50 s with 20,000 a batch, 37 s with 100,000 and the
# collector below off; benchmarks/notes.md).
BATCH_THREADS = 100_000
BULK_INDEX_BATCH = 100_000  # rows per transaction of the search index built beside the load
DAY = 86_400
SPAN_DAYS = 365

LANGUAGES = (("en", 0.6), ("es", 0.25), ("pt", 0.15))
SENTIMENTS = (("positive", 0.35), ("neutral", 0.35), ("negative", 0.3))
ARCHIVED_SHARE = 0.3
NPS_SHARE = 0.4


@dataclass
class SeedReport:
    """What one run inserted, and how long it took."""

    application_id: int
    threads: int = 0
    archived: int = 0
    members: int = 0
    replies: int = 0
    notes: int = 0
    tag_links: int = 0
    tags: int = 0
    seconds: float = 0.0
    counters: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "application_id": self.application_id,
            "threads": self.threads,
            "archived": self.archived,
            "members": self.members,
            "replies": self.replies,
            "notes": self.notes,
            "tag_links": self.tag_links,
            "tags": self.tags,
            "seconds": round(self.seconds, 2),
        }


@contextlib.contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while the rows are drawn, as it was afterwards.

    A load allocates tens of millions of tuples, rows and strings, none of them in a cycle, and
    every collection walked the batch's live rows: a tenth of the seed's time (41.6 against
    46.3 s at a million threads, two runs each; gc_collect_main was 260 of the drawing thread's
    1,220 samples). Reference counting still frees everything the load lets go."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _weighted(rng: random.Random, choices: tuple[tuple[str, float], ...], count: int) -> list[str]:
    return rng.choices([name for name, _ in choices], weights=[weight for _, weight in choices], k=count)


@dataclass
class _Batch:
    """The rows of one batch, and how they move the counters."""

    application_id: int
    threads: list[ThreadRow] = field(default_factory=list)
    replies: list[ReplyRow] = field(default_factory=list)
    links: list[tuple[int, int]] = field(default_factory=list)
    archived: int = 0
    tag_moves: dict[int, tuple[int, int]] = field(default_factory=dict)
    replies_per_day: Counter[date] = field(default_factory=Counter)
    first_reply_total: int = 0
    first_reply_count: int = 0


@transactional
async def _write_senders(senders: list[SenderRow]) -> None:
    await thread_rows.insert_senders(senders)


@transactional
async def _write_batch(application_id: int, batch: _Batch) -> None:
    """One batch and its counters, in one transaction."""
    await thread_rows.insert_threads(batch.threads)
    await replies.insert_replies(batch.replies)
    await tags.insert_links(batch.links)
    await counters.threads_added(
        application_id, opened=len(batch.threads) - batch.archived, archived=batch.archived
    )
    await counters.tag_links_added(batch.tag_moves)
    await counters.replies_added(
        application_id, batch.replies_per_day, batch.first_reply_total, batch.first_reply_count
    )


@transactional
async def _create_tags(application_id: int, names: Sequence[str]) -> list[int]:
    return [tag.id for tag in await ensure_tags(application_id, names)]


@transactional
async def _finish() -> None:
    await maintenance.move_sequences_past_ids(("members", "feedback", "replies", "feedback_tags"))


def _conversation(
    batch: _Batch,
    report: SeedReport,
    rng: random.Random,
    roll: float,
    thread_id: int,
    created: datetime,
    next_reply: int,
    owner: UserRow,
    customer: str,
) -> tuple[int | None, datetime, int]:
    """The replies of one thread (45 % of threads get an agent reply, some a note, some an answer
    back), added to the batch; returns the thread's first reply time, its last reply time and the
    last reply id used."""
    if roll >= 0.45:
        return None, created, next_reply
    random_ = rng.random
    first_reply_time = None
    moment = created
    wait = int(60 + random_() * random_() * DAY)
    kinds = ["reply"]
    if roll < 0.12:
        kinds.insert(0, "note")
    if roll < 0.2:
        kinds.append("customer")
    if roll < 0.05:
        kinds.append("reply")
    application_id = batch.application_id
    for kind in kinds:
        moment = moment + timedelta(seconds=wait)
        wait = int(60 + random_() * 3 * 3600)
        next_reply += 1
        if kind == "customer":
            text = CUSTOMER_REPLIES[next_reply % len(CUSTOMER_REPLIES)]
            batch.replies.append(
                ReplyRow(next_reply, application_id, thread_id, None, "reply", text, False, customer, moment)
            )
        else:
            text = (NOTES if kind == "note" else AGENT_REPLIES)[next_reply % 3]
            batch.replies.append(
                ReplyRow(
                    next_reply, application_id, thread_id, owner.id, kind, text, True, owner.email, moment
                )
            )
            if kind == "note":
                report.notes += 1
            elif first_reply_time is None:
                first_reply_time = int((moment - created).total_seconds())
                batch.first_reply_total += first_reply_time
                batch.first_reply_count += 1
        batch.replies_per_day[moment.astimezone(UTC).date()] += 1
    return first_reply_time, moment, next_reply


async def seed_application(application_id: int, threads: int, seed: int = 1) -> SeedReport:
    """Add ``threads`` realistic threads to an application, keeping every counter consistent."""
    if not 1 <= threads <= MAX_THREADS:
        raise ValidationError("The number of threads must be between 1 and %(max)d.", max=MAX_THREADS)
    application = await applications.application_by_id(application_id)
    if application is None:
        raise NotFound("Invalid application")
    owner = await accounts.user_by_id(application.owner_id)
    assert owner is not None  # an application's owner exists (foreign key)
    started = time.perf_counter()
    rng = random.Random(seed)
    report = SeedReport(application_id=application_id)

    await maintenance.prepare_bulk_load()
    # The search index is built beside the load, from the rows it has committed (on SQLite the
    # index has a database file, and a write lock, of its own: app.search_db).
    loaded = asyncio.Event()
    indexing = asyncio.ensure_future(index_in_bulk(BULK_INDEX_BATCH, loaded))
    try:
        with _cycle_collector_paused():
            await _load(application_id, threads, rng, report, owner)
    finally:
        loaded.set()
        await indexing
    report.seconds = time.perf_counter() - started
    return report


async def _load(
    application_id: int, threads: int, rng: random.Random, report: SeedReport, owner: UserRow
) -> None:
    """Write the tags, senders, threads, replies and tag links of a seed, and their counters."""
    tag_ids = await _create_tags(application_id, TAG_NAMES)
    report.tags = len(tag_ids)
    next_member = await maintenance.highest_id("members")
    next_thread = await maintenance.highest_id("feedback")
    next_reply = await maintenance.highest_id("replies")

    now = datetime.now(UTC).replace(microsecond=0)
    start = now - timedelta(days=SPAN_DAYS)
    span_seconds = SPAN_DAYS * DAY - 2 * DAY  # leaves room for replies before now

    # Senders: about one per four threads, so some write more than once.
    member_count = max(1, threads // 4)
    member_emails: list[str] = []
    first_member = next_member + 1
    for start_index in range(0, member_count, BATCH_THREADS * 5):
        senders = []
        for index in range(start_index, min(member_count, start_index + BATCH_THREADS * 5)):
            first = FIRST_NAMES[index % len(FIRST_NAMES)]
            last = LAST_NAMES[(index // len(FIRST_NAMES)) % len(LAST_NAMES)]
            member_id = first_member + index
            email = f"{first.lower()}.{last.lower()}{member_id}@example.org"
            member_emails.append(email)
            senders.append(SenderRow(member_id, application_id, email, f"{first} {last}", start, start))
        await _write_senders(senders)
    report.members = member_count

    pools: dict[tuple[str, str], tuple[str, ...]] = {
        (language, label): texts
        for language, by_label in MESSAGES.items()
        for label, texts in by_label.items()
    }
    properties_pool: list[Any] = [
        {"plan": plan, "app_version": f"{major}.{minor}.0", "seats": seats}
        for plan in ("free", "team", "enterprise")
        for major in (3, 4)
        for minor in range(4)
        for seats in (1, 5, 25)
    ] + [[]]
    ips = [f"203.0.113.{n}" for n in range(1, 255)] + [f"2001:db8::{n:x}" for n in range(1, 64)]
    step = span_seconds / threads

    # Each batch is written while the next one is drawn: the database works (in aiosqlite's
    # thread, or in PostgreSQL's server) while Python makes the rows, and neither waits long.
    writing: asyncio.Future[None] | None = None
    for batch_start in range(0, threads, BATCH_THREADS):
        size = min(BATCH_THREADS, threads - batch_start)
        languages = _weighted(rng, LANGUAGES, size)
        labels = _weighted(rng, SENTIMENTS, size)
        batch = _Batch(application_id)
        tag_open: Counter[int] = Counter()
        tag_archived: Counter[int] = Counter()
        random_ = rng.random
        for offset in range(size):
            index = batch_start + offset
            thread_id = next_thread + index + 1
            created = start + timedelta(seconds=int(index * step + random_() * step))
            language = languages[offset]
            label = labels[offset]
            archived = random_() < ARCHIVED_SHARE
            member_index = int(random_() * member_count)
            member_id = first_member + member_index
            roll = random_()
            first_reply_time, last_reply_at, next_reply = _conversation(
                batch, report, rng, roll, thread_id, created, next_reply, owner, member_emails[member_index]
            )
            texts = pools[(language, label)]
            batch.threads.append(
                ThreadRow(
                    id=thread_id,
                    application_id=application_id,
                    member_id=member_id,
                    message=texts[index % len(texts)],
                    sentiment=label,
                    sentiment_corrected=False,
                    archived=archived,
                    nps=int(random_() * 11) if random_() < NPS_SHARE else None,
                    url=URLS[index % len(URLS)],
                    language=language,
                    ip_address=ips[index % len(ips)],
                    user_agent=USER_AGENTS[index % len(USER_AGENTS)],
                    properties=properties_pool[index % len(properties_pool)],
                    first_reply_time=first_reply_time,
                    last_reply_at=last_reply_at,
                    created_at=created,
                    updated_at=last_reply_at,
                )
            )
            # Tags: none for 40 %, then one to three distinct tags.
            tag_roll = random_()
            if tag_roll >= 0.4:
                count = 1 if tag_roll < 0.75 else (2 if tag_roll < 0.92 else 3)
                for tag_id in rng.sample(tag_ids, count):
                    batch.links.append((thread_id, tag_id))
                    (tag_archived if archived else tag_open)[tag_id] += 1
            if archived:
                batch.archived += 1
        batch.tag_moves = {tag_id: (tag_open[tag_id], tag_archived[tag_id]) for tag_id in tag_ids}
        if writing is not None:
            await writing
        writing = asyncio.ensure_future(_write_batch(application_id, batch))
        report.threads += size
        report.archived += batch.archived
        report.replies += len(batch.replies)
        report.tag_links += len(batch.links)
        report.counters["first_reply_total"] = (
            report.counters.get("first_reply_total", 0) + batch.first_reply_total
        )
        report.counters["first_reply_count"] = (
            report.counters.get("first_reply_count", 0) + batch.first_reply_count
        )

    if writing is not None:
        await writing
    await _finish()
    await maintenance.refresh_statistics(("members", "feedback", "replies", "feedback_tags", "tags"))
