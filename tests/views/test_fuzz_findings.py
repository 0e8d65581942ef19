"""Pages the fuzzer answered with a 500: ids out of range and a sign-in ``next`` with line breaks."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.factories import PASSWORD, csrf_of, make_user, sign_in

TOO_LARGE = ["99999999999", str(2**63), "9" * 40]
PAGES = [
    "/app/applications/{id}",
    "/app/applications/{id}/stats",
    "/app/applications/{id}/demo",
    "/app/applications/{id}/feedback",
    "/app/applications/{id}/feedback/{id}",
    "/app/organizations/{id}",
]


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("number", TOO_LARGE)
async def test_page_ids_out_of_range_are_the_not_found_page(client, agent, path, number):
    await sign_in(client, agent)

    response = await client.get(path.format(id=number))

    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert "Not found" in await response.get_data(as_text=True)


@pytest.mark.parametrize("number", TOO_LARGE)
async def test_form_posts_with_ids_out_of_range_are_not_found(client, agent, number):
    csrf = await sign_in(client, agent)

    response = await client.post(
        f"/app/applications/{number}/feedback/1/archive", form={"csrf_token": csrf, "archived": "1"}
    )

    assert response.status_code == 404


async def test_unknown_api_paths_stay_plain_text(client):
    response = await client.get("/applications/1/nothing-here")

    assert response.status_code == 404
    assert response.mimetype == "text/plain"


@pytest.mark.parametrize(
    "target", ["/app/x\r\nSet-Cookie: a=b", "/app/\nx", "/app/\x00", "/app/\u2028", "/app/a b"]
)
async def test_sign_in_with_a_next_holding_control_characters_goes_home(client, target):
    user = await make_user(email="ann@example.com")
    token = await csrf_of(client)

    response = await client.post(
        "/app/login?next=" + quote(target),
        form={"email": user.email, "password": PASSWORD, "csrf_token": token},
    )

    assert response.status_code == 302
    assert response.headers["Location"] == "/app/"
