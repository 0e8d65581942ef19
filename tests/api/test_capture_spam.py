"""Spam controls on the capture API: blocked senders and bots get the usual answer, nothing is stored."""

from __future__ import annotations

import pytest

from app.models import Feedback, FormOpen
from app.services.submissions import parse_submission
from tests.api.test_capture import SPANISH, VALID, assert_text, capture_path, submit
from tests.factories import block, make_application, make_user

JANE = {"email": "jane@example.com", "message": "The export button does nothing."}


async def stored_emails(application) -> list[str]:
    return sorted(
        await Feedback.filter(application_id=application.id).values_list("member__email", flat=True)
    )


@pytest.mark.parametrize("entry", ["bot@spam.example", "spam.example", "*.spam.example", "203.0.113.0/24"])
async def test_a_blocked_sender_gets_the_usual_answer_and_nothing_is_stored(api, application, entry):
    await block(application, entry)
    blocked = await submit(
        api, application, {**VALID, "email": "bot@spam.example"}, scope_base={"client": ("203.0.113.9", 1)}
    )
    await assert_text(blocked, 201, "Feedback sent!")
    if entry == "203.0.113.0/24":
        other = await submit(api, application, JANE, scope_base={"client": ("198.51.100.1", 1)})
    else:
        other = await submit(api, application, JANE, scope_base={"client": ("203.0.113.9", 1)})
    await assert_text(other, 201, "Feedback sent!")
    assert await stored_emails(application) == ["jane@example.com"]


async def test_a_subdomain_of_a_blocked_domain_is_blocked(api, application):
    await block(application, "spam.example")
    await submit(api, application, {**VALID, "email": "bot@eu.mail.spam.example"})
    assert await stored_emails(application) == []


async def test_a_blocked_sender_is_answered_in_their_language(api, application):
    await block(application, "bot@spam.example")
    response = await submit(api, application, {**VALID, "email": "bot@spam.example", "language": "es"})
    await assert_text(response, 201, SPANISH["Feedback sent!"])
    assert await stored_emails(application) == []


async def test_the_end_users_address_a_server_sends_is_matched_too(api, application):
    await block(application, "203.0.113.0/24")
    await submit(
        api, application, {**VALID, "ip": "203.0.113.50"}, scope_base={"client": ("198.51.100.1", 1)}
    )
    assert await stored_emails(application) == []


async def test_a_blocked_sender_still_gets_validation_errors_as_anyone(api, application):
    await block(application, "bot@spam.example")
    response = await submit(api, application, {"email": "bot@spam.example", "message": ""})
    await assert_text(response, 400, "Your message is required")


async def test_the_blocklist_of_one_application_does_not_block_on_another(api, application):
    other = await make_application(await make_user())
    await block(other, "bot@spam.example")
    await submit(api, application, {**VALID, "email": "bot@spam.example"})
    assert await stored_emails(application) == ["bot@spam.example"]


async def test_an_open_from_a_blocked_network_is_answered_and_not_counted(api, application):
    await block(application, "203.0.113.0/24")
    path = capture_path(application.id, "open", application.key_javascript)
    blocked = await api.post(path, scope_base={"client": ("203.0.113.9", 1)})
    await assert_text(blocked, 201, "OK")
    assert await FormOpen.filter(application_id=application.id).count() == 0
    await api.post(path, scope_base={"client": ("198.51.100.1", 1)})
    assert await FormOpen.filter(application_id=application.id).count() == 1


async def test_a_submit_does_not_read_the_blocklist_each_time(api, application, queries):
    await block(application, "spam.example")
    await submit(api, application, JANE)
    queries.statements.clear()
    await submit(api, application, {**JANE, "email": "john@example.com"})
    assert not [s for s in queries.statements if "blocked_senders" in s]


# --- honeypot and fill time ------------------------------------------------------------------------


async def test_a_filled_honeypot_gets_the_usual_answer_and_nothing_is_stored(api, application):
    response = await submit(
        api, application, {**VALID, "honeypot": "http://cheap.example", "fill_time_ms": 9000}
    )
    await assert_text(response, 201, "Feedback sent!")
    assert await stored_emails(application) == []


async def test_a_form_sent_under_the_minimum_time_is_not_stored(api, application):
    response = await submit(api, application, {**VALID, "honeypot": "", "fill_time_ms": 1999})
    await assert_text(response, 201, "Feedback sent!")
    assert await stored_emails(application) == []


@pytest.mark.parametrize("fill_time", ["soon", -5, True, {"ms": 5000}])
async def test_a_fill_time_no_widget_sends_counts_as_a_bots(api, application, fill_time):
    response = await submit(api, application, {**VALID, "fill_time_ms": fill_time})
    await assert_text(response, 201, "Feedback sent!")
    assert await stored_emails(application) == []


async def test_a_person_who_took_their_time_is_stored(api, application):
    await submit(api, application, {**VALID, "honeypot": "", "fill_time_ms": 2000})
    await submit(api, application, {**JANE, "honeypot": None, "fill_time_ms": "15000"})
    assert await stored_emails(application) == ["ann@example.org", "jane@example.com"]


async def test_a_client_sending_neither_field_is_stored(api, application):
    await submit(api, application, VALID)
    assert await stored_emails(application) == ["ann@example.org"]


async def test_a_form_post_with_the_fields_is_judged_as_json(api, application):
    path = capture_path(application.id, "submit", application.key_javascript)
    await api.post(path, form={**VALID, "honeypot": "x", "fill_time_ms": "8000"})
    await api.post(path, form={**JANE, "honeypot": "", "fill_time_ms": "8000"})
    assert await stored_emails(application) == ["jane@example.com"]


def test_the_spam_signals_are_never_stored_in_properties():
    submission = parse_submission(
        {**VALID, "properties": {"plan": "pro"}, "honeypot": "", "fill_time_ms": 4000}, "203.0.113.1", "ua"
    )
    assert submission.properties == {"plan": "pro"}
    assert (submission.honeypot, submission.fill_time_ms) == ("", 4000)
