"""Deleting threads, tags and applications: rows, files and counters go together."""

from __future__ import annotations

import pytest

from app.errors import Forbidden, NotFound, ValidationError
from app.models import Application, Attachment, Feedback, FeedbackTag, Member, Reply, ReplyDay, Tag
from app.services import applications, deletion, feedback
from app.services.attachments import store_uploads
from app.services.files import IncomingFile
from app.services.organizations import change_role
from app.services.storage import LocalStorage, Storage
from tests.factories import (
    application_row,
    make_application,
    make_organization,
    make_reply,
    make_thread,
    make_user,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


async def _upload(application, storage: Storage) -> int:
    [upload] = await store_uploads(storage, application, [IncomingFile("steps.txt", b"steps")], 10**6)
    return upload


async def test_deleting_a_thread_takes_its_replies_tags_and_counts(db, tmp_path):
    user = await make_user(plan="team")
    application = await make_application(user)
    kept = await make_thread(application, tags=["billing"])
    doomed = await make_thread(application, tags=["billing", "ui"])
    await make_reply(user, application, doomed)
    await make_reply(user, application, doomed, type="note")
    await feedback.set_archived(application, await feedback.get_thread(application, doomed.id), True)

    await deletion.delete_thread(await application_row(application.id), doomed.id, LocalStorage(tmp_path))

    stored = await application_row(application.id)
    assert (stored.open_threads, stored.archived_threads, stored.reply_count) == (1, 0, 0)
    assert (stored.first_reply_total, stored.first_reply_count) == (0, 0)
    assert await Feedback.filter(application_id=application.id).values_list("id", flat=True) == [kept.id]
    assert await Reply.filter(application_id=application.id).count() == 0
    assert await ReplyDay.filter(application_id=application.id).count() == 0
    counts = dict(await Tag.filter(application_id=application.id).values_list("name", "open_count"))
    assert counts == {"billing": 1, "ui": 0}
    assert await Tag.filter(application_id=application.id, archived_count__gt=0).count() == 0
    assert await FeedbackTag.filter(feedback_id=doomed.id).count() == 0


async def test_deleting_a_thread_removes_its_files(db, storage):
    application = await make_application(await make_user(), uploads_enabled=True)
    upload = await _upload(application, storage)
    thread = await make_thread(application, attachments=[upload])
    assert len(await storage.keys(f"uploads/{application.id}")) == 1

    await deletion.delete_thread(application, thread.id, storage)

    assert await storage.keys(f"uploads/{application.id}") == []
    assert await Attachment.filter(application_id=application.id).count() == 0


async def test_deleting_an_application_removes_its_files_and_logo_and_no_other(db, storage):
    user = await make_user()
    application = await applications.create_application(
        user, {"name": "Doomed", "uploads_enabled": True}, IncomingFile("l.png", PNG), storage
    )
    other = await make_application(user, uploads_enabled=True)
    await make_thread(application, attachments=[await _upload(application, storage)])
    await _upload(application, storage)  # never attached
    kept = await _upload(other, storage)

    await deletion.delete_application(user, application, storage)

    assert await storage.keys("uploads") + await storage.keys("logos") == [
        f"uploads/{other.id}/{(await Attachment.get(id=kept)).storage_name}"
    ]


async def test_a_thread_of_another_application_is_not_deleted(db, tmp_path):
    application = await make_application(await make_user())
    other = await make_application(await make_user())
    thread = await make_thread(other)

    with pytest.raises(NotFound):
        await deletion.delete_thread(application, thread.id, LocalStorage(tmp_path))

    assert await Feedback.filter(id=thread.id).exists()
    assert (await application_row(other.id)).open_threads == 1


async def test_deleting_a_tag_is_for_administrators(db):
    owner, agent = await make_user(), await make_user()
    organization = await make_organization(agent, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id)
    await make_thread(application, tags=["billing"])
    tag = await Tag.get(application_id=application.id)

    with pytest.raises(Forbidden):
        await deletion.delete_tag(agent, application, tag.id)
    await deletion.delete_tag(owner, application, tag.id)

    assert not await Tag.filter(id=tag.id).exists()
    assert await Feedback.filter(application_id=application.id).count() == 1


async def test_an_organization_owner_may_delete_an_application_they_did_not_create(db, tmp_path):
    creator, owner = await make_user(), await make_user()
    organization = await make_organization(creator, owners=(owner, creator))
    application = await make_application(creator, organization_id=organization.id)
    await change_role(owner, organization, creator.id, "agent")

    await deletion.delete_application(owner, application, LocalStorage(tmp_path))

    assert not await Application.filter(id=application.id).exists()


async def test_deleting_an_application_takes_everything_under_it(db, tmp_path):
    user = await make_user()
    application = await make_application(user, uploads_enabled=True)
    other = await make_application(user)
    kept = await make_thread(other)
    for number in range(deletion.BATCH + 3):
        await make_thread(application, tags=[f"t{number % 3}"])
    thread = await make_thread(application, attachments=[await _upload(application, LocalStorage(tmp_path))])
    await make_reply(user, application, thread)

    deleted = await deletion.delete_application(user, application, LocalStorage(tmp_path))

    assert deleted == deletion.BATCH + 4
    assert not await Application.filter(id=application.id).exists()
    for model in (Feedback, Member, Reply, Tag, Attachment, ReplyDay):
        assert await model.filter(application_id=application.id).count() == 0
    assert not (tmp_path / "uploads" / str(application.id)).exists()
    assert await Feedback.filter(id=kept.id).exists()


async def test_an_agent_may_not_delete_an_application(db, tmp_path):
    owner, agent = await make_user(), await make_user()
    organization = await make_organization(agent, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id)

    with pytest.raises(Forbidden):
        await deletion.delete_application(agent, application, LocalStorage(tmp_path))

    assert await Application.filter(id=application.id).exists()


def test_the_typed_confirmation_must_be_the_name(settings):
    class Named:
        name = "Shop"

    deletion.check_confirmation(Named(), " Shop ")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        deletion.check_confirmation(Named(), "shop")  # type: ignore[arg-type]


def test_selected_ids_are_checked():
    assert deletion.parse_thread_ids(["3", 3, "4"]) == [3, 4]
    with pytest.raises(ValidationError):
        deletion.parse_thread_ids([])
    with pytest.raises(ValidationError):
        deletion.parse_thread_ids(["x"])
    with pytest.raises(ValidationError):
        deletion.parse_thread_ids(list(range(1, deletion.MAX_SELECTED + 2)))
