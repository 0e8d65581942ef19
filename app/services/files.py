"""Files received from clients (uploads and logos): their names, their types sniffed from their
bytes, and the random names they are stored under (app/services/storage.py keeps them)."""

from __future__ import annotations

import mimetypes
import secrets
from dataclasses import dataclass

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
)
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
# Types a browser could run as a document from our origin are never served as themselves.
_INERT_TEXT_TYPES = frozenset({"text/plain", "text/csv", "application/json"})


@dataclass(frozen=True)
class IncomingFile:
    """A file received from a client, already read into memory."""

    filename: str
    content: bytes


def sniff_mime_type(content: bytes, filename: str) -> str:
    """Guess a file's type from its first bytes, then from its name; never trust the client."""
    for signature, mime in _SIGNATURES:
        if content.startswith(signature):
            return mime
    if content[:4] == b"RIFF" and content[8:12] == b"WEBP":
        return "image/webp"
    guessed = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    if guessed.startswith(("image/", "video/", "audio/")) and guessed != "image/svg+xml":
        return guessed
    if guessed in _INERT_TEXT_TYPES:
        return guessed
    return "application/octet-stream"


def clean_filename(filename: str) -> str:
    """Keep the last path component of a client's file name, printable and at most 255 characters."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable() and ch not in '"').strip().lstrip(".")
    return name[:255] or "file"


def new_file_name(suffix: str = "") -> str:
    """A new random name to store a file under (128 bits: never guessed, never reused)."""
    return secrets.token_hex(16) + suffix
