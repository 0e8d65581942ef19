"""Every value that goes into a header of an e-mail Earful sends is cleaned here, in one place.

Header values come from outside: the first line of a thread is the Subject, the customer's name
and the agent's name are display names, a customer's Message-ID ends up in In-Reply-To. Two
things make that dangerous:

- Python's ``email`` package decodes RFC 2047 encoded words in the values it is given, so a
  Subject of ``=?utf-8?b?...?=`` becomes whatever the base64 holds, CR/LF included;
- Python before 3.11.10 does not refuse CR/LF when it writes a header (CVE-2024-6923), so
  those decoded line breaks came out of the relay as new header lines and a new body.

So a value is reduced to one line of printable text: control and line-separator characters
become spaces, the encoded-word markers ``=?`` and ``?=`` are taken out (a plain-text value has
no use for them, and without them nothing is decoded), white space is collapsed and the length
is capped. Message-IDs and addresses are kept only when they match their strict form.
"""

from __future__ import annotations

import re
import unicodedata
from email.headerregistry import Address

from app.services.validation import normalize_email

SUBJECT_LIMIT = 120
NAME_LIMIT = 100
_ATOM = r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~.]{1,240}"
_MESSAGE_ID = re.compile(f"<{_ATOM}@{_ATOM}>")


def _is_breaking(character: str) -> bool:
    """Control characters (C0, C1, DEL) and Unicode's line and paragraph separators."""
    return unicodedata.category(character) in ("Cc", "Zl", "Zp")


def header_text(value: str, limit: int) -> str:
    """``value`` as one line of plain text, safe in any header, at most ``limit`` characters."""
    text = "".join(" " if _is_breaking(character) else character for character in value)
    while "=?" in text or "?=" in text:
        text = text.replace("=?", "").replace("?=", "")
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def subject(prefix: str, text: str) -> str:
    """A Subject made of ``prefix`` and the first line of ``text``."""
    first_line = text.strip().split("\n", 1)[0]
    return prefix + header_text(first_line, SUBJECT_LIMIT)


def mailbox(name: str, address: str) -> Address:
    """An address header's value: a cleaned display name and an address that must be valid.

    ``ValueError`` when the address is not one (it was validated when it was stored, so this
    only happens to data that did not come through the services).
    """
    checked = normalize_email(address)
    if checked is None:
        raise ValueError("not a valid e-mail address")
    local, _, domain = checked.rpartition("@")
    return Address(display_name=header_text(name, NAME_LIMIT), username=local, domain=domain)


def message_id(value: str) -> str | None:
    """``value`` when it is a Message-ID of the strict form ``<left@right>``, else None."""
    value = value.strip()
    if "=?" in value or "?=" in value or not _MESSAGE_ID.fullmatch(value):
        return None
    return value
