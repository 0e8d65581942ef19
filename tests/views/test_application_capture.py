"""The capture controls on the application settings page: switch, rate limits, allowed origins."""

from __future__ import annotations

from tests.factories import body_text, make_application
from tests.views.test_applications import application_row, fields, input_tag, intruder, signed_in

__all__ = ["intruder", "signed_in"]  # fixtures used by the tests below


async def test_the_settings_show_the_capture_controls_of_the_application(client, agent, signed_in):
    application = await make_application(
        agent, capture_enabled="false", submits_per_minute=7, allowed_origins="https://shop.example.com"
    )

    body = await body_text(await client.get(f"/app/applications/{application.id}"))

    assert "checked" not in input_tag(body, "capture_enabled")
    assert 'value="7"' in input_tag(body, "submits_per_minute")
    assert 'value=""' in input_tag(body, "opens_per_minute")
    assert "https://shop.example.com</textarea>" in body


async def test_saving_the_capture_controls(client, application, signed_in):
    form = fields(
        signed_in,
        capture_enabled=None,
        submits_per_minute="5",
        uploads_per_minute="2",
        submits_per_minute_total="300",
        allowed_origins="https://shop.example.com\r\nhttp://localhost:3000",
    )

    response = await client.post(f"/app/applications/{application.id}", form=form)

    assert response.status_code == 303
    saved = await application_row(application.id)
    assert saved.capture_enabled is False
    assert (saved.submits_per_minute, saved.opens_per_minute, saved.uploads_per_minute) == (5, None, 2)
    assert saved.submits_per_minute_total == 300
    assert saved.allowed_origins == ("https://shop.example.com", "http://localhost:3000")


async def test_emptying_a_limit_goes_back_to_the_default(client, agent, signed_in):
    application = await make_application(agent, opens_per_minute=9)

    await client.post(f"/app/applications/{application.id}", form=fields(signed_in, opens_per_minute=""))

    assert (await application_row(application.id)).opens_per_minute is None


async def test_a_limit_out_of_range_shows_the_form_again_and_saves_nothing(client, application, signed_in):
    form = fields(signed_in, name="Renamed", submits_per_minute="0")

    response = await client.post(f"/app/applications/{application.id}", form=form)

    assert response.status_code == 422
    assert "Enter a number from 1 to 1000000." in await body_text(response)
    assert (await application_row(application.id)).name == application.name


async def test_an_origin_with_a_path_is_refused_with_the_services_message(client, application, signed_in):
    form = fields(signed_in, name="Renamed", allowed_origins="https://shop.example.com/cart")

    response = await client.post(f"/app/applications/{application.id}", form=form)

    assert response.status_code == 422
    assert "must hold origins such as https://shop.example.com" in await body_text(response)
    saved = await application_row(application.id)
    assert (saved.name, saved.allowed_origins) == (application.name, ())


async def test_another_agent_cannot_see_or_change_the_capture_controls(application, intruder):
    other_client, csrf = intruder

    assert (await other_client.get(f"/app/applications/{application.id}")).status_code == 404
    response = await other_client.post(
        f"/app/applications/{application.id}", form=fields(csrf, capture_enabled=None, submits_per_minute="1")
    )

    assert response.status_code == 404
    saved = await application_row(application.id)
    assert (saved.capture_enabled, saved.submits_per_minute) == (True, None)
