"""A random sequence of every kind of write (creates, replies, customer answers, archives, tags,
deletions, retention runs, erasures, bulk actions by ids and by filter), then every counter
recounted from the raw tables.

Each kind of write has its own tests; this one looks for the interactions between them (a
reply on a thread archived, then deleted; a tag deleted under archived threads...). The seeds
are fixed, so a failure replays; the sequence is printed when one does.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import pytest

from app.db import transactional
from app.models import Application, Feedback, Tag
from app.repositories.applications import ApplicationRow
from app.services import bulk, deletion, erasure, feedback, replies, retention, tags
from app.services.attachments import store_uploads
from app.services.files import IncomingFile
from app.services.storage import LocalStorage, Storage
from app.services.thread_filters import ThreadFilters
from tests.factories import application_row, make_application, make_thread, make_user
from tests.integrity import counter_mismatches, files_without_rows

STEPS = 120
TAG_NAMES = ("billing", "ui", "export", "login", "mobile")
SENDERS = tuple(f"customer{number}@example.org" for number in range(6))


class Scenario:
    """Applications of one team, and one random write at a time on them."""

    def __init__(self, rng: random.Random, storage: Storage) -> None:
        self.rng = rng
        self.storage = storage
        self.applications: list[ApplicationRow] = []
        self.log: list[str] = []

    async def start(self) -> None:
        self.agent = await make_user(plan="team")
        for _ in range(2):
            self.applications.append(await make_application(self.agent, uploads_enabled=True))

    async def _application(self) -> ApplicationRow:
        return await application_row(self.rng.choice(self.applications).id)

    async def _thread_ids(self, application: ApplicationRow) -> list[int]:
        return list(await Feedback.filter(application_id=application.id).values_list("id", flat=True))

    async def _upload(self, application: ApplicationRow) -> list[int]:
        if self.rng.random() < 0.7:
            return []
        files = [IncomingFile("steps.txt", b"steps to reproduce")]
        return await store_uploads(self.storage, application, files, 10**6)

    async def submit(self, application: ApplicationRow) -> None:
        names = self.rng.sample(TAG_NAMES, self.rng.randint(0, 3))
        await make_thread(
            application,
            email=self.rng.choice(SENDERS),
            tags=names,
            attachments=await self._upload(application),
        )

    async def reply(self, application: ApplicationRow, feedback_id: int) -> None:
        thread = await feedback.get_thread(application, feedback_id)
        kind = self.rng.choice(("reply", "reply", "note"))
        await replies.create_agent_reply(self.agent, application, thread, "We are on it.", kind)

    async def answer(self, application: ApplicationRow, feedback_id: int) -> None:
        thread = await feedback.get_thread(application, feedback_id)
        attachments = await self._upload(application)
        await replies.add_customer_reply(
            application, thread, self.rng.choice(SENDERS), "Still broken.", attachments
        )

    async def archive(self, application: ApplicationRow, feedback_id: int) -> None:
        thread = await feedback.get_thread(application, feedback_id)
        await feedback.set_archived(application, thread, not thread.archived)

    async def tag(self, application: ApplicationRow, feedback_id: int) -> None:
        thread = await feedback.get_thread(application, feedback_id)
        await tags.add_tag_to_thread(application, thread, self.rng.choice(TAG_NAMES))

    async def untag(self, application: ApplicationRow, feedback_id: int) -> None:
        thread = await feedback.get_thread(application, feedback_id)
        linked = await tags.tags_of_threads([feedback_id])
        if linked.get(feedback_id):
            await tags.remove_tag_from_thread(application, thread, self.rng.choice(linked[feedback_id]).id)

    async def delete(self, application: ApplicationRow, feedback_id: int) -> None:
        ids = await self._thread_ids(application)
        chosen = {feedback_id, *self.rng.sample(ids, min(len(ids), self.rng.randint(0, 3)))}
        await deletion.delete_threads(application, sorted(chosen), self.storage)

    async def delete_tag(self, application: ApplicationRow, _: int) -> None:
        found = await Tag.filter(application_id=application.id).values_list("id", flat=True)
        if found:
            await deletion.delete_tag(self.agent, application, self.rng.choice(list(found)))

    async def age(self, application: ApplicationRow, feedback_id: int) -> None:
        """Make a thread old enough for retention (writes are only ever new)."""
        days = self.rng.choice((10, 40, 400))

        @transactional
        async def back_date() -> None:
            await Feedback.filter(id=feedback_id).update(created_at=datetime.now(UTC) - timedelta(days=days))

        await back_date()

    async def retain(self, application: ApplicationRow, _: int) -> None:
        archived_only = self.rng.random() < 0.5

        @transactional
        async def switch_on() -> None:
            await Application.filter(id=application.id).update(
                retention_days=30, retention_archived_only=archived_only
            )

        await switch_on()
        await retention.apply_retention(self.storage, datetime.now(UTC), batch=3, pause=0)

    async def erase(self, application: ApplicationRow, _: int) -> None:
        await erasure.erase_person(None, self.rng.choice(SENDERS), storage=self.storage)

    async def bulk(self, application: ApplicationRow, feedback_id: int) -> None:
        """A bulk action on a few threads by id, or on every thread matching a filter, in small
        batches (the module's BATCH is lowered by the test)."""
        action = self.rng.choice(bulk.ACTIONS)
        if self.rng.random() < 0.5:
            ids = await self._thread_ids(application)
            chosen = {feedback_id, *self.rng.sample(ids, min(len(ids), self.rng.randint(0, 5)))}
            selection = bulk.Selection.of_ids(sorted(chosen))
        else:
            filters = ThreadFilters(
                archived=self.rng.random() < 0.4,
                tag=self.rng.choice((None, *TAG_NAMES)),
                sentiment=self.rng.choice((None, "negative", "positive")),
            )
            selection = bulk.Selection.matching(filters)
        self.log.append(f"  bulk {action} {selection}")
        await bulk.run(
            self.agent,
            application,
            action,
            selection,
            self.storage,
            tag=self.rng.choice(TAG_NAMES),
            assignee_id=self.rng.choice((None, self.agent.id)),
        )

    async def step(self) -> None:
        application = await self._application()
        ids = await self._thread_ids(application)
        if not ids or self.rng.random() < 0.25:
            self.log.append(f"submit to {application.id}")
            await self.submit(application)
            return
        actions: list[Callable[[ApplicationRow, int], Awaitable[None]]] = [
            self.reply,
            self.reply,
            self.answer,
            self.archive,
            self.archive,
            self.tag,
            self.untag,
            self.delete,
            self.delete_tag,
            self.age,
            self.age,
            self.retain,
            self.erase,
            self.bulk,
            self.bulk,
        ]
        action = self.rng.choice(actions)
        feedback_id = self.rng.choice(ids)
        self.log.append(f"{action.__name__} {application.id}/{feedback_id}")
        await action(application, feedback_id)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_counters_equal_a_recount_after_random_writes(db, tmp_path, seed, monkeypatch):
    monkeypatch.setattr(bulk, "BATCH", 2)  # several batches, each its own transaction
    scenario = Scenario(random.Random(seed), LocalStorage(tmp_path))
    await scenario.start()

    for _ in range(STEPS):
        await scenario.step()

    assert await counter_mismatches() == [], scenario.log
    assert await files_without_rows(scenario.storage) == [], scenario.log
