"""Each application's blocklist: e-mail addresses, domains and IP networks whose feedback is dropped.

An entry typed by a user is one of:

- an e-mail address (``jane@example.com``), kept in lower case;
- a domain (``example.com``, ``@example.com`` or ``*.example.com``), which blocks its subdomains
  too (``mail.example.com``);
- an IP network (``203.0.113.0/24``, ``2001:db8::/32``), or one address (a /32 or a /128).
  Networks wider than a /8 of IPv4 or a /16 of IPv6 are refused: they block whole continents.

What a blocked sender meets (no surface tells them they are blocked, so they do not move on to
another address):

- capture submit: a submit whose e-mail, its domain (or a parent domain) or the client address is
  listed gets the usual 201 "Feedback sent!" in its language, and nothing is stored;
- capture open: from a blocked network, the usual answer, and the open is not counted;
- capture upload: not checked. An upload carries no e-mail, its answer must name real ids, and an
  upload that no submit claims is deleted by the cleanup of unclaimed uploads (within the daily
  upload quota and the rate limits meanwhile); the submit that would claim it is dropped;
- mail intake: a message from a blocked address or domain is accepted as usual and dropped (no
  thread, no reply).

The capture API answers every widget, so it must not read the blocklist on every request: each
worker keeps every application's list for ``CACHE_SECONDS`` (as the capture API keeps the
application row); a change made through this worker applies at once, the other workers see it
at once with Redis, else within those seconds (app.services.invalidation).

Anyone who works an application's inbox may manage its blocklist (blocking spammers is an agent's
daily chore), and mark a thread as spam: its sender's address is blocked and the thread deleted,
in one transaction.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from app.db import transactional
from app.errors import NotFound, ValidationError
from app.repositories import blocklist, threads
from app.repositories import deletion as deleting
from app.repositories.applications import ApplicationRow
from app.repositories.blocklist import BlockedRow
from app.services import deletion
from app.services.feedback import get_thread
from app.services.invalidation import CACHE_SECONDS, ApplicationCache, application_changed
from app.services.storage import Storage
from app.services.validation import normalize_email

MAX_ENTRIES = 1000
MAX_VALUE_LENGTH = 254
MIN_PREFIX = {4: 8, 6: 16}
INVALID_ENTRY = "Invalid entry"
INVALID_VALUE = (
    "The value field must be an e-mail address (jane@example.com), a domain (example.com) "
    "or an IP network (203.0.113.0/24)."
)
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


# --- parsing -------------------------------------------------------------------------------------


def parse_entry(value: object) -> tuple[str, str]:
    """An entry typed by a user as ``(kind, normalized value)``; a clear 400 for anything else."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValidationError("The value field is required.")
    if not isinstance(value, str):
        raise ValidationError("The value field must be a string.")
    text = value.strip()
    if len(text) > MAX_VALUE_LENGTH:
        raise ValidationError(
            "The value field must not be greater than %(max)d characters.", max=MAX_VALUE_LENGTH
        )
    network = _network(text)
    if network is not None:
        return "network", network
    if text.startswith("@"):
        return "domain", _domain(text[1:])
    if "@" in text:
        email = normalize_email(text)
        if email is None:
            raise ValidationError(INVALID_VALUE)
        return "email", email
    if text.startswith("*."):
        text = text[2:]
    return "domain", _domain(text)


def _network(text: str) -> str | None:
    """The network ``text`` names, normalized (host bits cleared), or None when it names none."""
    if not re.fullmatch(r"[0-9a-fA-F:.]+(/\d{1,3})?", text) or not any(c in text for c in ".:"):
        return None
    try:
        network = ipaddress.ip_network(text, strict=False)
    except ValueError:
        if "/" in text:
            raise ValidationError(INVALID_VALUE) from None
        return None
    least = MIN_PREFIX[network.version]
    if network.prefixlen < least:
        raise ValidationError(
            "The value field must not be a network wider than /%(least)d: it would block far too many "
            "addresses.",
            least=least,
        )
    return str(network)


def _domain(text: str) -> str:
    """A domain name in lower case (international names in their ASCII form); at least two labels,
    so that a whole top-level domain is never blocked by mistake."""
    name = text.strip().rstrip(".").lower()
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            raise ValidationError(INVALID_VALUE) from None
    labels = name.split(".")
    if len(name) > 253 or len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        raise ValidationError(INVALID_VALUE)
    if labels[-1].isdigit():  # 203.0.113 is not a domain
        raise ValidationError(INVALID_VALUE)
    return name


# --- matching ------------------------------------------------------------------------------------


class Blocklist:
    """The entries of one application, ready to match: sets of addresses and domains, and the
    networks grouped by prefix length (an address is matched with one set lookup per length)."""

    def __init__(self, entries: Iterable[tuple[str, str]]) -> None:
        emails: set[str] = set()
        domains: set[str] = set()
        networks: dict[tuple[int, int], set[ipaddress.IPv4Network | ipaddress.IPv6Network]] = {}
        for kind, value in entries:
            if kind == "email":
                emails.add(value)
            elif kind == "domain":
                domains.add(value)
            elif kind == "network":
                network = ipaddress.ip_network(value, strict=False)
                networks.setdefault((network.version, network.prefixlen), set()).add(network)
        self.emails = frozenset(emails)
        self.domains = frozenset(domains)
        self.networks = networks

    def __bool__(self) -> bool:
        return bool(self.emails or self.domains or self.networks)

    def blocks_email(self, email: str | None) -> bool:
        """Whether the address, its domain or a parent domain of it is listed."""
        if not email or not (self.emails or self.domains):
            return False
        address = email.strip().lower()
        if address in self.emails:
            return True
        domain = address.rpartition("@")[2]
        while domain:
            if domain in self.domains:
                return True
            domain = domain.partition(".")[2]
        return False

    def blocks_address(self, address: str | None) -> bool:
        """Whether the IP address lies in a listed network (an IPv4-mapped IPv6 address counts as
        its IPv4 address)."""
        if not address or not self.networks:
            return False
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        for (version, prefix), listed in self.networks.items():
            if version == ip.version and ipaddress.ip_network((ip, prefix), strict=False) in listed:
                return True
        return False


