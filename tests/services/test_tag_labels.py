"""Tag labels kept per worker: read once per tag, only ever an application's own."""

from __future__ import annotations

from app.services.inbox import search_threads
from app.services.tag_labels import labels_of, labels_of_threads, tag_labels
from app.services.tags import add_tag_to_thread, find_tag_id
from tests.factories import make_application, make_thread, make_user


async def test_labels_are_read_once_per_tag(db, queries):
    application = await make_application(await make_user())
    thread = await make_thread(application, tags="billing")
    await search_threads(application)

    queries.statements.clear()
    await search_threads(application)
    warm = list(queries.statements)
    await add_tag_to_thread(application, thread, "refund")
    queries.statements.clear()
    page = await search_threads(application)

    assert [tag.name for tag in page.rows[0].tags] == ["billing", "refund"]
    assert not any("FROM tags" in statement for statement in warm)
    assert queries.count == len(warm) + 1  # the new tag's label alone


async def test_labels_of_another_applications_tags_are_not_given(db):
    owner = await make_application(await make_user())
    stranger = await make_application(await make_user())
    await make_thread(owner, tags="secret")
    owner_tag = await find_tag_id(owner.id, "secret")
    assert owner_tag is not None
    await tag_labels.of(owner.id, {owner_tag})

    assert await tag_labels.of(stranger.id, {owner_tag}) == {}
    assert await labels_of(stranger.id, {1: [owner_tag]}) == {1: []}


async def test_threads_of_several_applications_get_their_own_applications_labels(db):
    first = await make_application(await make_user())
    second = await make_application(await make_user())
    mine = await make_thread(first, tags="billing")
    theirs = await make_thread(second, tags="refund")
    billing = await find_tag_id(first.id, "billing")
    refund = await find_tag_id(second.id, "refund")
    assert billing is not None and refund is not None

    # Each thread claims both tags: only its own application's is given.
    both = [billing, refund]
    labels = await labels_of_threads([mine, theirs], {mine.id: both, theirs.id: both})

    assert {thread: [tag.name for tag in found] for thread, found in labels.items()} == {
        mine.id: ["billing"],
        theirs.id: ["refund"],
    }
