"""The account page: profile and personal access tokens."""

from __future__ import annotations

import re

from app.models import AccessToken
from tests.factories import csrf_of, make_token, make_user, sign_in

HTMX = {"HX-Request": "true"}
RAW_TOKEN = re.compile(r'value="(ea_[A-Za-z0-9_\-]+)"')


async def _create(client, name: str = "CI export", scopes=("read",), headers=None):
    form = [("csrf_token", await csrf_of(client, "/app/account")), ("name", name)]
    form += [("scopes", scope) for scope in scopes]
    body = "&".join(f"{key}={value}" for key, value in form)
    return await client.post(
        "/app/account/tokens",
        data=body,
        headers={"Content-Type": "application/x-www-form-urlencoded", **(headers or {})},
    )


async def _revoke(client, token_id: int, headers=None):
    return await client.post(
        f"/app/account/tokens/{token_id}/revoke",
        form={"csrf_token": await csrf_of(client, "/app/account")},
        headers=headers or {},
    )


async def test_account_page_shows_the_profile(client, agent):
    await sign_in(client, agent)

    response = await client.get("/app/account")

    assert response.status_code == 200
    assert response.mimetype == "text/html"
    body = await response.get_data(as_text=True)
    assert "Ann Agent" in body
    assert "agent@example.com" in body
    assert "Free plan" in body
    assert "No live tokens" in body


async def test_creating_a_token_shows_it_once(client, agent):
    await sign_in(client, agent)

    response = await _create(client, "CI export", ("read", "write"))

    assert response.status_code == 200
    assert response.mimetype == "text/html"
    body = await response.get_data(as_text=True)
    raw = RAW_TOKEN.search(body).group(1)
    assert "won't be shown again" in body
    assert 'data-copy="#new-token"' in body
    assert "no-store" in response.headers["Cache-Control"]
    page = await (await client.get("/app/account")).get_data(as_text=True)
    assert raw not in page
    assert "CI export" in page


async def test_created_token_works_on_the_api(client, api, agent):
    await sign_in(client, agent)
    raw = RAW_TOKEN.search(await (await _create(client)).get_data(as_text=True)).group(1)

    response = await api.get("/users/me", raw)

    assert response.status_code == 200


async def test_created_token_carries_only_the_chosen_scopes(client, agent):
    await sign_in(client, agent)

    await _create(client, "reader", ("read",))

    token = await AccessToken.get(user_id=agent.id)
    assert token.scopes == "read"
    assert token.name == "reader"


async def test_creating_with_htmx_answers_the_tokens_fragment(client, agent):
    await sign_in(client, agent)

    response = await _create(client, headers=HTMX)

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert "<html" not in body
    assert body.lstrip().startswith('<section id="tokens"')
    assert RAW_TOKEN.search(body)


async def test_a_token_needs_at_least_one_scope(client, agent):
    await sign_in(client, agent)

    response = await _create(client, "nothing", ())

    assert response.status_code == 422
    assert "Choose at least one scope." in await response.get_data(as_text=True)
    assert not await AccessToken.filter(user_id=agent.id).exists()


async def test_an_unknown_scope_is_refused(client, agent):
    await sign_in(client, agent)

    response = await _create(client, "admin", ("admin",))

    assert response.status_code == 422
    assert not await AccessToken.filter(user_id=agent.id).exists()


async def test_a_token_needs_a_name_and_keeps_the_chosen_scopes(client, agent):
    await sign_in(client, agent)

    response = await _create(client, "", ("write",))

    body = await response.get_data(as_text=True)
    assert response.status_code == 422
    assert "Give the token a name." in body
    assert re.search(r'value="write"[^>]*checked|checked[^>]*value="write"', body)


async def test_the_list_shows_never_for_an_unused_token_and_the_last_use(client, api, agent):
    await sign_in(client, agent)
    used = await make_token(agent, "read", name="used")
    await make_token(agent, "read", name="unused")
    await api.get("/users/me", used)

    body = await (await client.get("/app/account")).get_data(as_text=True)

    rows = {
        name: row
        for row, name in re.findall(r'(<tr id="token-\d+"[^>]*>.*?<td[^>]*>(\w+)</td>.*?</tr>)', body, re.S)
    }
    assert "never" in rows["unused"]
    assert "never" not in rows["used"]
    assert "UTC" in rows["used"]


async def test_revoking_a_token_stops_it_on_the_api_at_once(client, api, agent):
    await sign_in(client, agent)
    raw = await make_token(agent, name="old")
    token = await AccessToken.get(user_id=agent.id)
    assert (await api.get("/users/me", raw)).status_code == 200

    response = await _revoke(client, token.id)

    assert response.status_code == 303
    assert response.headers["Location"].startswith("/app/account")
    assert (await api.get("/users/me", raw)).status_code == 401
    assert "old" not in await (await client.get("/app/account")).get_data(as_text=True)


async def test_revoking_with_htmx_answers_the_list_without_the_row(client, agent):
    await sign_in(client, agent)
    await make_token(agent, name="keep")
    await make_token(agent, name="drop")
    drop = await AccessToken.get(name="drop")

    response = await _revoke(client, drop.id, HTMX)

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="token-list"')
    assert f'id="token-{drop.id}"' not in body
    assert "keep" in body


async def test_a_second_agent_does_not_see_the_first_agents_tokens(app, client, agent):
    await make_token(agent, name="ann-secret-token")
    other = app.test_client()
    await sign_in(other, await make_user(email="bob@example.com", name="Bob"))

    body = await (await other.get("/app/account")).get_data(as_text=True)

    assert "ann-secret-token" not in body
    assert "No live tokens" in body


async def test_a_second_agent_cannot_revoke_the_first_agents_token(app, api, agent):
    raw = await make_token(agent, name="ann")
    token = await AccessToken.get(user_id=agent.id)
    other = app.test_client()
    await sign_in(other, await make_user(email="bob@example.com", name="Bob"))

    response = await _revoke(other, token.id)

    assert response.status_code == 404
    assert "Invalid token" in await response.get_data(as_text=True)
    assert (await api.get("/users/me", raw)).status_code == 200


async def test_creating_a_token_without_csrf_token_is_refused(client, agent):
    await sign_in(client, agent)

    response = await client.post("/app/account/tokens", form={"name": "x", "scopes": "read"})

    assert response.status_code == 400
    assert not await AccessToken.filter(user_id=agent.id).exists()


async def test_revoking_needs_a_session(client, agent):
    await make_token(agent, name="ann")
    token = await AccessToken.get(user_id=agent.id)

    response = await client.post(f"/app/account/tokens/{token.id}/revoke", form={})

    assert response.status_code in (302, 400)
    assert (await AccessToken.get(id=token.id)).revoked_at is None
