"""GET /applications/{id}/tags: tags of an application and their thread counts."""

from __future__ import annotations

import re

import pytest

from tests.factories import body_json, body_text, make_application, make_thread, make_token, make_user


@pytest.fixture
async def user(db: str):
    return await make_user()


@pytest.fixture
async def token(user) -> str:
    return await make_token(user)


@pytest.fixture
async def application(user):
    return await make_application(user)


async def list_tags(api, token: str, application_id: int) -> list[dict]:
    response = await api.get(f"/applications/{application_id}/tags", token)
    assert response.status_code == 200, await body_text(response)
    return (await body_json(response))["data"]


async def counts(api, token: str, application_id: int) -> dict[str, tuple[int, int, int]]:
    """Each tag's (feedback_count, archived_feedback_count, total_feedback_count), by name."""
    return {
        tag["name"]: (tag["feedback_count"], tag["archived_feedback_count"], tag["total_feedback_count"])
        for tag in await list_tags(api, token, application_id)
    }


async def set_archived(api, token: str, application_id: int, thread_id: int, archived: bool) -> None:
    response = await api.patch(
        f"/applications/{application_id}/feedback/{thread_id}", token, json={"archived": archived}
    )
    assert response.status_code == 200, await body_text(response)


async def test_application_without_tags_lists_none(api, token, application):
    await make_thread(application)

    response = await api.get(f"/applications/{application.id}/tags", token)

    assert response.status_code == 200
    assert await body_json(response) == {"data": []}


async def test_tags_list_counts_the_open_threads_of_each_tag(api, token, application):
    await make_thread(application, tags="bug,ui")
    await make_thread(application, tags="bug")
    await make_thread(application)

    assert await counts(api, token, application.id) == {"bug": (2, 0, 2), "ui": (1, 0, 1)}


async def test_tag_fields_have_the_specified_types(api, token, application):
    await make_thread(application, tags="billing")

    [tag] = await list_tags(api, token, application.id)

    assert set(tag) == {
        "id",
        "name",
        "color",
        "feedback_count",
        "archived_feedback_count",
        "total_feedback_count",
    }
    assert tag["name"] == "billing"
    assert all(
        type(tag[name]) is int
        for name in ("id", "feedback_count", "archived_feedback_count", "total_feedback_count")
    )
    assert type(tag["name"]) is str


async def test_tag_colour_is_a_hex_colour(api, token, application):
    await make_thread(application, tags="bug,ui,billing,export,login,Très long tag")

    tags = await list_tags(api, token, application.id)

    assert len(tags) == 6
    assert all(re.fullmatch(r"#[0-9a-f]{6}", tag["color"]) for tag in tags)


async def test_archiving_a_thread_moves_it_to_the_archived_count(api, token, application):
    archived = await make_thread(application, tags="bug,ui")
    await make_thread(application, tags="bug")

    await set_archived(api, token, application.id, archived.id, True)

    assert await counts(api, token, application.id) == {"bug": (1, 1, 2), "ui": (0, 1, 1)}


async def test_unarchiving_a_thread_moves_it_back_to_the_open_count(api, token, application):
    thread = await make_thread(application, tags="bug,ui")
    await make_thread(application, tags="bug")
    await set_archived(api, token, application.id, thread.id, True)

    await set_archived(api, token, application.id, thread.id, False)

    assert await counts(api, token, application.id) == {"bug": (2, 0, 2), "ui": (1, 0, 1)}


async def test_archiving_an_archived_thread_again_does_not_move_counts(api, token, application):
    thread = await make_thread(application, tags="bug")
    await make_thread(application, tags="bug")
    await set_archived(api, token, application.id, thread.id, True)

    await set_archived(api, token, application.id, thread.id, True)

    assert await counts(api, token, application.id) == {"bug": (1, 1, 2)}


async def test_unarchiving_an_open_thread_does_not_move_counts(api, token, application):
    thread = await make_thread(application, tags="bug")

    await set_archived(api, token, application.id, thread.id, False)

    assert await counts(api, token, application.id) == {"bug": (1, 0, 1)}


@pytest.mark.parametrize(
    "tags",
    [
        " Bug ,UI,bug,  ui  ,",
        '["Bug", " bug", "UI ", "ui"]',
        ["Bug", " bug", "UI ", "ui"],
    ],
    ids=["comma-separated", "json-encoded", "json-list"],
)
async def test_submitted_tags_are_trimmed_lower_cased_and_deduplicated(api, token, application, tags):
    response = await api.post(
        f"/applications/{application.id}/submit?key={application.key_api}",
        json={"email": "ann@example.org", "message": "Please add dark mode.", "tags": tags},
    )
    assert response.status_code == 201, await body_text(response)

    assert await counts(api, token, application.id) == {"bug": (1, 0, 1), "ui": (1, 0, 1)}


async def test_tags_with_the_same_name_in_two_applications_are_counted_apart(api, user, token, application):
    other = await make_application(user)
    await make_thread(application, tags="bug")
    await make_thread(other, tags="bug")
    await make_thread(other, tags="bug,crash")

    assert await counts(api, token, application.id) == {"bug": (1, 0, 1)}
    assert await counts(api, token, other.id) == {"bug": (2, 0, 2), "crash": (1, 0, 1)}


async def test_tags_are_listed_by_name(api, token, application):
    await make_thread(application, tags="zebra,alpha,mango")

    assert [tag["name"] for tag in await list_tags(api, token, application.id)] == ["alpha", "mango", "zebra"]


@pytest.mark.parametrize("application_id", ["987654", "abc", "99999999999999999999"])
async def test_tags_of_an_unknown_application_is_invalid_application(api, token, application_id):
    response = await api.get(f"/applications/{application_id}/tags", token)

    assert response.status_code == 404
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Invalid application"


async def test_tags_of_an_application_of_another_user_is_invalid_application(api, token):
    foreign = await make_application(await make_user())
    await make_thread(foreign, tags="secret")

    response = await api.get(f"/applications/{foreign.id}/tags", token)

    assert response.status_code == 404
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Invalid application"
