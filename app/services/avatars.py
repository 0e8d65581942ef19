"""Avatars served by Earful itself: initials on a colour derived from the address.

No third party learns who wrote: the URL carries a keyed digest of the address, not the address.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from html import escape
from urllib.parse import quote

COLORS = ("#e5484d", "#f76b15", "#46a758", "#12a594", "#0090ff", "#3e63dd", "#8e4ec6", "#d6409f", "#978365")


def initials(name: str, email: str) -> str:
    """Up to two initials from the name, else from the address."""
    words = [word for word in name.split() if word[:1].isalnum()]
    if words:
        letters = words[0][0] + (words[-1][0] if len(words) > 1 else "")
    else:
        letters = "".join(ch for ch in email.split("@", 1)[0] if ch.isalnum())[:1]
    return letters.upper() or "?"


def avatar_digest(email: str, secret: str) -> str:
    """A keyed digest of the address: stable per sender, meaningless to anyone else."""
    return hmac.new(secret.encode(), email.lower().encode(), hashlib.sha256).hexdigest()[:20]


@functools.lru_cache(maxsize=65_536)
def avatar_url(base_url: str, secret: str, email: str, name: str = "") -> str:
    """The address of a sender's avatar image.

    Remembered per sender: a page of fifty threads and their replies asks for it a hundred
    times, mostly for the same few people, and each answer costs an HMAC.
    """
    return f"{base_url}/avatars/{avatar_digest(email, secret)}.svg?i={quote(initials(name, email))}"


def render_avatar(digest: str, letters: str) -> str:
    """The SVG of an avatar."""
    color = COLORS[int(digest[:6], 16) % len(COLORS)] if digest else COLORS[0]
    text = escape("".join(ch for ch in letters if ch.isalnum())[:2].upper() or "?")
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">'
        f'<rect width="64" height="64" rx="32" fill="{color}"/>'
        '<text x="32" y="32" dy=".35em" text-anchor="middle" fill="#fff" '
        f'font-family="system-ui,sans-serif" font-size="26" font-weight="600">{text}</text></svg>'
    )
