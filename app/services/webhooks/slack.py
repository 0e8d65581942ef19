"""Slack-compatible bodies: an incoming-webhook message built from an event's standard body.

Slack, Mattermost, Rocket.Chat and Discord (its ``/slack`` URLs) all take ``text`` with
``attachments`` (a coloured bar, a title that links, short fields), so an endpoint whose format
is ``slack`` needs no glue in between. Feedback text is the customer's: Slack reads ``<...>`` as
links and mentions and ``&`` as an entity, so those three characters are escaped as its
documentation asks, and long text is cut to an excerpt.
"""

from __future__ import annotations

import json
from typing import Any

EXCERPT = 300
COLORS = {"positive": "#2eb67d", "neutral": "#9e9e9e", "negative": "#e01e5a"}


def escape(text: str) -> str:
    """Text as Slack's mrkdwn shows it literally (its three control characters escaped)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def excerpt(text: str, length: int = EXCERPT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= length else flat[: length - 1] + "…"


def _sender(data: dict[str, Any]) -> str:
    name, email = str(data.get("name") or ""), str(data.get("email") or "")
    return escape(f"{name} <{email}>" if name else email)


def _thread_attachment(thread: dict[str, Any], title: str) -> dict[str, Any]:
    sentiment = str(thread.get("sentiment") or "neutral")
    fields = [
        {"title": "From", "value": _sender(thread), "short": True},
        {"title": "Sentiment", "value": sentiment, "short": True},
    ]
    if thread.get("tags"):
        fields.append({"title": "Tags", "value": escape(", ".join(thread["tags"])), "short": False})
    if thread.get("nps") is not None:
        fields.append({"title": "NPS", "value": str(thread["nps"]), "short": True})
    assignee = thread.get("assignee")
    if isinstance(assignee, dict):
        fields.append({"title": "Assignee", "value": escape(str(assignee.get("name") or "")), "short": True})
    return {
        "fallback": f"{title}: {excerpt(str(thread.get('message', '')), 120)}",
        "color": COLORS.get(sentiment, COLORS["neutral"]),
        "title": title,
        "title_link": thread.get("permalink"),
        "text": escape(excerpt(str(thread.get("message", "")))),
        "fields": fields,
    }


def _thread_message(kind: str, thread: dict[str, Any]) -> dict[str, Any]:
    link = thread.get("permalink")
    headline = {
        "feedback.created": "New feedback",
        "feedback.updated": "Feedback updated",
        "feedback.deleted": "Feedback deleted",
    }[kind]
    if kind == "feedback.updated":
        headline += " (archived)" if thread.get("archived") else " (open)"
    text = f"{headline} from {_sender(thread)}"
    if link and kind != "feedback.deleted":
        text += f" · <{link}|Open the thread>"
    return {"text": text, "attachments": [_thread_attachment(thread, headline)]}


def _reply_message(reply: dict[str, Any]) -> dict[str, Any]:
    thread = reply.get("feedback") or {}
    if reply.get("type") == "note":
        headline = "Internal note"
    elif reply.get("reply_from_agent"):
        headline = "Agent reply"
    else:
        headline = "Customer answer"
    who = escape(str((reply.get("user") or {}).get("name") or reply.get("email") or ""))
    return {
        "text": f"{headline} by {who} on feedback from {escape(str(thread.get('email', '')))}",
        "attachments": [
            {
                "fallback": f"{headline}: {excerpt(str(reply.get('message', '')), 120)}",
                "color": "#4a154b" if reply.get("type") == "note" else "#1d9bd1",
                "title": headline,
                "text": escape(excerpt(str(reply.get("message", "")))),
                "footer": escape(excerpt(str(thread.get("message", "")), 120)),
            }
        ],
    }


def slack_body(payload: str) -> str:
    """The Slack-compatible message of an event, from the event's standard body."""
    event = json.loads(payload)
    kind, data = event["type"], event["data"]
    if kind.startswith("feedback."):
        message = _thread_message(kind, data)
    elif kind == "reply.created":
        message = _reply_message(data)
    else:
        message = {"text": escape(f"Earful: {data.get('message', kind)}")}
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))
