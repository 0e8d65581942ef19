"""Uploads: unguessable ids, so nobody claims another visitor's upload, and uploads no thread
claimed are deleted, files too, after a day (from the data dir and from a bucket)."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime, timedelta

import pytest

from app.config import Quotas, Settings
from app.db import atomic
from app.errors import PayloadTooLarge, ValidationError
from app.models import Attachment, UploadDay
from app.services.attachments import (
    MAX_ATTACHMENT_ID,
    UNCLAIMED_LIFETIME,
    attachment_key,
    check_daily_quota,
    delete_unclaimed,
    forget_past_upload_days,
    store_uploads,
)
from app.services.deletion import delete_thread
from app.services.files import IncomingFile
from app.services.replies import list_replies
from app.services.storage import Storage, storage_for
from app.workers import run_housekeeping
from tests.factories import make_application, make_reply, make_thread, make_user
from tests.integrity import files_without_rows


@pytest.fixture
def disk(settings: Settings) -> Storage:
    """The data dir, for the tests of rules that do not depend on where the files are."""
    return storage_for(settings)


def files(*names: str) -> list[IncomingFile]:
    return [IncomingFile(name, f"content of {name}".encode()) for name in names]


async def test_upload_ids_are_random_and_safe_in_javascript(db, application, disk):
    ids = [
        attachment_id
        for _ in range(10)
        for attachment_id in await store_uploads(disk, application, files("a.txt", "b.txt"), 1000)
    ]

    assert all(1 <= attachment_id <= MAX_ATTACHMENT_ID for attachment_id in ids)
    assert len(set(ids)) == 20
    differences = {abs(later - earlier) for earlier, later in itertools.pairwise(ids)}
    assert 1 not in differences
    assert max(ids) > 2**32  # drawn from the whole range, not counted up


async def test_the_next_id_after_ones_own_upload_names_nobody_elses(db, application, disk):
    [mine] = await store_uploads(disk, application, files("mine.txt"), 1000)
    [visitors] = await store_uploads(disk, application, files("theirs.txt"), 1000)

    assert visitors not in (mine - 1, mine + 1)
    thread = await make_thread(application, attachments=[visitors])
    assert (await Attachment.get(id=visitors)).feedback_id == thread.id


async def test_attachments_keep_the_order_they_were_uploaded_in(db, agent, application, disk):
    ids = await store_uploads(disk, application, files(*(f"{n}.txt" for n in range(8))), 1000)
    thread = await make_thread(application, attachments=ids)
    reply = await make_reply(agent, application, thread)
    await atomic(lambda: Attachment.filter(id__in=ids[4:]).update(feedback_id=None, reply_id=reply.id))

    listed = await list_replies(application, None)

    names = [attachment.name for attachment in listed.attachments[reply.id]]
    assert names == ["4.txt", "5.txt", "6.txt", "7.txt"]


async def test_the_replies_list_reads_the_files_of_its_own_page_only(db, agent, application, disk):
    thread = await make_thread(application)
    older, newer = await make_reply(agent, application, thread), await make_reply(agent, application, thread)
    for reply in (older, newer):
        [upload] = await store_uploads(disk, application, files(f"{reply.id}.txt"), 1000)
        claimed = Attachment.filter(id=upload)
        await atomic(lambda claimed=claimed, reply=reply: claimed.update(reply_id=reply.id))

    second_page = await list_replies(application, None, limit=1, offset=1)

    assert [reply.id for reply in second_page.replies] == [older.id]
    listed = {reply_id: [file.name for file in found] for reply_id, found in second_page.attachments.items()}
    assert listed == {older.id: [f"{older.id}.txt"]}


async def test_uploads_never_claimed_go_after_a_day_with_their_files(db, application, storage):
    [old, recent, claimed] = await store_uploads(
        storage, application, files("old.txt", "recent.txt", "claimed.txt"), 1000
    )
    await make_thread(application, attachments=[claimed])
    day_ago = datetime.now(UTC) - UNCLAIMED_LIFETIME - timedelta(minutes=1)
    await atomic(lambda: Attachment.filter(id__in=[old, claimed]).update(created_at=day_ago))
    old_file = attachment_key(await Attachment.get(id=old))

    assert await delete_unclaimed(storage) == 1

    assert sorted(await Attachment.all().values_list("id", flat=True)) == sorted([recent, claimed])
    assert not await storage.exists(old_file)
    for kept in await Attachment.all():
        assert await storage.exists(attachment_key(kept))


async def test_two_cleaners_at_once_delete_each_upload_once(db, application, storage):
    ids = await store_uploads(storage, application, files("a.txt", "b.txt", "c.txt"), 1000)
    await atomic(
        lambda: Attachment.filter(id__in=ids).update(created_at=datetime.now(UTC) - timedelta(days=2))
    )

    counts = await asyncio.gather(*(delete_unclaimed(storage) for _ in range(3)))

    assert sum(counts) == 3
    assert await Attachment.all().count() == 0


async def test_a_submit_naming_a_deleted_upload_is_invalid_attachments(api, application, disk):
    [upload] = await store_uploads(disk, application, files("late.txt"), 1000)
    await atomic(
        lambda: Attachment.filter(id=upload).update(created_at=datetime.now(UTC) - timedelta(days=2))
    )
    await delete_unclaimed(disk)

    response = await api.post(
        f"/applications/{application.id}/submit?key={application.key_api}",
        json={"email": "a@b.co", "message": "hello there", "attachments": [upload]},
    )

    assert response.status_code == 400
    assert await response.get_data(as_text=True) == "Invalid attachments"


async def test_housekeeping_deletes_old_uploads_while_serving(db, settings):
    application = await make_application(await make_user())
    [upload] = await store_uploads(storage_for(settings), application, files("old.txt"), 1000)
    await atomic(
        lambda: Attachment.filter(id=upload).update(created_at=datetime.now(UTC) - timedelta(days=2))
    )
    stop = asyncio.Event()

    worker = asyncio.create_task(run_housekeeping(settings, stop, interval=3600, first_delay=0))
    for _ in range(100):
        if not await Attachment.exists(id=upload):
            break
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(worker, 5)

    assert not await Attachment.exists(id=upload)


async def test_more_files_than_the_quota_in_one_upload_are_refused_and_none_written(db, application, storage):
    names = [f"{n}.txt" for n in range(Quotas().files_per_upload + 1)]

    with pytest.raises(ValidationError, match="Too many files"):
        await store_uploads(storage, application, files(*names), 1000)

    assert not await Attachment.exists()
    assert await storage.keys("uploads") == []


async def test_uploads_past_the_days_quota_are_refused_and_none_written(db, application, storage):
    quotas = Quotas(upload_bytes_per_day=100)
    await store_uploads(storage, application, [IncomingFile("a.bin", b"x" * 60)], 1000, quotas)

    with pytest.raises(PayloadTooLarge, match="Upload quota exceeded for today"):
        await store_uploads(storage, application, [IncomingFile("b.bin", b"x" * 41)], 1000, quotas)

    assert await Attachment.all().count() == 1
    assert len(await storage.keys(f"uploads/{application.id}")) == 1


async def test_files_claimed_by_todays_threads_count_toward_the_quota(db, application, disk):
    quotas = Quotas(upload_bytes_per_day=100)
    ids = await store_uploads(disk, application, [IncomingFile("a.bin", b"x" * 60)], 1000, quotas)
    await make_thread(application, attachments=ids)

    with pytest.raises(PayloadTooLarge):
        await check_daily_quota(application.id, 41, quotas)
    await check_daily_quota(application.id, 40, quotas)


async def test_yesterdays_uploads_do_not_count_toward_todays_quota(db, application, disk):
    quotas = Quotas(upload_bytes_per_day=100)
    ids = await store_uploads(disk, application, [IncomingFile("a.bin", b"x" * 60)], 1000, quotas)
    await make_thread(application, attachments=ids)

    await check_daily_quota(application.id, 100, quotas, now=datetime.now(UTC) + timedelta(days=1))


async def test_another_applications_uploads_do_not_count_toward_the_quota(db, agent, application, disk):
    quotas = Quotas(upload_bytes_per_day=100)
    other = await make_application(agent)
    await store_uploads(disk, other, [IncomingFile("a.bin", b"x" * 100)], 1000, quotas)

    await check_daily_quota(application.id, 100, quotas)


async def test_files_deleted_later_still_count_toward_the_days_quota(db, application, disk):
    quotas = Quotas(upload_bytes_per_day=100)
    ids = await store_uploads(disk, application, [IncomingFile("a.bin", b"x" * 60)], 1000, quotas)
    thread = await make_thread(application, attachments=ids)
    await delete_thread(application, thread.id, disk)

    with pytest.raises(PayloadTooLarge):
        await check_daily_quota(application.id, 41, quotas)


async def test_concurrent_uploads_cannot_both_take_the_last_room_in_the_quota(db, application, disk):
    quotas = Quotas(upload_bytes_per_day=100)

    both = [IncomingFile(f"{n}.bin", b"x" * 60) for n in (1, 2)]
    uploads = [store_uploads(disk, application, [upload], 1000, quotas) for upload in both]
    outcomes = await asyncio.gather(*uploads, return_exceptions=True)

    assert sorted(type(outcome).__name__ for outcome in outcomes) == ["PayloadTooLarge", "list"]
    assert await Attachment.all().count() == 1
    assert len(await disk.keys(f"uploads/{application.id}")) == 1


async def test_housekeeping_forgets_the_upload_counts_of_past_days(db, application, disk):
    await store_uploads(disk, application, files("a.txt"), 1000)

    assert await forget_past_upload_days(datetime.now(UTC) + timedelta(days=1)) == 0
    assert await forget_past_upload_days(datetime.now(UTC) + timedelta(days=2)) == 1
    assert not await UploadDay.exists()


async def test_unclaimed_uploads_are_deleted_in_batches(db, application, storage):
    for _ in range(3):
        await store_uploads(storage, application, files("a.txt", "b.txt"), 1000)
    await atomic(lambda: Attachment.all().update(created_at=datetime.now(UTC) - timedelta(days=2)))

    assert await delete_unclaimed(storage, batch=4) == 6

    assert not await Attachment.exists()
    assert await storage.keys(f"uploads/{application.id}") == []


async def test_the_integrity_check_finds_a_file_without_its_row(db, application, storage):
    [upload] = await store_uploads(storage, application, files("kept.txt"), 1000)
    await storage.put(f"uploads/{application.id}/orphan", b"left behind", "text/plain")

    assert await files_without_rows(storage) == [f"uploads/{application.id}/orphan"]
    assert await storage.exists(attachment_key(await Attachment.get(id=upload)))
