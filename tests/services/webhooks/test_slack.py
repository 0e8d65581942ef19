"""Slack-compatible messages, built from an event's standard body."""

from __future__ import annotations

import json

from app.services.webhooks.slack import escape, excerpt, slack_body


def event(kind: str, data: dict[str, object]) -> str:
    return json.dumps({"type": kind, "timestamp": "2026-11-26T10:00:00Z", "data": data})


THREAD = {
    "id": 7,
    "email": "jane@example.org",
    "name": "Jane <Admin>",
    "message": "Checkout fails <b>always</b> & I'm @channel",
    "sentiment": "negative",
    "tags": ["billing", "urgent"],
    "nps": 3,
    "archived": False,
    "permalink": "https://earful.example/app/applications/1/feedback/7",
}


def test_slacks_control_characters_are_escaped():
    assert escape("<!here> & <@U1>") == "&lt;!here&gt; &amp; &lt;@U1&gt;"


def test_long_text_becomes_an_excerpt_on_one_line():
    assert excerpt("a\n" * 400, 10) == "a a a a a…"


def test_a_new_thread_shows_sender_sentiment_excerpt_tags_and_a_link():
    message = json.loads(slack_body(event("feedback.created", THREAD)))

    assert message["text"] == (
        "New feedback from Jane &lt;Admin&gt; &lt;jane@example.org&gt; · "
        "<https://earful.example/app/applications/1/feedback/7|Open the thread>"
    )
    [attachment] = message["attachments"]
    assert attachment["color"] == "#e01e5a"
    assert attachment["title_link"] == THREAD["permalink"]
    assert attachment["text"] == "Checkout fails &lt;b&gt;always&lt;/b&gt; &amp; I'm @channel"
    assert {"title": "Tags", "value": "billing, urgent", "short": False} in attachment["fields"]
    assert {"title": "NPS", "value": "3", "short": True} in attachment["fields"]


def test_an_update_says_whether_the_thread_is_archived():
    message = json.loads(slack_body(event("feedback.updated", {**THREAD, "archived": True})))

    assert message["text"].startswith("Feedback updated (archived) from")


def test_an_assigned_thread_shows_its_assignee():
    assigned = {**THREAD, "assignee": {"id": 3, "email": "andy@example.com", "name": "Andy <Agent>"}}

    [attachment] = json.loads(slack_body(event("feedback.updated", assigned)))["attachments"]
    [plain] = json.loads(slack_body(event("feedback.updated", {**THREAD, "assignee": None})))["attachments"]

    assert {"title": "Assignee", "value": "Andy &lt;Agent&gt;", "short": True} in attachment["fields"]
    assert "Assignee" not in [field["title"] for field in plain["fields"]]


def test_a_note_is_marked_as_internal():
    reply = {
        "type": "note",
        "message": "Refund them",
        "reply_from_agent": True,
        "user": {"name": "Ann"},
        "email": "ann@example.com",
        "feedback": {"email": "jane@example.org", "message": "Broken"},
    }

    message = json.loads(slack_body(event("reply.created", reply)))

    assert message["text"] == "Internal note by Ann on feedback from jane@example.org"
    assert message["attachments"][0]["text"] == "Refund them"


def test_a_test_event_is_a_plain_message():
    message = json.loads(slack_body(event("webhook.test", {"message": "A test event"})))

    assert message == {"text": "Earful: A test event"}
