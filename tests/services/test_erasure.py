"""Privacy requests: erasing and exporting a person's data, by e-mail, in the caller's applications."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from app.db import transactional
from app.errors import Forbidden, NotFound, ValidationError
from app.models import Attachment, AuditEntry, Feedback, Member, OutboundEmail, Reply
from app.repositories import outbox
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.attachments import AttachmentRow
from app.repositories.threads import ThreadRow
from app.services import deletion, erasure
from app.services.attachments import store_uploads
from app.services.files import IncomingFile
from app.services.organizations import change_role
from app.services.storage import LocalStorage, Storage
from tests.factories import (
    make_application,
    make_customer_reply,
    make_organization,
    make_reply,
    make_thread,
    make_user,
)
from tests.integrity import counter_mismatches, files_without_rows

PERSON = "pat@example.org"
OTHER = "sam@example.org"


def _url(attachment: AttachmentRow) -> str:
    return f"https://files.test/{attachment.id}/{attachment.name}"


async def _upload(application: ApplicationRow, storage: Storage, name: str = "steps.txt") -> int:
    [upload] = await store_uploads(storage, application, [IncomingFile(name, b"secret steps")], 10**6)
    return upload


@transactional
async def _mail_to(application: ApplicationRow, thread: ThreadRow, reply_id: int, address: str) -> None:
    await outbox.queue_email(
        application.id, thread.id, reply_id, address, f"copy-{reply_id}-{address}", datetime.now(UTC)
    )


@dataclass
class World:
    admin: UserRow
    first: ApplicationRow
    second: ApplicationRow
    foreign: ApplicationRow
    person_threads: list[ThreadRow]
    other_thread: ThreadRow
    foreign_thread: ThreadRow


async def _world(storage: Storage) -> World:
    """The person in two applications of ``admin`` and in one of someone else; another customer
    whose thread the person answered (with a file) and was copied on."""
    admin = await make_user(plan="team")
    first = await make_application(admin, uploads_enabled=True)
    second = await make_application(admin)
    foreign = await make_application(await make_user())
    mine = await make_thread(
        first, email="Pat@Example.org", name="Pat", attachments=[await _upload(first, storage)], tags=["ui"]
    )
    await make_reply(admin, first, mine, "We are looking into it.")
    await make_reply(admin, first, mine, "Pat is a VIP, careful.", type="note")
    await make_customer_reply(first, mine, PERSON, "Thanks!")
    archived = await make_thread(second, email=PERSON, message="Second product is slow.", tags=["perf"])
    await make_reply(admin, second, archived)
    other = await make_thread(first, email=OTHER, name="Sam", tags=["ui"])
    agent_reply = await make_reply(admin, first, other, "Which browser?")
    await make_customer_reply(first, other, "PAT@example.org", "Same here", (await _upload(first, storage),))
    await make_customer_reply(first, other, OTHER, "Firefox.")
    await _mail_to(first, other, agent_reply.id, PERSON)
    foreign_thread = await make_thread(foreign, email=PERSON)
    return World(admin, first, second, foreign, [mine, archived], other, foreign_thread)


async def test_erasing_takes_the_person_from_every_administered_application(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))

    counts = await erasure.erase_person(world.admin, " PAT@example.org ", storage=LocalStorage(tmp_path))

    assert counts == {
        "applications": 2,
        "senders": 2,
        "threads": 2,
        "replies": 1,
        "attachments": 2,
        "emails": 3,
    }
    for application in (world.first, world.second):
        assert not await Member.filter(application_id=application.id, email=PERSON).exists()
        assert not await Reply.filter(application_id=application.id, email__iexact=PERSON).exists()
        assert not await OutboundEmail.filter(application_id=application.id, to_address=PERSON).exists()
    assert not await Feedback.filter(id__in=[thread.id for thread in world.person_threads]).exists()


async def test_erasing_leaves_other_people_and_applications_not_administered(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))

    await erasure.erase_person(world.admin, PERSON, storage=LocalStorage(tmp_path))

    assert await Feedback.filter(id=world.other_thread.id).exists()
    remaining = await Reply.filter(feedback_id=world.other_thread.id).values_list("email", flat=True)
    assert sorted(remaining) == sorted([world.admin.email, OTHER])
    assert await OutboundEmail.filter(to_address=OTHER).count() == 1
    assert await Feedback.filter(id=world.foreign_thread.id).exists()
    assert await Member.filter(application_id=world.foreign.id, email=PERSON).exists()


async def test_counters_stay_exact_after_an_erasure(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))

    await erasure.erase_person(world.admin, PERSON, storage=LocalStorage(tmp_path))

    assert await counter_mismatches() == []


async def test_erasing_removes_the_persons_files_and_no_one_elses(db, storage):
    world = await _world(storage)
    other_file = await _upload(world.first, storage, "other.txt")
    await make_customer_reply(world.first, world.other_thread, OTHER, "Screenshot", (other_file,))

    await erasure.erase_person(world.admin, PERSON, storage=storage)

    stored = await Attachment.get(id=other_file)
    assert await storage.keys("uploads") == [f"uploads/{world.first.id}/{stored.storage_name}"]
    assert await files_without_rows(storage) == []


async def test_the_erasure_audit_entry_counts_and_holds_no_personal_data(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))

    counts = await erasure.erase_person(world.admin, PERSON, storage=LocalStorage(tmp_path))

    [entry] = await AuditEntry.filter(action="person.erase")
    assert (entry.actor_id, entry.application_id, entry.counts) == (world.admin.id, None, counts)
    stored = json.dumps(await AuditEntry.all().values(), default=str)
    assert "pat" not in stored.lower() and "example.org" not in stored


async def test_threads_go_in_batches(db, tmp_path, monkeypatch):
    monkeypatch.setattr(erasure, "BATCH", 2)
    user = await make_user()
    application = await make_application(user)
    for _ in range(5):
        await make_thread(application, email=PERSON)

    counts = await erasure.erase_person(user, PERSON, storage=LocalStorage(tmp_path))

    assert (counts["threads"], counts["senders"]) == (5, 1)
    assert await Feedback.filter(application_id=application.id).count() == 0
    assert await counter_mismatches() == []


async def test_erasing_someone_who_is_not_there_counts_zero(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))

    counts = await erasure.erase_person(world.admin, "nobody@example.org", storage=LocalStorage(tmp_path))

    assert counts == dict.fromkeys(erasure.COUNTS, 0)
    assert await Feedback.all().count() == 4


async def test_a_bad_address_is_refused_and_nothing_is_written(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))

    with pytest.raises(ValidationError, match=erasure.INVALID_EMAIL.replace(".", r"\.")):
        await erasure.erase_person(world.admin, "not an address", storage=LocalStorage(tmp_path))

    assert await AuditEntry.all().count() == 0
    assert await Feedback.all().count() == 4


async def test_one_named_application_only(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))

    counts = await erasure.erase_person(
        world.admin, PERSON, str(world.second.id), storage=LocalStorage(tmp_path)
    )

    assert (counts["applications"], counts["threads"]) == (1, 1)
    assert await Member.filter(application_id=world.first.id, email=PERSON).exists()
    [entry] = await AuditEntry.filter(action="person.erase")
    assert entry.application_id == world.second.id


async def test_an_application_the_actor_does_not_see_is_invalid(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))

    with pytest.raises(NotFound, match="Invalid application"):
        await erasure.erase_person(world.admin, PERSON, world.foreign.id, storage=LocalStorage(tmp_path))

    assert await Member.filter(application_id=world.foreign.id, email=PERSON).exists()


async def test_an_agent_who_does_not_administer_the_application_is_refused(db, tmp_path):
    owner, agent = await make_user(), await make_user()
    organization = await make_organization(agent, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id)
    await make_thread(application, email=PERSON)

    with pytest.raises(Forbidden):
        await erasure.erase_person(agent, PERSON, application.id, storage=LocalStorage(tmp_path))
    counts = await erasure.erase_person(agent, PERSON, storage=LocalStorage(tmp_path))

    assert counts["threads"] == 0
    assert await Feedback.filter(application_id=application.id).count() == 1


async def test_an_organization_owner_erases_in_the_organizations_applications(db, tmp_path):
    creator, owner = await make_user(), await make_user()
    organization = await make_organization(creator, owners=(owner, creator))
    application = await make_application(creator, organization_id=organization.id)
    await change_role(owner, organization, creator.id, "agent")
    await make_thread(application, email=PERSON)

    counts = await erasure.erase_person(owner, PERSON, storage=LocalStorage(tmp_path))

    assert counts["threads"] == 1


async def test_the_operator_erases_in_every_application(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))

    counts = await erasure.erase_person(None, PERSON, storage=LocalStorage(tmp_path))

    assert (counts["applications"], counts["threads"]) == (3, 3)
    [entry] = await AuditEntry.filter(action="person.erase")
    assert (entry.actor_id, entry.application_id) == (None, None)
    assert await counter_mismatches() == []
    assert world.foreign.id


async def test_the_export_holds_the_persons_threads_answers_and_emails(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))

    document = await erasure.export_person(world.admin, PERSON, attachment_url=_url)

    assert document["email"] == PERSON
    first, second = document["applications"]
    assert (first["id"], first["name"]) == (world.first.id, world.first.name)
    assert [sender["name"] for sender in first["senders"]] == ["Pat"]
    [thread] = first["threads"]
    assert thread["message"] == world.person_threads[0].message
    assert thread["tags"] == ["ui"]
    assert (thread["ip_address"], thread["user_agent"]) == ("203.0.113.7", "pytest-factory/1.0")
    [attachment] = thread["attachments"]
    assert attachment["name"] == "steps.txt" and attachment["url"].startswith("https://files.test/")
    assert [(r["from_agent"], r["message"]) for r in thread["replies"]] == [
        (True, "We are looking into it."),
        (False, "Thanks!"),
    ]
    [answer] = first["answers"]
    assert (answer["feedback_id"], answer["message"]) == (world.other_thread.id, "Same here")
    assert len(answer["attachments"]) == 1
    assert {email["feedback_id"] for email in first["emails"]} == {
        world.person_threads[0].id,
        world.other_thread.id,
    }
    assert second["threads"][0]["message"] == "Second product is slow."
    assert world.foreign.id not in [application["id"] for application in document["applications"]]


async def test_the_export_leaves_out_internal_notes_and_other_peoples_answers(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))
    await make_customer_reply(world.first, world.person_threads[0], OTHER, "Me too, from Sam")

    document = json.dumps(await erasure.export_person(world.admin, PERSON, attachment_url=_url))

    assert "Pat is a VIP" not in document
    assert "Me too, from Sam" not in document
    assert "Firefox." not in document


async def test_the_export_writes_an_audit_entry_without_personal_data(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))

    await erasure.export_person(world.admin, PERSON, world.first.id, attachment_url=_url)

    [entry] = await AuditEntry.filter(action="person.export")
    assert (entry.actor_id, entry.application_id) == (world.admin.id, world.first.id)
    assert entry.counts["threads"] == 1
    assert "pat" not in json.dumps(await AuditEntry.all().values(), default=str).lower()


async def test_exporting_someone_who_is_not_there_gives_no_applications(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))

    document = await erasure.export_person(world.admin, "nobody@example.org", attachment_url=_url)

    assert document["applications"] == []


async def test_recent_audit_entries_are_the_users_and_their_applications(db, tmp_path):
    world = await _world(LocalStorage(tmp_path))
    stranger = await make_user()
    await erasure.export_person(world.admin, PERSON, world.first.id, attachment_url=_url)
    await erasure.erase_person(None, PERSON, world.second.id, storage=LocalStorage(tmp_path))
    await erasure.erase_person(None, PERSON, world.foreign.id, storage=LocalStorage(tmp_path))
    await erasure.export_person(stranger, PERSON, attachment_url=_url)

    entries = await erasure.recent_audit_entries(world.admin)

    assert [(e.action, e.application_id) for e in entries] == [
        ("person.erase", world.second.id),
        ("person.export", world.first.id),
    ]
    assert entries[1].actor_name == world.admin.name
    assert [e.action for e in await erasure.recent_audit_entries(stranger)] == ["person.export"]


async def test_deleting_an_application_leaves_an_audit_entry(db, tmp_path):
    user = await make_user()
    application = await make_application(user)
    await make_thread(application, email=PERSON)

    await deletion.delete_application(user, application, LocalStorage(tmp_path))

    [entry] = await AuditEntry.filter(action="application.delete")
    assert (entry.actor_id, entry.application_id, entry.counts) == (user.id, application.id, {"threads": 1})


async def test_the_export_reads_threads_in_batches(db, tmp_path, monkeypatch):
    monkeypatch.setattr(erasure, "BATCH", 2)
    user = await make_user()
    application = await make_application(user)
    made = [await make_thread(application, email=PERSON, message=f"Message {n}") for n in range(5)]

    document = await erasure.export_person(user, PERSON, attachment_url=_url)

    [held] = document["applications"]
    assert [thread["id"] for thread in held["threads"]] == [thread.id for thread in made]
