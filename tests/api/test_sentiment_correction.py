"""Agents correct a thread's sentiment with PATCH; recomputation keeps their corrections."""

from __future__ import annotations

import pytest

from app.errors import NotFound
from app.models import Application, Feedback
from app.services.feedback import recompute_all_sentiment, recompute_sentiment, set_sentiment
from tests.factories import body_json, body_text, make_application, make_thread, make_token, make_user


def thread_path(application, thread) -> str:
    return f"/applications/{application.id}/feedback/{thread.id}"


async def assert_error(response, status: int, message: str) -> None:
    assert response.status_code == status
    assert response.mimetype == "text/plain"
    assert await body_text(response) == message


@pytest.mark.parametrize("label", ["positive", "neutral", "negative"])
async def test_patch_sentiment_sets_the_label_and_returns_the_thread(api, token, application, label):
    thread = await make_thread(application, message="The export button does nothing.", sentiment="neutral")

    response = await api.patch(thread_path(application, thread), token, json={"sentiment": label})

    assert response.status_code == 200
    body = await body_json(response)
    assert body["data"]["id"] == thread.id
    assert body["data"]["sentiment"] == label
    stored = await Feedback.get(id=thread.id)
    assert (stored.sentiment, stored.sentiment_corrected) == (label, True)


async def test_patch_sentiment_is_shown_afterwards(api, token, application):
    thread = await make_thread(application, message="I love this app, it is great")

    await api.patch(thread_path(application, thread), token, json={"sentiment": "negative"})
    shown = await body_json(await api.get(thread_path(application, thread), token))

    assert shown["data"]["sentiment"] == "negative"


async def test_patch_archived_and_sentiment_together_applies_both(api, token, application):
    thread = await make_thread(application, sentiment="positive")

    response = await api.patch(
        thread_path(application, thread), token, json={"archived": True, "sentiment": "negative"}
    )

    assert response.status_code == 200
    data = (await body_json(response))["data"]
    assert (data["archived"], data["sentiment"]) == (True, "negative")
    counts = await Application.get(id=application.id)
    assert (counts.open_threads, counts.archived_threads) == (0, 1)


@pytest.mark.parametrize("value", ["happy", "", None, 1, ["positive"], "Positive"])
async def test_patch_with_an_invalid_sentiment_is_rejected(api, token, application, value):
    thread = await make_thread(application, sentiment="neutral")

    response = await api.patch(thread_path(application, thread), token, json={"sentiment": value})

    await assert_error(response, 400, "The selected sentiment is invalid.")
    stored = await Feedback.get(id=thread.id)
    assert (stored.sentiment, stored.sentiment_corrected) == ("neutral", False)


async def test_an_invalid_sentiment_leaves_archived_untouched(api, token, application):
    thread = await make_thread(application)

    response = await api.patch(
        thread_path(application, thread), token, json={"archived": True, "sentiment": "meh"}
    )

    await assert_error(response, 400, "The selected sentiment is invalid.")
    assert not (await Feedback.get(id=thread.id)).archived


async def test_patch_with_neither_field_is_still_rejected(api, token, application):
    thread = await make_thread(application)

    response = await api.patch(thread_path(application, thread), token, json={"other": 1})

    await assert_error(response, 400, "Nothing sent to update")


async def test_patch_sentiment_of_an_unknown_thread_is_not_found(api, token, application):
    response = await api.patch(
        f"/applications/{application.id}/feedback/999999", token, json={"sentiment": "positive"}
    )

    await assert_error(response, 404, "Invalid feedback")


async def test_patch_sentiment_of_an_unknown_application_is_not_found(api, token, application):
    thread = await make_thread(application)

    response = await api.patch(
        f"/applications/999999/feedback/{thread.id}", token, json={"sentiment": "positive"}
    )

    await assert_error(response, 404, "Invalid application")


async def test_another_tenant_cannot_correct_the_sentiment(api, application):
    thread = await make_thread(application, sentiment="neutral")
    other_token = await make_token(await make_user(email="eve@example.com"), "read", "write")

    response = await api.patch(thread_path(application, thread), other_token, json={"sentiment": "negative"})

    await assert_error(response, 404, "Invalid application")
    assert (await Feedback.get(id=thread.id)).sentiment == "neutral"


async def test_another_tenants_thread_id_in_my_application_is_not_found(api, agent, token, application):
    mine = await make_application(agent)
    theirs = await make_thread(await make_application(await make_user(email="eve@example.com")))

    response = await api.patch(
        f"/applications/{mine.id}/feedback/{theirs.id}", token, json={"sentiment": "negative"}
    )

    await assert_error(response, 404, "Invalid feedback")


async def test_recompute_relabels_threads_but_skips_corrected_ones(application):
    corrected = await make_thread(application, message="I love this app, it is great")
    await set_sentiment(application, corrected, "negative")
    stale = await make_thread(application, message="I love this app, it is great", sentiment="negative")

    changed = await recompute_sentiment(application)

    assert changed == 1
    assert (await Feedback.get(id=corrected.id)).sentiment == "negative"
    assert (await Feedback.get(id=stale.id)).sentiment == "positive"


async def test_recompute_of_one_thread_keeps_a_correction(application):
    thread = await make_thread(application, message="This is terrible, it crashes all the time")
    await set_sentiment(application, thread, "positive")

    assert await recompute_sentiment(application, thread) == 0
    assert (await Feedback.get(id=thread.id)).sentiment == "positive"


async def test_recompute_detects_the_language_of_threads_stored_as_english(application):
    thread = await make_thread(application, message="Pésimo, no funciona", sentiment="neutral")

    await recompute_sentiment(application, thread)

    assert (await Feedback.get(id=thread.id)).sentiment == "negative"


async def test_recompute_touches_only_its_application(agent, application):
    other = await make_application(agent)
    elsewhere = await make_thread(other, message="I love this app, it is great", sentiment="negative")

    await recompute_sentiment(application)

    assert (await Feedback.get(id=elsewhere.id)).sentiment == "negative"


async def test_recompute_all_relabels_every_application_and_keeps_corrections(agent, application):
    other = await make_application(agent)
    stale = await make_thread(application, message="I love this app, it is great", sentiment="negative")
    stale_elsewhere = await make_thread(other, message="It crashes all the time, awful", sentiment="positive")
    corrected = await make_thread(other, message="I love this app, it is great")
    await set_sentiment(other, corrected, "negative")

    assert await recompute_all_sentiment() == (2, 2)

    assert (await Feedback.get(id=stale.id)).sentiment == "positive"
    assert (await Feedback.get(id=stale_elsewhere.id)).sentiment == "negative"
    assert (await Feedback.get(id=corrected.id)).sentiment == "negative"


async def test_recompute_all_of_one_application_leaves_the_others(agent, application):
    other = await make_application(agent)
    elsewhere = await make_thread(other, message="I love this app, it is great", sentiment="negative")
    await make_thread(application, message="I love this app, it is great", sentiment="negative")

    assert await recompute_all_sentiment(application.id) == (1, 1)
    assert (await Feedback.get(id=elsewhere.id)).sentiment == "negative"


async def test_recompute_all_of_an_unknown_application_is_not_found(application):
    with pytest.raises(NotFound):
        await recompute_all_sentiment(application.id + 1000)


async def test_capture_without_language_detects_it_for_the_sentiment(application):
    thread = await make_thread(application, message="No me gusta nada, es horrible y no funciona")

    assert thread.sentiment == "negative"
    assert thread.language == "en"  # the stored language is still the submitted (default) one
