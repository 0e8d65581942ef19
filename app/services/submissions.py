"""A submit, from the capture API or any other channel, validated into a :class:`Submission`."""

from __future__ import annotations

import ipaddress
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.config import DEFAULT_QUOTAS, Quotas
from app.errors import ValidationError
from app.i18n import N_, normalize_language
from app.models import SENTIMENTS
from app.services.attachments import MAX_ATTACHMENT_ID
from app.services.tags import MAX_TAG_LENGTH, normalize_tag
from app.services.validation import decode_json, normalize_email, parse_int, storable, valid_id

MIN_MESSAGE_LENGTH = 3
MAX_MESSAGE_LENGTH = 20_000


@dataclass(frozen=True)
class Submission:
    """A validated piece of feedback, from the capture API or any other channel."""

    email: str
    message: str
    name: str = ""
    sentiment: str | None = None
    url: str | None = None
    tags: tuple[str, ...] = ()
    properties: dict[str, Any] | list[Any] = field(default_factory=list)
    attachments: tuple[int, ...] = ()
    nps: int | None = None
    language: str = "en"
    language_given: bool = True  # False: the client sent none, so the sentiment detects it
    ip_address: str = ""
    user_agent: str = ""
    # The widget's spam signals, never stored: the hidden field's value (None when not sent) and
    # how long the form was shown before it was sent, in milliseconds (None when not sent; -1
    # when sent but not a whole number of milliseconds).
    honeypot: str | None = None
    fill_time_ms: int | None = None


def _parse_tags(value: object, quotas: Quotas) -> tuple[str, ...]:
    """The submit's tag names, normalized and without repeats.

    Too many names or a name too long is refused rather than cut: a tag silently shortened
    or dropped would file the feedback where its sender did not mean it to go.
    """
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = decode_json(text)
            except ValueError:
                raise ValidationError(N_("Invalid tags")) from None
        else:
            value = text.split(",")
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValidationError(N_("Invalid tags"))
    names = list(dict.fromkeys(normalize_tag(item) for item in value if item.strip()))
    if len(names) > quotas.tags_per_submit:
        raise ValidationError(N_("Too many tags"))
    if any(len(name) > min(quotas.tag_length, MAX_TAG_LENGTH) for name in names):
        raise ValidationError(N_("Tag name too long"))
    return tuple(names)


def _parse_properties(value: object, quotas: Quotas) -> dict[str, Any] | list[Any]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        try:
            value = decode_json(value)
        except ValueError:
            raise ValidationError(N_("Invalid properties")) from None
    if not isinstance(value, dict | list):
        raise ValidationError(N_("Invalid properties"))
    if len(json.dumps(value)) > quotas.properties_bytes:  # ASCII: \u escapes count as stored
        raise ValidationError(N_("Properties too large"))
    return storable(value)


def _parse_attachments(value: object, quotas: Quotas) -> tuple[int, ...]:
    if value is None or value == "" or value == []:
        return ()
    if isinstance(value, str):
        try:
            value = decode_json(value)
        except ValueError:
            raise ValidationError(N_("Invalid attachments")) from None
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ValidationError(N_("Invalid attachments"))
    if len(value) > quotas.files_per_thread:
        raise ValidationError(N_("Too many files"))
    ids: list[int] = []
    for item in value:
        number = parse_int(item)
        if number is None or not valid_id(number, MAX_ATTACHMENT_ID):
            raise ValidationError(N_("Invalid attachments"))
        ids.append(number)
    return tuple(dict.fromkeys(ids))


HONEYPOT_FIELD = "honeypot"
FILL_TIME_FIELD = "fill_time_ms"


def _spam_signals(body: Mapping[str, object]) -> tuple[str | None, int | None]:
    """The honeypot's value and the fill time of a submit, if it sent them. A value no widget
    sends (a honeypot that is not text, a fill time that is not a whole number of milliseconds)
    counts as a bot's: the honeypot as filled, the fill time as -1 (under any minimum)."""
    honeypot = body.get(HONEYPOT_FIELD)
    if honeypot is not None and not isinstance(honeypot, str):
        honeypot = str(honeypot) or "?"
    raw = body.get(FILL_TIME_FIELD)
    fill_time: int | None = None
    if raw is not None and raw != "":
        number = int(raw) if isinstance(raw, float) and math.isfinite(raw) else parse_int(raw)
        fill_time = number if number is not None and number >= 0 else -1
    return honeypot, fill_time


def looks_automated(submission: Submission, min_fill_seconds: float) -> bool:
    """Whether a submit was sent by a bot: its honeypot is filled in, or its form was sent sooner
    after it was shown than a person can type (a client that sends neither is not judged)."""
    if submission.honeypot is not None and submission.honeypot.strip():
        return True
    fill_time = submission.fill_time_ms
    return fill_time is not None and fill_time < min_fill_seconds * 1000


def _optional_text(value: object, limit: int, error: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValidationError(error)
    return value.strip()[:limit]


def parse_submission(
    body: Mapping[str, object], caller_ip: str, user_agent: str, quotas: Quotas = DEFAULT_QUOTAS
) -> Submission:
    """Validate a capture submit body in the specification's order: e-mail, message, then the rest,
    within the deployment's ``quotas``."""
    raw_email = body.get("email")
    if raw_email is None or (isinstance(raw_email, str) and not raw_email.strip()):
        raise ValidationError(N_("Your email address is required"))
    email = normalize_email(raw_email)
    if email is None:
        raise ValidationError(N_("Invalid email address"))
    raw_message = body.get("message")
    if raw_message is not None and not isinstance(raw_message, str):
        raise ValidationError(N_("Your message is required"))
    message = (raw_message or "").strip()
    if not message:
        raise ValidationError(N_("Your message is required"))
    if len(message) < MIN_MESSAGE_LENGTH:
        raise ValidationError(N_("Your message is too short"))
    if len(message) > MAX_MESSAGE_LENGTH:
        raise ValidationError(N_("Your message is too long"))
    sentiment = body.get("sentiment")
    if sentiment in (None, ""):
        sentiment = None
    elif sentiment not in SENTIMENTS:
        raise ValidationError(N_("Invalid sentiment"))
    nps = body.get("nps")
    if nps in (None, ""):
        nps = None
    else:
        nps = parse_int(nps)
        if nps is None or not 0 <= nps <= 10:
            raise ValidationError(N_("Invalid NPS rating"))
    ip = _optional_text(body.get("ip"), 64, N_("Invalid IP address"))
    if ip:
        try:
            ip = str(ipaddress.ip_address(ip))
        except ValueError:
            raise ValidationError(N_("Invalid IP address")) from None
    honeypot, fill_time = _spam_signals(body)
    return Submission(
        email=email,
        message=message,
        name=_optional_text(body.get("name"), 200, N_("Invalid name")),
        sentiment=sentiment,
        url=_optional_text(body.get("url"), 2048, N_("Invalid page URL")) or None,
        tags=_parse_tags(body.get("tags"), quotas),
        properties=_parse_properties(body.get("properties"), quotas),
        attachments=_parse_attachments(body.get("attachments"), quotas),
        nps=nps,
        language=normalize_language(body.get("language")),
        language_given=body.get("language") not in (None, ""),
        ip_address=ip or caller_ip,
        user_agent=user_agent[:1000],
        honeypot=honeypot,
        fill_time_ms=fill_time,
    )
