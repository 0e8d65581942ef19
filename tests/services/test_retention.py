"""Retention: an application's threads older than some days go by themselves, counters exact."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from app.db import atomic
from app.errors import Forbidden, ValidationError
from app.models import Attachment, AuditEntry, Feedback
from app.repositories.applications import ApplicationRow
from app.repositories.threads import ThreadRow
from app.services import feedback, retention
from app.services.applications import update_application
from app.services.attachments import store_uploads
from app.services.files import IncomingFile
from app.services.storage import LocalStorage
from app.workers import run_retention
from tests.factories import (
    application_row,
    make_application,
    make_organization,
    make_reply,
    make_thread,
    make_user,
)
from tests.integrity import counter_mismatches, files_without_rows

NOW = datetime.now(UTC)


async def _aged(thread: ThreadRow, days: float) -> ThreadRow:
    """The thread, as if it had been created ``days`` ago."""
    await atomic(lambda: Feedback.filter(id=thread.id).update(created_at=NOW - timedelta(days=days)))
    return thread


async def _archived(application: ApplicationRow, thread: ThreadRow) -> ThreadRow:
    return await feedback.set_archived(application, await feedback.get_thread(application, thread.id), True)


async def _remaining(application: ApplicationRow) -> set[int]:
    return set(await Feedback.filter(application_id=application.id).values_list("id", flat=True))


# Validation


@pytest.mark.parametrize(
    ("sent", "stored"),
    [(None, None), ("", None), ("  ", None), ("30", 30), (1, 1), (3650, 3650), (" 7 ", 7)],
)
def test_retention_days_are_off_or_between_1_and_3650(sent, stored):
    assert retention.clean_retention_fields({"retention_days": sent}) == {"retention_days": stored}


@pytest.mark.parametrize(
    ("sent", "message"),
    [
        (0, "The retention days field must be between 1 and %(max)d."),
        (3651, "The retention days field must be between 1 and %(max)d."),
        ("-5", "The retention days field must be between 1 and %(max)d."),
        ("thirty", "The retention days field must be an integer."),
        (True, "The retention days field must be an integer."),
        (2.5, "The retention days field must be an integer."),
        ([30], "The retention days field must be an integer."),
    ],
)
def test_other_retention_days_are_refused(sent, message):
    with pytest.raises(ValidationError) as refused:
        retention.clean_retention_fields({"retention_days": sent})

    assert refused.value.message == message


@pytest.mark.parametrize(("sent", "stored"), [(True, True), ("false", False), ("1", True), (0, False)])
def test_archived_only_is_a_boolean(sent, stored):
    assert retention.clean_retention_fields({"retention_archived_only": sent}) == {
        "retention_archived_only": stored
    }


def test_archived_only_refuses_other_values():
    with pytest.raises(ValidationError, match="retention archived only field must be true or false"):
        retention.clean_retention_fields({"retention_archived_only": "sometimes"})


def test_fields_not_sent_are_left_alone():
    assert retention.clean_retention_fields({"name": "Shop"}) == {}


async def test_an_application_is_created_with_retention_off(db):
    application = await make_application(await make_user())

    assert (application.retention_days, application.retention_archived_only) == (None, False)


async def test_retention_is_set_on_create_and_switched_off_on_update(db, tmp_path):
    user = await make_user()
    application = await make_application(user, retention_days="90", retention_archived_only="true")
    assert (application.retention_days, application.retention_archived_only) == (90, True)

    updated = await update_application(
        user, application, {"retention_days": ""}, None, LocalStorage(tmp_path)
    )

    assert (updated.retention_days, updated.retention_archived_only) == (None, True)


async def test_a_refused_update_writes_nothing(db, tmp_path):
    user = await make_user()
    application = await make_application(user, retention_days=30)

    with pytest.raises(ValidationError):
        await update_application(
            user, application, {"name": "Renamed", "retention_days": 0}, None, LocalStorage(tmp_path)
        )

    stored = await application_row(application.id)
    assert (stored.name, stored.retention_days) == (application.name, 30)


async def test_only_administrators_change_retention(db, tmp_path):
    owner, agent = await make_user(), await make_user()
    organization = await make_organization(agent, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id)

    with pytest.raises(Forbidden):
        await update_application(agent, application, {"retention_days": 30}, None, LocalStorage(tmp_path))
    with pytest.raises(Forbidden):
        await update_application(
            agent, application, {"retention_archived_only": False}, None, LocalStorage(tmp_path)
        )
    await update_application(agent, application, {"name": "Renamed"}, None, LocalStorage(tmp_path))
    await update_application(owner, application, {"retention_days": 30}, None, LocalStorage(tmp_path))

    assert (await application_row(application.id)).retention_days == 30


# The count of the next run


async def test_due_count_counts_the_threads_older_than_the_days(db):
    application = await make_application(await make_user(), retention_days=30)
    for days in (31, 45, 400):
        await _aged(await make_thread(application), days)
    await _aged(await make_thread(application), 29)
    await make_thread(application)

    assert await retention.due_count(application, NOW) == 3


async def test_due_count_of_archived_only_counts_old_archived_threads(db):
    application = await make_application(await make_user(), retention_days=30, retention_archived_only=True)
    await _archived(application, await _aged(await make_thread(application), 40))
    await _aged(await make_thread(application), 40)
    await _archived(application, await make_thread(application))

    assert await retention.due_count(application, NOW) == 1


async def test_due_count_is_zero_when_retention_is_off(db):
    application = await make_application(await make_user())
    await _aged(await make_thread(application), 4000)

    assert await retention.due_count(application, NOW) == 0


# Runs


async def test_a_run_deletes_the_old_threads_in_batches(db, tmp_path):
    application = await make_application(await make_user(), retention_days=30)
    old = [await _aged(await make_thread(application), 31 + n) for n in range(5)]
    kept = {(await make_thread(application)).id, (await _aged(await make_thread(application), 29)).id}

    deleted = await retention.apply_retention(LocalStorage(tmp_path), NOW, batch=2, pause=0)

    assert deleted == {application.id: len(old)}
    assert await _remaining(application) == kept
    stored = await application_row(application.id)
    assert (stored.open_threads, stored.archived_threads) == (2, 0)
    assert await retention.due_count(stored, NOW) == 0


async def test_archived_only_keeps_old_threads_still_open(db, tmp_path):
    application = await make_application(await make_user(), retention_days=30, retention_archived_only=True)
    doomed = await _archived(application, await _aged(await make_thread(application), 40))
    open_old = await _aged(await make_thread(application), 40)
    recent = await _archived(application, await make_thread(application))

    await retention.apply_retention(LocalStorage(tmp_path), NOW, pause=0)

    assert await _remaining(application) == {open_old.id, recent.id}
    assert not await Feedback.filter(id=doomed.id).exists()
    stored = await application_row(application.id)
    assert (stored.open_threads, stored.archived_threads) == (1, 1)


async def test_a_thread_unarchived_after_the_pick_is_kept(db, tmp_path, monkeypatch):
    application = await make_application(await make_user(), retention_days=30, retention_archived_only=True)
    doomed = await _archived(application, await _aged(await make_thread(application), 40))
    reopened = await _aged(await make_thread(application), 40)  # archived when picked, open since
    pick = retention.statements.oldest_thread_ids
    picks = iter([[doomed.id, reopened.id]])

    async def picked_before_the_unarchive(*args: object) -> list[int]:
        return next(picks, None) or await pick(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(retention.statements, "oldest_thread_ids", picked_before_the_unarchive)
    deleted = await retention.apply_retention(LocalStorage(tmp_path), NOW, pause=0)

    assert deleted == {application.id: 1}
    assert await _remaining(application) == {reopened.id}
    assert await counter_mismatches() == []


async def test_counters_are_exact_after_a_run(db, tmp_path):
    user = await make_user(plan="team")  # with internal notes
    application = await make_application(user, retention_days=10)
    for number in range(7):
        thread = await make_thread(application, tags=["billing", f"t{number % 2}"])
        await make_reply(user, application, thread)
        await make_reply(user, application, thread, type="note")
        if number % 3 == 0:
            await _archived(application, thread)
        await _aged(thread, 5 if number % 2 else 11)  # after the replies: their first-reply times stay

    await retention.apply_retention(LocalStorage(tmp_path), NOW, batch=3, pause=0)

    assert await counter_mismatches() == []
    stored = await application_row(application.id)
    assert stored.open_threads + stored.archived_threads == 3
    assert (stored.reply_count, stored.first_reply_count) == (6, 3)


async def test_a_run_removes_the_files_of_the_threads_it_deletes(db, storage):
    application = await make_application(await make_user(), uploads_enabled=True, retention_days=30)
    uploads = [
        upload
        for _ in range(2)
        for upload in await store_uploads(storage, application, [IncomingFile("steps.txt", b"steps")], 10**6)
    ]
    await _aged(await make_thread(application, attachments=[uploads[0]]), 31)
    kept = await make_thread(application, attachments=[uploads[1]])

    await retention.apply_retention(storage, NOW, pause=0)

    assert len(await storage.keys(f"uploads/{application.id}")) == 1
    assert await Attachment.filter(application_id=application.id).values_list("feedback_id", flat=True) == [
        kept.id
    ]
    assert await files_without_rows(storage) == []


async def test_a_run_writes_one_audit_entry_per_application_without_personal_data(db, tmp_path):
    application = await make_application(await make_user(), retention_days=30)
    for _ in range(3):
        await _aged(await make_thread(application, email="jane.doe@example.org", name="Jane Doe"), 31)

    await retention.apply_retention(LocalStorage(tmp_path), NOW, batch=2, pause=0)

    [entry] = await AuditEntry.all()
    assert (entry.actor_id, entry.application_id, entry.action) == (None, application.id, "retention.run")
    assert entry.counts == {"threads": 3}
    assert entry.created_at == NOW.replace(microsecond=entry.created_at.microsecond)
    recorded = str(await AuditEntry.all().values())
    assert "jane" not in recorded.lower() and "example.org" not in recorded


async def test_a_run_that_deletes_nothing_writes_no_audit_entry(db, tmp_path):
    application = await make_application(await make_user(), retention_days=30)
    await make_thread(application)

    assert await retention.apply_retention(LocalStorage(tmp_path), NOW, pause=0) == {}

    assert await AuditEntry.all().count() == 0


async def test_other_applications_are_untouched(db, tmp_path):
    user = await make_user()
    application = await make_application(user, retention_days=30)
    without = await make_application(user)
    longer = await make_application(await make_user(), retention_days=365)
    await _aged(await make_thread(application), 100)
    kept = {
        (await _aged(await make_thread(without), 100)).id,
        (await _aged(await make_thread(longer), 100)).id,
    }

    deleted = await retention.apply_retention(LocalStorage(tmp_path), NOW, pause=0)

    assert deleted == {application.id: 1}
    assert set(await Feedback.all().values_list("id", flat=True)) == kept
    assert (await application_row(without.id)).open_threads == 1
    assert (await application_row(longer.id)).open_threads == 1
    assert [entry.application_id for entry in await AuditEntry.all()] == [application.id]


async def test_two_runs_at_once_delete_and_count_every_thread_once(db, tmp_path):
    user = await make_user()
    application = await make_application(user, retention_days=30)
    for number in range(12):
        thread = await make_thread(application, tags=["billing"])
        if number % 4 == 0:
            await make_reply(user, application, thread)
        if number % 3 == 0:
            await _archived(application, thread)
        await _aged(thread, 31)
    kept = await make_thread(application, tags=["billing"])

    first, second = await asyncio.gather(
        retention.apply_retention(LocalStorage(tmp_path), NOW, batch=2, pause=0),
        retention.apply_retention(LocalStorage(tmp_path), NOW, batch=2, pause=0),
    )

    assert first.get(application.id, 0) + second.get(application.id, 0) == 12
    assert await _remaining(application) == {kept.id}
    assert await counter_mismatches() == []
    audited = [entry.counts["threads"] for entry in await AuditEntry.filter(application_id=application.id)]
    assert sum(audited) == 12


async def test_a_run_pauses_between_batches(db, tmp_path):
    application = await make_application(await make_user(), retention_days=30)
    for _ in range(5):
        await _aged(await make_thread(application), 31)
    loop = asyncio.get_running_loop()
    started = loop.time()

    await retention.apply_retention(LocalStorage(tmp_path), NOW, batch=2, pause=0.2)

    assert loop.time() - started >= 0.4  # two pauses: after the first and the second full batch


def test_the_cutoff_is_the_days_before_now():
    application = ApplicationRow.__new__(ApplicationRow)
    application.retention_days = 30

    assert retention.cutoff(application, NOW) == NOW - timedelta(days=30)


async def test_the_background_worker_runs_retention_while_serving(db, settings):
    application = await make_application(await make_user(), retention_days=30)
    old = await _aged(await make_thread(application), 31)
    stop = asyncio.Event()

    worker = asyncio.create_task(run_retention(settings, stop, first_delay=0))
    for _ in range(100):
        if not await Feedback.exists(id=old.id):
            break
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(worker, 5)

    assert not await Feedback.exists(id=old.id)
    assert await AuditEntry.filter(application_id=application.id).count() == 1