async def _read_blocklist(application_id: int) -> Blocklist:
    return Blocklist(await blocklist.kinds_and_values(application_id))


# Every application's blocklist recently matched in this worker, an empty one too (see the
# module's docstring and app.services.invalidation).
_cache: ApplicationCache[Blocklist] = ApplicationCache(_read_blocklist, CACHE_SECONDS)


async def _blocklist(application_id: int) -> Blocklist:
    found = await _cache.get(application_id)
    assert found is not None  # _read_blocklist always returns one
    return found


def forget_blocklists() -> None:
    """Drop every cached blocklist (when the database underneath changes, as in the tests)."""
    _cache.clear()


async def blocklist_of(application_id: int) -> Blocklist:
    """The application's blocklist, as this worker last read it (at most CACHE_SECONDS ago)."""
    return await _blocklist(application_id)


async def sender_blocked(application_id: int, email: str | None, *addresses: str | None) -> bool:
    """Whether feedback from this e-mail address or any of these client addresses is to be dropped."""
    found = await _blocklist(application_id)
    return found.blocks_email(email) or any(found.blocks_address(address) for address in addresses)


async def address_blocked(application_id: int, address: str | None) -> bool:
    """Whether requests from this client address are to be dropped."""
    return (await _blocklist(application_id)).blocks_address(address)


# --- managing ------------------------------------------------------------------------------------


async def list_entries(application: ApplicationRow) -> list[BlockedRow]:
    """The application's blocklist, newest first."""
    return await blocklist.entries_of(application.id)


async def _add(application_id: int, kind: str, value: str) -> tuple[BlockedRow, bool]:
    """Add an entry inside the caller's transaction; (the entry, whether it is new)."""
    existing = await blocklist.entry_for(application_id, kind, value)
    if existing is not None:
        return existing, False
    if await blocklist.count_up_to(application_id, MAX_ENTRIES) >= MAX_ENTRIES:
        raise ValidationError("The blocklist must not have more than %(max)d entries.", max=MAX_ENTRIES)
    added = await blocklist.insert_entry(application_id, kind, value, datetime.now(UTC))
    if added is None:  # added at the same moment by another request
        again = await blocklist.entry_for(application_id, kind, value)
        assert again is not None
        return again, False
    return added, True


async def add_entry(application: ApplicationRow, value: object) -> tuple[BlockedRow, bool]:
    """Block what ``value`` names; (the entry, whether it is new). Adding an entry the list has
    already returns that entry and writes nothing."""
    kind, normalized = parse_entry(value)
    try:
        return await transactional(_add)(application.id, kind, normalized)
    finally:
        await application_changed(application.id)


async def remove_entry(application: ApplicationRow, entry_id: int) -> None:
    """Unblock one entry; 'Invalid entry' when the application has no such entry."""
    removed = await transactional(blocklist.delete_entry)(application.id, entry_id)
    await application_changed(application.id)
    if not removed:
        raise NotFound(INVALID_ENTRY)


@dataclass(frozen=True)
class Spam:
    """What marking a thread as spam did: threads deleted, and the entry that blocks the sender."""

    deleted: int
    blocked: BlockedRow


async def mark_spam(application: ApplicationRow, feedback_id: int, storage: Storage) -> Spam:
    """Block the thread's sender address and delete the thread, in one transaction (its files
    after it commits); 'Invalid feedback' when the application has no such thread."""
    thread = await get_thread(application, feedback_id)

    @transactional
    async def block_and_delete() -> tuple[BlockedRow, deletion.Deleted]:
        entry, _ = await _add(application.id, "email", thread.sender.email.lower())
        removed = await deletion.remove_threads(application.id, [thread.id])
        if not removed.threads:  # deleted meanwhile: block nobody for a thread that is gone
            raise NotFound("Invalid feedback")
        return entry, removed

    try:
        entry, removed = await block_and_delete()
    finally:
        await application_changed(application.id)
    await deletion.remove_files(storage, removed.files)
    return Spam(removed.threads, entry)


async def mark_spam_threads(
    application: ApplicationRow, feedback_ids: Sequence[int], storage: Storage
) -> int:
    """:func:`mark_spam` for several threads at once (a bulk action): every sender's address is
    blocked and the threads deleted, in one transaction (their files after it commits); ids that
    are not the application's threads (any longer) are ignored. How many threads went."""

    @transactional
    async def block_and_delete() -> deletion.Deleted:
        # Locked first (PostgreSQL), so no address is blocked for a thread deleted meanwhile.
        locked = [thread.id for thread in await deleting.lock_threads(application.id, feedback_ids)]
        for address in sorted(
            {thread.sender.email.lower() for thread in await threads.threads_by_ids(locked)}
        ):
            await _add(application.id, "email", address)
        return await deletion.remove_threads(application.id, locked)

    try:
        removed = await block_and_delete()
    finally:
        await application_changed(application.id)
    await deletion.remove_files(storage, removed.files)
    return removed.threads
