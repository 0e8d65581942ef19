"""Realistic demo and benchmark data for one application, loaded fast with bulk inserts.

``earful seed`` writes members, threads, tags and their links, replies and internal notes with
raw multi-row INSERTs, in batches, one transaction per batch, and then moves every counter the
app keeps on write (application totals, first-reply statistics, tag counts) by exactly what was
inserted. Rows get explicit ids above the current maximum (on PostgreSQL the sequences are moved
past them afterwards), so no id has to be read back.

Run it while nothing else writes to the database: the ids are taken from the current maximum.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from tortoise import connections
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.transactions import in_transaction

from app.db import date_parameter, insert_statement
from app.errors import NotFound, ValidationError
from app.models import Application, User
from app.services.search import index_new_rows
from app.services.tags import ensure_tags

MAX_THREADS = 10_000_000
BATCH_THREADS = 20_000  # threads (with their replies and tag links) per transaction
MAX_VARIABLES = 30_000  # bound parameters per statement (SQLite allows 32766, PostgreSQL 32767)
ROWS_PER_STATEMENT = 200
DAY = 86_400
SPAN_DAYS = 365

LANGUAGES = (("en", 0.6), ("es", 0.25), ("pt", 0.15))
SENTIMENTS = (("positive", 0.35), ("neutral", 0.35), ("negative", 0.3))
ARCHIVED_SHARE = 0.3
NPS_SHARE = 0.4
TAG_NAMES = (
    "bug",
    "feature request",
    "billing",
    "login",
    "performance",
    "ui",
    "mobile",
    "export",
    "integrations",
    "onboarding",
    "praise",
    "pricing",
    "notifications",
    "search",
    "accessibility",
    "data loss",
)
MESSAGES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "positive": (
            "Love the new dashboard, it is so much faster than before. Great work!",
            "Thanks for the quick fix on the export, everything works perfectly now.",
            "The mobile app is excellent, my whole team uses it every day.",
            "Really happy with the search, it finds exactly what I need.",
        ),
        "neutral": (
            "Is there a way to change the date format in the reports?",
            "How do I invite a colleague to my workspace?",
            "Could you add a keyboard shortcut for archiving?",
            "Where can I find the invoices for last year?",
        ),
        "negative": (
            "The export button does nothing and I lost an hour of work. Very frustrating.",
            "Login fails every morning, I have to reset my password again and again.",
            "The app is terribly slow since the last update, pages take ages to load.",
            "I was charged twice this month, this is unacceptable.",
        ),
    },
    "es": {
        "positive": (
            "Me encanta el nuevo panel, es mucho más rápido. ¡Buen trabajo!",
            "Gracias por arreglar la exportación tan rápido, ahora todo funciona.",
        ),
        "neutral": (
            "¿Cómo puedo cambiar el idioma de los informes?",
            "¿Hay alguna forma de invitar a un compañero a mi espacio?",
        ),
        "negative": (
            "El botón de exportar no funciona y perdí mi trabajo. Muy frustrante.",
            "La aplicación es muy lenta desde la última actualización.",
        ),
    },
    "pt": {
        "positive": (
            "Adorei o novo painel, ficou muito mais rápido. Parabéns!",
            "Obrigado pela correção rápida, agora tudo funciona perfeitamente.",
        ),
        "neutral": (
            "Como posso alterar o formato da data nos relatórios?",
            "Existe uma forma de convidar um colega para o meu espaço?",
        ),
        "negative": (
            "O botão de exportar não funciona e perdi o meu trabalho. Muito frustrante.",
            "O aplicativo está muito lento desde a última atualização.",
        ),
    },
}
AGENT_REPLIES = (
    "Thanks for writing in! We are looking into it and will get back to you shortly.",
    "Good news: a fix for this ships today. Let us know if it happens again.",
    "You can change this under Settings, then Preferences. Does that help?",
    "Sorry about that. I have refunded the duplicate charge.",
)
CUSTOMER_REPLIES = (
    "Thanks, that worked!",
    "It still happens on my phone, any update?",
    "Great, thank you for the quick answer.",
)
NOTES = (
    "Reproduced on staging, ticket filed.",
    "VIP customer, answer within the day.",
    "Duplicate of an earlier report, linked.",
)
FIRST_NAMES = (
    "Ana",
    "Ben",
    "Chloé",
    "Diego",
    "Emma",
    "Felipe",
    "Grace",
    "Hugo",
    "Inês",
    "João",
    "Kai",
    "Lena",
)
LAST_NAMES = ("Silva", "Smith", "García", "Müller", "Costa", "Brown", "Lopez", "Martin", "Santos", "Kim")
USER_AGENTS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Acme/4.2.0 (Android 15; Pixel 8)",
)
URLS = (
    "https://app.example.com/dashboard",
    "https://app.example.com/reports/export",
    "https://app.example.com/settings/billing",
    "https://app.example.com/login",
    None,
)

FEEDBACK_COLUMNS = (
    "id",
    "application_id",
    "member_id",
    "message",
    "sentiment",
    "sentiment_corrected",
    "archived",
    "nps",
    "url",
    "language",
    "ip_address",
    "user_agent",
    "properties",
    "first_reply_time",
    "last_reply_at",
    "created_at",
    "updated_at",
)
MEMBER_COLUMNS = ("id", "application_id", "email", "name", "created_at", "updated_at")
REPLY_COLUMNS = (
    "id",
    "application_id",
    "feedback_id",
    "user_id",
    "type",
    "message",
    "from_agent",
    "email",
    "created_at",
)
REPLY_CREATED_AT = REPLY_COLUMNS.index("created_at")
LINK_COLUMNS = ("id", "feedback_id", "tag_id")


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


class _Inserter:
    """Multi-row INSERT statements for one table, run with executemany in fixed-size groups."""

    def __init__(self, table: str, columns: tuple[str, ...], postgres: bool) -> None:
        self.table = table
        self.columns = columns
        self.postgres = postgres
        self.rows_per_statement = max(1, min(ROWS_PER_STATEMENT, MAX_VARIABLES // len(columns)))

    def statement(self, rows: int) -> str:
        return insert_statement(self.table, self.columns, rows, self.postgres)

    async def insert(self, conn: BaseDBAsyncClient, rows: list[tuple]) -> None:
        step = self.rows_per_statement
        full = len(rows) // step * step
        if full:
            values = [
                [value for row in rows[start : start + step] for value in row]
                for start in range(0, full, step)
            ]
            await conn.execute_many(self.statement(step), values)
        if full < len(rows):
            rest = rows[full:]
            await conn.execute_query(self.statement(len(rest)), [value for row in rest for value in row])


def _weighted(rng: random.Random, choices: tuple[tuple[str, float], ...], count: int) -> list[str]:
    return rng.choices([name for name, _ in choices], weights=[weight for _, weight in choices], k=count)


async def _max_id(conn: BaseDBAsyncClient, table: str) -> int:
    """The highest id the table has used. On SQLite that includes deleted rows (AUTOINCREMENT
    never reuses an id), which the search index relies on: it indexes ids above a watermark."""
    if conn.capabilities.dialect == "sqlite":
        sql = (
            f'SELECT MAX(COALESCE(MAX("id"), 0), COALESCE((SELECT "seq" FROM "sqlite_sequence" '
            f'WHERE "name" = \'{table}\'), 0)) AS "top" FROM "{table}"'
        )
    else:
        sql = f'SELECT COALESCE(MAX("id"), 0) AS "top" FROM "{table}"'
    rows = await conn.execute_query_dict(sql)
    return int(rows[0]["top"])


async def seed_application(application_id: int, threads: int, seed: int = 1) -> SeedReport:
    """Add ``threads`` realistic threads to an application, keeping every counter consistent."""
    if not 1 <= threads <= MAX_THREADS:
        raise ValidationError("The number of threads must be between 1 and %(max)d.", max=MAX_THREADS)
    application = await Application.filter(id=application_id).first()
    if application is None:
        raise NotFound("Invalid application")
    owner = await User.get(id=application.owner_id)
    started = time.perf_counter()
    rng = random.Random(seed)
    conn = connections.get("default")
    postgres = conn.capabilities.dialect == "postgres"
    report = SeedReport(application_id=application_id)

    tags = await ensure_tags(application_id, TAG_NAMES)
    tag_ids = [tag.id for tag in tags]
    report.tags = len(tag_ids)
    next_member = await _max_id(conn, "members")
    next_thread = await _max_id(conn, "feedback")
    next_reply = await _max_id(conn, "replies")
    next_link = await _max_id(conn, "feedback_tags")

    now = datetime.now(UTC).replace(microsecond=0)
    start = now - timedelta(days=SPAN_DAYS)
    span_seconds = SPAN_DAYS * DAY - 2 * DAY  # leaves room for replies before now

    members_inserter = _Inserter("members", MEMBER_COLUMNS, postgres)
    feedback_inserter = _Inserter("feedback", FEEDBACK_COLUMNS, postgres)
    replies_inserter = _Inserter("replies", REPLY_COLUMNS, postgres)
    links_inserter = _Inserter("feedback_tags", LINK_COLUMNS, postgres)

    # Senders: about one per four threads, so some write more than once.
    member_count = max(1, threads // 4)
    member_emails: list[str] = []
    first_member = next_member + 1
    for start_index in range(0, member_count, BATCH_THREADS * 5):
        rows = []
        for index in range(start_index, min(member_count, start_index + BATCH_THREADS * 5)):
            first = FIRST_NAMES[index % len(FIRST_NAMES)]
            last = LAST_NAMES[(index // len(FIRST_NAMES)) % len(LAST_NAMES)]
            member_id = first_member + index
            email = f"{first.lower()}.{last.lower()}{member_id}@example.org"
            member_emails.append(email)
            rows.append((member_id, application_id, email, f"{first} {last}", start, start))
        async with in_transaction() as tx:
            await members_inserter.insert(tx, rows)
    report.members = member_count

    pools: dict[tuple[str, str], tuple[str, ...]] = {
        (language, label): texts
        for language, by_label in MESSAGES.items()
        for label, texts in by_label.items()
    }
    properties_pool = [
        json.dumps(
            {"plan": plan, "app_version": f"{major}.{minor}.0", "seats": seats},
        )
        for plan in ("free", "team", "enterprise")
        for major in (3, 4)
        for minor in range(4)
        for seats in (1, 5, 25)
    ] + ["[]"]
    ips = [f"203.0.113.{n}" for n in range(1, 255)] + [f"2001:db8::{n:x}" for n in range(1, 64)]
    tag_open = dict.fromkeys(tag_ids, 0)
    tag_archived = dict.fromkeys(tag_ids, 0)
    first_reply_total = 0
    first_reply_count = 0
    replies_per_day: Counter[date] = Counter()
    step = span_seconds / threads

    for batch_start in range(0, threads, BATCH_THREADS):
        size = min(BATCH_THREADS, threads - batch_start)
        languages = _weighted(rng, LANGUAGES, size)
        labels = _weighted(rng, SENTIMENTS, size)
        feedback_rows: list[tuple] = []
        reply_rows: list[tuple] = []
        link_rows: list[tuple] = []
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
            last_reply_at = created
            first_reply_time = None
            # Replies: 45 % of threads get an agent reply, some a note, some an answer back.
            if roll < 0.45:
                moment = created
                wait = int(60 + random_() * random_() * DAY)
                kinds = ["reply"]
                if roll < 0.12:
                    kinds.insert(0, "note")
                if roll < 0.2:
                    kinds.append("customer")
                if roll < 0.05:
                    kinds.append("reply")
                for kind in kinds:
                    moment = moment + timedelta(seconds=wait)
                    wait = int(60 + random_() * 3 * 3600)
                    next_reply += 1
                    if kind == "customer":
                        reply_rows.append(
                            (
                                next_reply,
                                application_id,
                                thread_id,
                                None,
                                "reply",
                                CUSTOMER_REPLIES[next_reply % len(CUSTOMER_REPLIES)],
                                False,
                                member_emails[member_index],
                                moment,
                            )
                        )
                    else:
                        text = (NOTES if kind == "note" else AGENT_REPLIES)[next_reply % 3]
                        reply_rows.append(
                            (
                                next_reply,
                                application_id,
                                thread_id,
                                owner.id,
                                kind,
                                text,
                                True,
                                owner.email,
                                moment,
                            )
                        )
                        if kind == "note":
                            report.notes += 1
                        elif first_reply_time is None:
                            first_reply_time = int((moment - created).total_seconds())
                            first_reply_total += first_reply_time
                            first_reply_count += 1
                last_reply_at = moment
            texts = pools[(language, label)]
            message = texts[index % len(texts)]
            nps = int(random_() * 11) if random_() < NPS_SHARE else None
            feedback_rows.append(
                (
                    thread_id,
                    application_id,
                    member_id,
                    message,
                    label,
                    False,
                    archived,
                    nps,
                    URLS[index % len(URLS)],
                    language,
                    ips[index % len(ips)],
                    USER_AGENTS[index % len(USER_AGENTS)],
                    properties_pool[index % len(properties_pool)],
                    first_reply_time,
                    last_reply_at,
                    created,
                    last_reply_at,
                )
            )
            # Tags: none for 40 %, then one to three distinct tags.
            tag_roll = random_()
            if tag_roll >= 0.4:
                count = 1 if tag_roll < 0.75 else (2 if tag_roll < 0.92 else 3)
                for tag_id in rng.sample(tag_ids, count):
                    next_link += 1
                    link_rows.append((next_link, thread_id, tag_id))
                    if archived:
                        tag_archived[tag_id] += 1
                    else:
                        tag_open[tag_id] += 1
            if archived:
                report.archived += 1
        async with in_transaction() as tx:
            await feedback_inserter.insert(tx, feedback_rows)
            await replies_inserter.insert(tx, reply_rows)
            await links_inserter.insert(tx, link_rows)
        report.threads += size
        report.replies += len(reply_rows)
        replies_per_day.update(row[REPLY_CREATED_AT].astimezone(UTC).date() for row in reply_rows)
        report.tag_links += len(link_rows)

    async with in_transaction() as tx:
        placeholders = (lambda n: f"${n}") if postgres else (lambda n: "?")
        await tx.execute_query(
            "UPDATE applications SET "
            f"open_threads = open_threads + {placeholders(1)}, "
            f"archived_threads = archived_threads + {placeholders(2)}, "
            f"reply_count = reply_count + {placeholders(3)}, "
            f"first_reply_total = first_reply_total + {placeholders(4)}, "
            f"first_reply_count = first_reply_count + {placeholders(5)} "
            f"WHERE id = {placeholders(6)}",
            [
                report.threads - report.archived,
                report.archived,
                report.replies,
                first_reply_total,
                first_reply_count,
                application_id,
            ],
        )
        for day, count in sorted(replies_per_day.items()):
            await tx.execute_query(
                "INSERT INTO reply_days (application_id, day, count) "
                f"VALUES ({placeholders(1)}, {placeholders(2)}, {placeholders(3)}) "
                "ON CONFLICT (application_id, day) DO UPDATE SET count = reply_days.count + excluded.count",
                [application_id, date_parameter(day), count],
            )
        for tag_id in tag_ids:
            await tx.execute_query(
                f"UPDATE tags SET open_count = open_count + {placeholders(1)}, "
                f"archived_count = archived_count + {placeholders(2)} WHERE id = {placeholders(3)}",
                [tag_open[tag_id], tag_archived[tag_id], tag_id],
            )
        if postgres:
            for table in ("members", "feedback", "replies", "feedback_tags"):
                await tx.execute_query(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f'(SELECT COALESCE(MAX("id"), 1) FROM "{table}"))'
                )
    if postgres:
        await conn.execute_script("ANALYZE members, feedback, replies, feedback_tags, tags")
    else:
        await index_new_rows(batch=100_000)
        await conn.execute_script("ANALYZE")
    report.counters = {"first_reply_total": first_reply_total, "first_reply_count": first_reply_count}
    report.seconds = time.perf_counter() - started
    return report
