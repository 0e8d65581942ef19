"""The thread page's sentiment correction form (POST/303 without JavaScript, fragment with htmx)."""

from __future__ import annotations

import pytest

from app.models import Feedback
from tests.factories import make_thread, make_user, sign_in

HX = {"HX-Request": "true"}


@pytest.fixture
async def csrf(client, agent) -> str:
    return await sign_in(client, agent)


@pytest.fixture
async def thread(application) -> Feedback:
    return await make_thread(application, message="I love this app, it is great")


def url(thread: Feedback, suffix: str = "") -> str:
    return f"/app/applications/{thread.application_id}/feedback/{thread.id}{suffix}"


async def test_the_thread_page_offers_the_three_labels(client, csrf, thread):
    response = await client.get(url(thread))

    body = await response.get_data(as_text=True)
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert f'action="{url(thread, "/sentiment")}"' in body
    assert '<select name="sentiment">' in body
    assert '<option value="positive" selected>' in body
    assert '<option value="neutral">' in body and '<option value="negative">' in body
    assert "Detected automatically" in body


async def test_posting_a_label_corrects_it_and_redirects_to_the_thread(client, csrf, thread):
    response = await client.post(
        url(thread, "/sentiment"), form={"csrf_token": csrf, "sentiment": "negative"}
    )

    assert response.status_code == 303
    assert response.headers["Location"].endswith(url(thread))
    stored = await Feedback.get(id=thread.id)
    assert (stored.sentiment, stored.sentiment_corrected) == ("negative", True)
    page = await (await client.get(url(thread))).get_data(as_text=True)
    assert "Set by an agent" in page and '<option value="negative" selected>' in page


async def test_posting_with_htmx_returns_the_sentiment_fragment(client, csrf, thread):
    response = await client.post(
        url(thread, "/sentiment"), form={"csrf_token": csrf, "sentiment": "neutral"}, headers=HX
    )

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="thread-sentiment"')
    assert '<option value="neutral" selected>' in body and "Set by an agent" in body


async def test_an_invalid_label_is_refused_with_the_message(client, csrf, thread):
    response = await client.post(
        url(thread, "/sentiment"), form={"csrf_token": csrf, "sentiment": "ecstatic"}, headers=HX
    )

    body = await response.get_data(as_text=True)
    assert response.status_code == 400
    assert "The selected sentiment is invalid." in body
    assert not (await Feedback.get(id=thread.id)).sentiment_corrected


async def test_posting_without_a_csrf_token_is_refused(client, csrf, thread):
    response = await client.post(url(thread, "/sentiment"), form={"sentiment": "negative"})

    assert response.status_code == 400
    assert (await Feedback.get(id=thread.id)).sentiment == "positive"


async def test_another_agent_gets_not_found(app, thread):
    other = app.test_client()
    token = await sign_in(other, await make_user(email="eve@example.com"))

    response = await other.post(
        url(thread, "/sentiment"), form={"csrf_token": token, "sentiment": "negative"}
    )

    assert response.status_code == 404
    assert (await Feedback.get(id=thread.id)).sentiment == "positive"


async def test_the_form_has_no_inline_script_or_style(client, csrf, thread):
    body = await (await client.get(url(thread))).get_data(as_text=True)
    section = body[body.index('<section id="thread-sentiment"') :]
    section = section[: section.index("</section>")]

    assert "style=" not in section and " on" not in section.replace(" option", "")
