"""Tags: normalized names, stable colours, counts kept as threads are tagged, untagged and moved."""

from __future__ import annotations

import pytest

from app.config import Quotas
from app.db import atomic
from app.errors import ValidationError
from app.models import FeedbackTag, Tag
from app.services.feedback import set_archived
from app.services.inbox import search_threads
from app.services.tags import (
    MAX_TAGS,
    add_tag_to_thread,
    color_for,
    ensure_tags,
    find_tag_id,
    list_tags,
    normalize_tag,
    remove_tag_from_thread,
)
from tests.factories import make_application, make_thread, make_user, thread_row


def test_names_are_trimmed_single_spaced_and_lower_case():
    assert normalize_tag("  Feature   Request ") == "feature request"


def test_a_name_always_gets_the_same_colour():
    assert color_for("billing") == color_for("billing")
    assert color_for("billing").startswith("#")


async def test_tagging_creates_the_tag_once_and_counts_the_thread(db):
    application = await make_application(await make_user())
    thread = await make_thread(application)

    await add_tag_to_thread(application, thread, "Billing")
    await add_tag_to_thread(application, thread, "billing ")

    [tag] = await list_tags(application.id)
    assert (tag.name, tag.open_count, tag.archived_count) == ("billing", 1, 0)
    assert await FeedbackTag.filter(feedback_id=thread.id).count() == 1


async def test_an_archived_thread_counts_as_archived(db):
    application = await make_application(await make_user())
    thread = await make_thread(application)
    await set_archived(application, thread, True)

    await add_tag_to_thread(application, await thread_row(thread.id), "billing")

    tag = await Tag.get(application_id=application.id, name="billing")
    assert (tag.open_count, tag.archived_count) == (0, 1)


async def test_untagging_uncounts_and_another_applications_tag_is_left_alone(db):
    owner = await make_user()
    application, other = await make_application(owner), await make_application(owner)
    thread = await make_thread(application, tags=["billing"])
    foreign = await make_thread(other, tags=["billing"])
    foreign_tag = await find_tag_id(other.id, "billing")
    assert foreign_tag is not None

    await remove_tag_from_thread(application, thread, foreign_tag)
    assert (await Tag.get(id=foreign_tag)).open_count == 1
    await remove_tag_from_thread(application, thread, await find_tag_id(application.id, "billing") or 0)

    assert (await Tag.get(application_id=application.id, name="billing")).open_count == 0
    assert await FeedbackTag.filter(feedback_id=foreign.id).count() == 1


async def test_a_thread_keeps_at_most_the_maximum_of_tags(db):
    application = await make_application(await make_user())
    thread = await make_thread(
        application, tags=[f"t{n}" for n in range(MAX_TAGS)], quotas=Quotas(tags_per_submit=MAX_TAGS)
    )

    with pytest.raises(ValidationError, match="at most"):
        await add_tag_to_thread(application, thread, "one too many")

    assert await FeedbackTag.filter(feedback_id=thread.id).count() == MAX_TAGS
    assert not await Tag.filter(application_id=application.id, name="one too many", open_count__gt=0).exists()


async def test_an_agent_is_told_when_the_application_has_its_most_tags(db):
    application = await make_application(await make_user())
    thread = await make_thread(application, tags=["billing", "ui"])

    with pytest.raises(ValidationError, match="the most it may have"):
        await add_tag_to_thread(application, thread, "export", most=2)
    tagged = await add_tag_to_thread(application, await thread_row(thread.id), "billing", most=2)

    assert tagged.name == "billing"
    assert not await Tag.filter(application_id=application.id, name="export").exists()


@pytest.mark.parametrize("name", ["", "   ", "x" * 65, None, 5])
async def test_invalid_names_are_refused(db, name):
    application = await make_application(await make_user())
    thread = await make_thread(application)

    with pytest.raises(ValidationError):
        await add_tag_to_thread(application, thread, name)


async def test_ensuring_tags_past_the_quota_returns_only_those_that_exist(db):
    application = await make_application(await make_user())
    await make_thread(application, tags=["alpha", "beta"])

    found = await atomic(lambda: ensure_tags(application.id, ["alpha", "gamma"], most=2))

    assert [tag.name for tag in found] == ["alpha"]
    assert not await Tag.exists(application_id=application.id, name="gamma")


async def test_ensuring_tags_fills_the_room_left_under_the_quota(db):
    application = await make_application(await make_user())
    await make_thread(application, tags=["alpha"])

    found = await atomic(lambda: ensure_tags(application.id, ["beta", "gamma", "delta"], most=3))

    assert sorted(tag.name for tag in found) == ["beta", "gamma"]


async def test_an_inbox_page_shows_each_threads_tags_by_name(db):
    application = await make_application(await make_user())
    tagged = await make_thread(application, tags="zebra,apple")
    untagged = await make_thread(application)

    page = await search_threads(application)

    shown = {row.thread.id: [tag.name for tag in row.tags] for row in page.rows}
    assert shown == {tagged.id: ["apple", "zebra"], untagged.id: []}
    assert {tag.color for row in page.rows for tag in row.tags} == {color_for("apple"), color_for("zebra")}
