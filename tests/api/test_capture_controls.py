"""The capture switch and the allowed origins of the javascript key, set through the management API."""

from __future__ import annotations

import pytest

from app.models import PLATFORMS
from tests.api.test_capture import VALID, capture_path
from tests.factories import Api, body_json, body_text, make_application, make_token, make_user

SHOP = "https://shop.example.com"


async def _update(api: Api, token: str, application_id: int, **json: object) -> dict[str, object]:
    response = await api.put(f"/applications/{application_id}", token, json=json)
    assert response.status_code == 200, await body_text(response)
    data: dict[str, object] = (await body_json(response))["data"]
    return data


async def test_new_applications_take_every_capture_request_with_default_limits(api, token, application):
    data = (await body_json(await api.get(f"/applications/{application.id}", token)))["data"]
    assert data["capture_enabled"] is True
    assert data["allowed_origins"] == []
    assert [data[name] for name in ("submits_per_minute", "opens_per_minute", "uploads_per_minute")] == [
        None,
        None,
        None,
    ]
    assert data["submits_per_minute_total"] is None


async def test_settings_round_trip_through_the_management_api(api, token, application):
    data = await _update(
        api,
        token,
        application.id,
        capture_enabled=False,
        submits_per_minute=3,
        opens_per_minute="40",
        uploads_per_minute=5,
        submits_per_minute_total=100,
        allowed_origins=["HTTPS://Shop.Example.com/", "http://localhost:3000"],
    )
    assert data["capture_enabled"] is False
    assert (data["submits_per_minute"], data["opens_per_minute"], data["uploads_per_minute"]) == (3, 40, 5)
    assert data["submits_per_minute_total"] == 100
    assert data["allowed_origins"] == [SHOP, "http://localhost:3000"]
    data = await _update(api, token, application.id, submits_per_minute=None, allowed_origins="")
    assert data["submits_per_minute"] is None
    assert data["allowed_origins"] == []
    assert data["opens_per_minute"] == 40  # not sent, kept


async def test_a_form_sends_origins_one_per_line(api, token):
    response = await api.post(
        "/applications", token, form={"name": "Shop", "allowed_origins": f"{SHOP}\r\nhttps://b.example"}
    )
    assert (await body_json(response))["data"]["allowed_origins"] == [SHOP, "https://b.example"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("capture_enabled", "maybe", "The capture enabled field must be true or false."),
        ("submits_per_minute", "ten", "The submits per minute field must be an integer."),
        ("opens_per_minute", 0, "The opens per minute field must be between 1 and 1000000."),
        ("uploads_per_minute", 10**9, "The uploads per minute field must be between 1 and 1000000."),
        ("submits_per_minute_total", -1, "The submits per minute total field must be between 1 and 1000000."),
        ("allowed_origins", ["https://shop.example.com/cart"], "must hold origins such as"),
        ("allowed_origins", ["ftp://shop.example.com"], "must hold origins such as"),
        ("allowed_origins", {"a": 1}, "The allowed origins field must be a list of origins."),
        ("allowed_origins", [f"https://{n}.example" for n in range(51)], "not have more than 50 items"),
    ],
)
async def test_bad_settings_are_refused_and_write_nothing(api, token, application, field, value, message):
    response = await api.put(f"/applications/{application.id}", token, json={"name": "Renamed", field: value})
    assert response.status_code == 400
    assert message in await body_text(response)
    data = (await body_json(await api.get(f"/applications/{application.id}", token)))["data"]
    assert data["name"] == application.name
    assert data["capture_enabled"] is True


async def test_another_user_can_neither_read_nor_change_the_settings(api, application):
    stranger = await make_token(await make_user())
    assert (await api.get(f"/applications/{application.id}", stranger)).status_code == 404
    response = await api.put(f"/applications/{application.id}", stranger, json={"capture_enabled": False})
    assert response.status_code == 404
    assert await body_text(response) == "Invalid application"
    response = await api.post(capture_path(application.id, "submit", application.key_api), json=VALID)
    assert response.status_code == 201


@pytest.mark.parametrize("action", ["open", "upload", "submit"])
@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Capture disabled"),
        ("es", "La captura de comentarios está desactivada"),
        ("pt", "A captura de comentários está desativada"),
    ],
)
async def test_a_switched_off_application_refuses_every_capture_request(
    api, token, application, action, language, text
):
    await _update(api, token, application.id, capture_enabled=False)
    for platform in PLATFORMS:
        key = getattr(application, f"key_{platform}")
        response = await api.post(capture_path(application.id, action, key, language=language), json=VALID)
        assert response.status_code == 403
        assert await body_text(response) == text
        assert response.headers["Access-Control-Allow-Origin"] == "*"


async def test_a_wrong_key_is_still_not_authorized_when_capture_is_off(api, token, application):
    await _update(api, token, application.id, capture_enabled=False)
    response = await api.post(capture_path(application.id, "submit", "wrong"), json=VALID)
    assert await body_text(response) == "Not authorized"


async def test_switching_capture_back_on_takes_submits_again(api, token, application):
    await _update(api, token, application.id, capture_enabled=False)
    await _update(api, token, application.id, capture_enabled=True)
    response = await api.post(capture_path(application.id, "submit", application.key_api), json=VALID)
    assert response.status_code == 201


async def test_the_javascript_key_is_refused_from_an_origin_not_in_the_list(api, token, application):
    await _update(api, token, application.id, allowed_origins=[SHOP])
    path = capture_path(application.id, "submit", application.key_javascript, language="es")
    for headers in ({"Origin": "https://evil.example"}, {"Origin": "https://shop.example.com.evil"}, {}):
        response = await api.post(path, json=VALID, headers=headers)
        assert response.status_code == 403
        assert await body_text(response) == "Origen no permitido"
        assert response.headers["Access-Control-Allow-Origin"] == "*"


async def test_the_javascript_key_is_accepted_from_an_allowed_origin(api, token, application):
    await _update(api, token, application.id, allowed_origins=[SHOP, "http://localhost:3000"])
    for origin in (SHOP, "https://SHOP.example.com", "http://localhost:3000"):
        response = await api.post(
            capture_path(application.id, "submit", application.key_javascript),
            json=VALID,
            headers={"Origin": origin},
        )
        assert response.status_code == 201, origin


@pytest.mark.parametrize("platform", ["api", "ios", "android"])
async def test_the_other_keys_ignore_the_origin_list(api, token, application, platform):
    await _update(api, token, application.id, allowed_origins=[SHOP])
    key = getattr(application, f"key_{platform}")
    for headers in ({"Origin": "https://evil.example"}, {}):
        response = await api.post(capture_path(application.id, "submit", key), json=VALID, headers=headers)
        assert response.status_code == 201


async def test_an_empty_list_lets_any_origin_use_the_javascript_key(api, application):
    response = await api.post(
        capture_path(application.id, "submit", application.key_javascript),
        json=VALID,
        headers={"Origin": "https://anywhere.example"},
    )
    assert response.status_code == 201


async def test_an_application_made_with_controls_applies_them(db):
    owner = await make_user()
    made = await make_application(owner, capture_enabled="false", allowed_origins=SHOP)
    assert made.capture_enabled is False
    assert made.allowed_origins == (SHOP,)
