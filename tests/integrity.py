"""Recount every counter Earful keeps on write from the raw tables, and find files without rows.

The counters (app.services.counters) are never recomputed by the product; these checks are how
the tests prove that every writer moved them exactly.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date

from app.models import Application, Attachment, Feedback, FeedbackTag, Reply, ReplyDay, Tag
from app.services.storage import LOGOS, UPLOADS, Storage, logo_key, upload_key


async def counter_mismatches() -> list[str]:
    """Every stored counter that differs from a count of the rows it counts (empty when exact)."""
    problems: list[str] = []
    threads = await Feedback.all().values_list("id", "application_id", "archived", "first_reply_time")
    archived_of = {row[0]: bool(row[2]) for row in threads}
    replies = await Reply.all().values_list("application_id", "created_at")
    for application in await Application.all():
        own = [row for row in threads if row[1] == application.id]
        expected = {
            "open_threads": sum(1 for row in own if not row[2]),
            "archived_threads": sum(1 for row in own if row[2]),
            "reply_count": sum(1 for row in replies if row[0] == application.id),
            "first_reply_total": sum(row[3] for row in own if row[3] is not None),
            "first_reply_count": sum(1 for row in own if row[3] is not None),
        }
        for name, value in expected.items():
            if getattr(application, name) != value:
                problems.append(
                    f"application {application.id} {name}: {getattr(application, name)} != {value}"
                )
        days: Counter[date] = Counter(
            moment.astimezone(UTC).date() for owner, moment in replies if owner == application.id
        )
        stored = {
            day: count
            for day, count in await ReplyDay.filter(application_id=application.id).values_list("day", "count")
            if count
        }
        if stored != dict(days):
            problems.append(f"application {application.id} reply days: {stored} != {dict(days)}")
    links = await FeedbackTag.all().values_list("tag_id", "feedback_id")
    for tag in await Tag.all():
        linked = [archived_of[feedback_id] for tag_id, feedback_id in links if tag_id == tag.id]
        counts = (sum(1 for a in linked if not a), sum(1 for a in linked if a))
        if (tag.open_count, tag.archived_count) != counts:
            problems.append(f"tag {tag.id}: {(tag.open_count, tag.archived_count)} != {counts}")
    return problems


async def files_without_rows(storage: Storage) -> list[str]:
    """The keys of the uploads and logos in the storage (files under the data dir, or objects in
    the bucket) that no row names."""
    known = {
        upload_key(application_id, name)
        for application_id, name in await Attachment.all().values_list("application_id", "storage_name")
    }
    known |= {
        logo_key(application_id, name)
        for application_id, name in await Application.exclude(logo_name=None).values_list("id", "logo_name")
    }
    return [key for folder in (UPLOADS, LOGOS) for key in await storage.keys(folder) if key not in known]
