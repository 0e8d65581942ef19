"""The blocklist: what a typed entry means, what it blocks, its limit, its cache, and marking spam."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.errors import NotFound, ValidationError
from app.models import BlockedSender, Feedback
from app.services import blocklist
from app.services.blocklist import (
    MAX_ENTRIES,
    Blocklist,
    add_entry,
    list_entries,
    mark_spam,
    parse_entry,
    remove_entry,
    sender_blocked,
)
from app.services.storage import LocalStorage
from tests.factories import block, fill_blocklist, make_application, make_thread, make_user


@pytest.mark.parametrize(
    ("typed", "parsed"),
    [
        ("Jane@Example.COM", ("email", "jane@example.com")),
        ("  jane@example.com ", ("email", "jane@example.com")),
        ("example.com", ("domain", "example.com")),
        ("@Example.com", ("domain", "example.com")),
        ("*.example.com", ("domain", "example.com")),
        ("mail.example.co.uk.", ("domain", "mail.example.co.uk")),
        ("bücher.example", ("domain", "xn--bcher-kva.example")),
        ("cafe.be", ("domain", "cafe.be")),
        ("203.0.113.0/24", ("network", "203.0.113.0/24")),
        ("203.0.113.77/24", ("network", "203.0.113.0/24")),
        ("203.0.113.7", ("network", "203.0.113.7/32")),
        ("10.0.0.0/8", ("network", "10.0.0.0/8")),
        ("2001:DB8::/32", ("network", "2001:db8::/32")),
        ("2001:db8::1", ("network", "2001:db8::1/128")),
    ],
)
def test_a_typed_entry_is_an_address_a_domain_or_a_network(typed, parsed):
    assert parse_entry(typed) == parsed


@pytest.mark.parametrize(
    "typed",
    [
        "jane@",
        "jane@@example.com",
        "com",
        "@com",
        "*.com",
        "exa mple.com",
        "-bad.example",
        "http://example.com",
        "203.0.113",
        "203.0.113.0/33",
        "999.1.1.1/24",
        "2001:db8::/129",
        "example.com/24",
    ],
)
def test_anything_else_is_refused_with_what_is_expected(typed):
    with pytest.raises(ValidationError) as refused:
        parse_entry(typed)
    assert refused.value.status == 400
    assert str(refused.value) == blocklist.INVALID_VALUE


@pytest.mark.parametrize("typed", ["0.0.0.0/0", "10.0.0.0/7", "128.0.0.0/1", "::/0", "2001::/15"])
def test_networks_wider_than_a_slash_8_or_a_slash_16_are_refused(typed):
    with pytest.raises(ValidationError, match=r"must not be a network wider than /(8|16)"):
        parse_entry(typed)


@pytest.mark.parametrize(
    ("value", "message"), [(None, "is required"), ("  ", "is required"), (42, "must be a string")]
)
def test_a_missing_or_non_text_value_is_refused(value, message):
    with pytest.raises(ValidationError, match=f"The value field {message}"):
        parse_entry(value)


def test_an_overlong_value_is_refused():
    with pytest.raises(ValidationError, match="not be greater than 254 characters"):
        parse_entry("a" * 250 + ".example")


def test_an_address_blocks_itself_only():
    listed = Blocklist([parse_entry("jane@example.com")])
    assert listed.blocks_email("JANE@example.com")
    assert not listed.blocks_email("john@example.com")
    assert not listed.blocks_address("203.0.113.7")


def test_a_domain_blocks_its_addresses_and_its_subdomains_but_not_lookalikes():
    listed = Blocklist([parse_entry("*.example.com")])
    assert listed.blocks_email("jane@example.com")
    assert listed.blocks_email("jane@mail.eu.example.com")
    assert not listed.blocks_email("jane@notexample.com")
    assert not listed.blocks_email("jane@example.com.evil.test")
    assert not listed.blocks_email("example.com@elsewhere.test")


def test_a_network_blocks_its_addresses_ipv4_mapped_ones_included():
    listed = Blocklist(
        [parse_entry("203.0.113.0/24"), parse_entry("2001:db8::/32"), parse_entry("198.51.100.9")]
    )
    assert listed.blocks_address("203.0.113.200")
    assert listed.blocks_address("::ffff:203.0.113.5")
    assert listed.blocks_address("2001:db8:1::9")
    assert listed.blocks_address("198.51.100.9")
    assert not listed.blocks_address("198.51.100.10")
    assert not listed.blocks_address("203.0.114.1")
    assert not listed.blocks_address("not an address")
    assert not listed.blocks_address("")


async def test_adding_an_entry_twice_returns_the_first_and_writes_nothing(db):
    application = await make_application(await make_user())
    first, created = await add_entry(application, "Spam@Example.com")
    again, created_again = await add_entry(application, "spam@example.com ")
    assert (created, created_again) == (True, False)
    assert again.id == first.id
    assert await BlockedSender.filter(application_id=application.id).count() == 1


async def test_the_list_is_newest_first_and_of_its_application_only(db):
    user = await make_user()
    application, other = await make_application(user), await make_application(user)
    await block(application, "one@example.com", "example.org")
    await block(other, "203.0.113.0/24")
    assert [e.value for e in await list_entries(application)] == ["example.org", "one@example.com"]


async def test_an_application_has_at_most_a_thousand_entries(db):
    application = await make_application(await make_user())
    await fill_blocklist(application, MAX_ENTRIES)
    with pytest.raises(ValidationError, match="must not have more than 1000 entries"):
        await add_entry(application, "late@example.com")
    existing, created = await add_entry(application, "10.0.5.0/24")  # already listed: still answered
    assert not created and existing.value == "10.0.5.0/24"
    assert await BlockedSender.filter(application_id=application.id).count() == MAX_ENTRIES


async def test_removing_an_entry_of_another_application_is_invalid_and_removes_nothing(db):
    user = await make_user()
    application, other = await make_application(user), await make_application(user)
    entry, _ = await add_entry(application, "spam@example.com")
    with pytest.raises(NotFound, match="Invalid entry"):
        await remove_entry(other, entry.id)
    assert await BlockedSender.filter(id=entry.id).exists()
    await remove_entry(application, entry.id)
    assert not await BlockedSender.filter(id=entry.id).exists()


async def test_a_change_through_this_worker_applies_at_once(db):
    application = await make_application(await make_user())
    assert not await sender_blocked(application.id, "spam@example.com", "203.0.113.7")
    entry, _ = await add_entry(application, "203.0.113.0/24")
    assert await sender_blocked(application.id, "jane@example.com", "203.0.113.7")
    await remove_entry(application, entry.id)
    assert not await sender_blocked(application.id, "jane@example.com", "203.0.113.7")


async def test_the_blocklist_is_read_once_per_cache_period(db, queries):
    application = await make_application(await make_user())
    await block(application, "example.org")
    await sender_blocked(application.id, "a@example.org")
    queries.statements.clear()
    for _ in range(5):
        assert await sender_blocked(application.id, "b@mail.example.org", "203.0.113.7")
    assert queries.count == 0


async def test_marking_spam_blocks_the_sender_and_deletes_the_thread(db, tmp_path: Path):
    application = await make_application(await make_user())
    spam = await make_thread(application, email="Bot@Spam.example")
    kept = await make_thread(application, email="jane@example.com")
    result = await mark_spam(application, spam.id, LocalStorage(tmp_path))
    assert result.deleted == 1
    assert (result.blocked.kind, result.blocked.value) == ("email", "bot@spam.example")
    assert await Feedback.filter(application_id=application.id).values_list("id", flat=True) == [kept.id]
    assert await sender_blocked(application.id, "bot@spam.example")


async def test_marking_spam_of_an_already_blocked_sender_returns_the_entry(db, tmp_path: Path):
    application = await make_application(await make_user())
    thread = await make_thread(application, email="bot@spam.example")
    entry, _ = await add_entry(application, "bot@spam.example")
    assert (await mark_spam(application, thread.id, LocalStorage(tmp_path))).blocked.id == entry.id


async def test_marking_spam_of_another_applications_thread_changes_nothing(db, tmp_path: Path):
    user = await make_user()
    application, other = await make_application(user), await make_application(user)
    thread = await make_thread(other, email="bot@spam.example")
    with pytest.raises(NotFound, match="Invalid feedback"):
        await mark_spam(application, thread.id, LocalStorage(tmp_path))
    assert await Feedback.filter(id=thread.id).exists()
    assert await BlockedSender.all().count() == 0
