"""Spam controls in the web app: the settings page's blocklist card and the thread page's Spam button."""

from __future__ import annotations

from app.models import BlockedSender, Feedback
from app.repositories.accounts import user_by_email
from app.services.blocklist import MAX_ENTRIES
from tests.factories import block, body_text, fill_blocklist, make_application, make_thread
from tests.views.test_applications import intruder, signed_in

__all__ = ["intruder", "signed_in"]  # fixtures used by the tests below


def settings_path(application_id: int) -> str:
    return f"/app/applications/{application_id}"


async def test_the_settings_page_lists_the_blocklist_with_a_remove_button_each(
    client, application, signed_in
):
    await block(application, "bot@spam.example", "203.0.113.0/24")
    body = await body_text(await client.get(settings_path(application.id)))
    assert 'id="blocklist"' in body
    assert "bot@spam.example" in body and "203.0.113.0/24" in body
    assert body.count('aria-label="Remove ') == 2
    assert f'action="/app/applications/{application.id}/blocklist"' in body


async def test_an_empty_blocklist_says_nobody_is_blocked(client, application, signed_in):
    assert "Nobody is blocked." in await body_text(await client.get(settings_path(application.id)))


async def test_blocking_from_the_card_goes_back_to_it_with_a_notice(client, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}/blocklist",
        form={"csrf_token": signed_in, "value": "@Spam.Example"},
    )
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/app/applications/{application.id}#blocklist")
    assert await BlockedSender.filter(application_id=application.id).values_list("value", flat=True) == [
        "spam.example"
    ]
    page = await body_text(await client.get(settings_path(application.id)))
    assert "spam.example is blocked." in page


async def test_a_bad_value_shows_the_card_again_with_the_error_and_the_value(client, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}/blocklist",
        form={"csrf_token": signed_in, "value": "<b>not a thing</b>"},
    )
    assert response.status_code == 400
    body = await body_text(response)
    assert "The value field must be an e-mail address" in body
    assert 'value="&lt;b&gt;not a thing&lt;/b&gt;"' in body
    assert "<b>not a thing" not in body
    assert await BlockedSender.all().count() == 0


async def test_blocking_without_the_csrf_token_is_refused(client, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}/blocklist", form={"value": "spam.example"}
    )
    assert response.status_code == 400
    assert await BlockedSender.all().count() == 0


async def test_removing_an_entry_from_the_card(client, application, signed_in):
    await block(application, "bot@spam.example")
    entry = await BlockedSender.get(application_id=application.id)
    response = await client.post(
        f"/app/applications/{application.id}/blocklist/{entry.id}/remove", form={"csrf_token": signed_in}
    )
    assert response.status_code == 303
    assert await BlockedSender.all().count() == 0


async def test_another_agent_can_neither_see_nor_change_the_blocklist(application, signed_in, intruder):
    other, csrf = intruder
    await block(application, "bot@spam.example")
    entry = await BlockedSender.get(application_id=application.id)
    for response in (
        await other.get(settings_path(application.id)),
        await other.post(
            f"/app/applications/{application.id}/blocklist", form={"csrf_token": csrf, "value": "x@y.example"}
        ),
        await other.post(
            f"/app/applications/{application.id}/blocklist/{entry.id}/remove", form={"csrf_token": csrf}
        ),
    ):
        assert response.status_code == 404
    assert await BlockedSender.all().values_list("value", flat=True) == ["bot@spam.example"]


async def test_another_agent_cannot_remove_an_entry_through_their_own_application(app, application, intruder):
    other, csrf = intruder
    mallory = await user_by_email("mallory@example.com")
    assert mallory is not None
    theirs = await make_application(mallory)
    await block(application, "bot@spam.example")
    entry = await BlockedSender.get(application_id=application.id)
    response = await other.post(
        f"/app/applications/{theirs.id}/blocklist/{entry.id}/remove", form={"csrf_token": csrf}
    )
    assert response.status_code == 404
    assert await BlockedSender.all().count() == 1


# --- the thread page's Spam button -----------------------------------------------------------------


async def test_the_thread_page_has_a_spam_button(client, application, signed_in):
    thread = await make_thread(application, email="bot@spam.example")
    body = await body_text(await client.get(f"/app/applications/{application.id}/feedback/{thread.id}"))
    assert f'action="/app/applications/{application.id}/feedback/{thread.id}/spam"' in body
    assert ">Spam</button>" in body


async def test_spam_blocks_the_sender_deletes_the_thread_and_goes_back_to_the_inbox(
    client, application, signed_in
):
    thread = await make_thread(application, email="O'Brien&Co@spam.example")
    kept = await make_thread(application)
    response = await client.post(
        f"/app/applications/{application.id}/feedback/{thread.id}/spam?status=archived",
        form={"csrf_token": signed_in},
    )
    assert response.status_code == 303
    assert response.headers["Location"].endswith(
        f"/app/applications/{application.id}/feedback?status=archived"
    )
    assert await Feedback.all().values_list("id", flat=True) == [kept.id]
    assert await BlockedSender.all().values_list("value", flat=True) == ["o'brien&co@spam.example"]
    inbox = await body_text(await client.get(f"/app/applications/{application.id}/feedback"))
    assert "Marked as spam: o&#39;brien&amp;co@spam.example is blocked." in inbox


async def test_another_agent_cannot_mark_a_thread_as_spam(application, signed_in, intruder):
    other, csrf = intruder
    thread = await make_thread(application)
    response = await other.post(
        f"/app/applications/{application.id}/feedback/{thread.id}/spam", form={"csrf_token": csrf}
    )
    assert response.status_code == 404
    assert await Feedback.filter(id=thread.id).exists()
    assert await BlockedSender.all().count() == 0


async def test_spam_with_a_full_blocklist_keeps_the_thread_and_says_why(client, application, signed_in):
    await fill_blocklist(application, MAX_ENTRIES)
    thread = await make_thread(application, email="bot@spam.example")
    response = await client.post(
        f"/app/applications/{application.id}/feedback/{thread.id}/spam", form={"csrf_token": signed_in}
    )
    assert response.status_code == 400
    assert "The blocklist must not have more than 1000 entries." in await body_text(response)
    assert await Feedback.filter(id=thread.id).exists()
