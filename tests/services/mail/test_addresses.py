"""The e-mail channel's addresses: intake and signed reply addresses resolve to their targets,
forged or foreign ones to nothing."""

from __future__ import annotations

from app.services.applications import intake_address
from app.services.mail.addresses import reply_address, resolve_recipient, thread_message_id
from tests.factories import make_application, make_thread, make_user

SECRET = "test-secret-key"
DOMAIN = "in.earful.test"


async def test_an_intake_address_names_its_application(db):
    application = await make_application(await make_user())

    recipient = await resolve_recipient(intake_address(application, DOMAIN).upper(), SECRET, DOMAIN)

    assert recipient is not None and recipient.application.id == application.id and recipient.thread is None


async def test_a_reply_address_names_its_thread(db):
    application = await make_application(await make_user())
    thread = await make_thread(application)

    recipient = await resolve_recipient(f"<{reply_address(thread.id, SECRET, DOMAIN)}>", SECRET, DOMAIN)

    assert recipient is not None and recipient.thread is not None and recipient.thread.id == thread.id
    assert recipient.key == f"reply-{thread.id}"


async def test_forged_and_foreign_addresses_resolve_to_nothing(db):
    application = await make_application(await make_user())
    thread = await make_thread(application)
    forged_intake = f"feedback-{application.id}-{'0' * 12}@{DOMAIN}"
    forged_reply = reply_address(thread.id, "another secret", DOMAIN)
    foreign = reply_address(thread.id, SECRET, "elsewhere.test")

    for address in (forged_intake, forged_reply, foreign, f"someone@{DOMAIN}", "not an address"):
        assert await resolve_recipient(address, SECRET, DOMAIN) is None


def test_a_thread_has_a_stable_message_id():
    assert thread_message_id(7, DOMAIN) == f"<thread-7@{DOMAIN}>"
