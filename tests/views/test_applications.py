"""Applications admin pages: list, create, settings and edit, key rotation, the widget snippet."""

from __future__ import annotations

import re
from io import BytesIO

import pytest
from werkzeug.datastructures import FileStorage

from app.models import Application
from tests.conftest import BASE_URL, INTAKE_DOMAIN
from tests.factories import (
    application_row,
    body_text,
    make_application,
    make_organization,
    make_thread,
    make_user,
    sign_in,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def fields(csrf: str, **overrides: str) -> dict[str, str]:
    form = {
        "csrf_token": csrf,
        "name": "Acme Mobile",
        "url": "https://acme.example",
        "organization": "",
        "uploads_enabled": "y",
        "capture_enabled": "y",
        "target_value": "2",
        "target_unit": "hours",
    }
    form.update(overrides)
    return {name: value for name, value in form.items() if value is not None}


def input_tag(body: str, name: str) -> str:
    return re.search(rf'<input[^>]* name="{name}"[^>]*>', body).group(0)


def logo_file(content: bytes = PNG, name: str = "logo.png") -> dict[str, FileStorage]:
    return {"logo": FileStorage(BytesIO(content), filename=name, content_type="image/png")}


@pytest.fixture
async def signed_in(client, agent) -> str:
    return await sign_in(client, agent)


@pytest.fixture
async def intruder(app):
    """A second agent, signed in on a client of their own; yields (client, csrf token)."""
    other = await make_user(email="mallory@example.com", name="Mallory")
    other_client = app.test_client()
    return other_client, await sign_in(other_client, other)


# --- list ------------------------------------------------------------------------------------------


async def test_list_shows_the_agents_applications_with_open_threads(client, agent, signed_in):
    application = await make_application(agent, name="Acme Web", url="https://acme.example")
    await make_thread(application)
    await make_thread(application)

    response = await client.get("/app/applications")

    assert response.status_code == 200
    assert response.mimetype == "text/html"
    body = await body_text(response)
    assert "Acme Web" in body
    assert "https://acme.example" in body
    assert re.search(r'app-card__count--open">2<', body)
    assert f'href="/app/applications/{application.id}/feedback"' in body
    assert f'href="/app/applications/{application.id}/stats"' in body
    assert f'href="/app/applications/{application.id}"' in body


async def test_list_shows_organization_applications_but_not_other_tenants(client, agent, signed_in):
    colleague, stranger = await make_user(), await make_user()
    organization = await make_organization(colleague, agent, name="Acme Team")
    await make_application(colleague, name="Shared App", organization_id=organization.id)
    await make_application(stranger, name="Secret App")

    body = await body_text(await client.get("/app/applications"))

    assert "Shared App" in body
    assert "Acme Team" in body
    assert "Secret App" not in body


async def test_list_without_applications_invites_to_create_the_first(client, signed_in):
    body = await body_text(await client.get("/app/applications"))

    assert "No applications yet" in body
    assert 'href="/app/applications/new"' in body


async def test_list_requires_sign_in(client):
    response = await client.get("/app/applications")

    assert response.status_code == 302
    assert response.headers["Location"].startswith("/app/login")


async def test_application_names_are_escaped(client, agent, signed_in):
    application = await make_application(agent, name="<script>alert(1)</script>")

    for path in ("/app/applications", f"/app/applications/{application.id}"):
        body = await body_text(await client.get(path))
        assert "<script>alert(1)</script>" not in body
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


# --- create ----------------------------------------------------------------------------------------


async def test_new_application_form_offers_the_agents_organizations(client, agent, signed_in):
    organization = await make_organization(agent, name="Acme Team")
    await make_organization(await make_user(), name="Other Team")

    response = await client.get("/app/applications/new")

    assert response.status_code == 200
    body = await body_text(response)
    assert f'<option value="{organization.id}">Acme Team</option>' in body
    assert "Other Team" not in body
    assert 'enctype="multipart/form-data"' in body
    assert 'name="csrf_token"' in body


async def test_new_application_form_offers_only_the_organizations_the_agent_owns(client, agent, signed_in):
    owned = await make_organization(agent, name="Owned Team")
    await make_organization(await make_user(), agent, name="Worked Team")

    body = await body_text(await client.get("/app/applications/new"))

    assert f'<option value="{owned.id}">Owned Team</option>' in body
    assert "Worked Team" not in body


async def test_create_refuses_an_organization_where_the_agent_is_an_agent(client, agent, signed_in):
    organization = await make_organization(await make_user(), agent, name="Worked Team")

    response = await client.post(
        "/app/applications/new", form=fields(signed_in, organization=str(organization.id))
    )

    assert response.status_code == 422
    assert await Application.all().count() == 0


async def test_create_application_stores_the_fields_and_redirects_to_it(client, agent, signed_in):
    organization = await make_organization(agent, name="Acme Team")
    form = fields(signed_in, organization=str(organization.id), target_value="90", target_unit="minutes")
    del form["uploads_enabled"]

    response = await client.post("/app/applications/new", form=form)

    assert response.status_code == 303
    application = await Application.get(name="Acme Mobile")
    assert response.headers["Location"] == f"/app/applications/{application.id}"
    assert application.owner_id == agent.id
    assert application.url == "https://acme.example"
    assert application.organization_id == organization.id
    assert application.uploads_enabled is False
    assert application.target_average_first_reply_time == 90 * 60
    assert application.logo_name is None
    assert "Acme Mobile is ready" in await body_text(await client.get(response.headers["Location"]))


async def test_create_application_with_a_logo(client, agent, signed_in, settings):
    response = await client.post("/app/applications/new", form=fields(signed_in), files=logo_file())

    assert response.status_code == 303
    application = await Application.get(name="Acme Mobile")
    assert application.logo_name and application.logo_name.endswith(".png")
    assert (settings.data_dir / "logos" / str(application.id) / application.logo_name).read_bytes() == PNG
    page = await body_text(await client.get(f"/app/applications/{application.id}"))
    assert f'src="/files/logos/{application.id}/{application.logo_name}"' in page


async def test_create_with_a_missing_name_shows_the_form_again_with_the_input(client, signed_in):
    response = await client.post("/app/applications/new", form=fields(signed_in, name=""))

    assert response.status_code == 422
    assert response.mimetype == "text/html"
    body = await body_text(response)
    assert "Enter a name." in body
    assert 'value="https://acme.example"' in body
    assert 'aria-invalid="true"' in body
    assert await Application.all().count() == 0


async def test_create_shows_the_services_error_in_the_form(client, signed_in):
    response = await client.post("/app/applications/new", form=fields(signed_in, url="ftp://acme.example"))

    assert response.status_code == 422
    body = await body_text(response)
    assert "The url field must be a valid URL." in body
    assert 'value="Acme Mobile"' in body
    assert await Application.all().count() == 0


async def test_create_refuses_a_logo_that_is_not_an_image(client, signed_in):
    response = await client.post(
        "/app/applications/new",
        form=fields(signed_in),
        files=logo_file(b"<svg onload=alert(1)>", "logo.png"),
    )

    assert response.status_code == 422
    assert "The logo field must be an image" in await body_text(response)
    assert await Application.all().count() == 0


async def test_create_refuses_an_organization_the_agent_is_not_in(client, signed_in):
    organization = await make_organization(await make_user(), name="Other Team")

    response = await client.post(
        "/app/applications/new", form=fields(signed_in, organization=str(organization.id))
    )

    assert response.status_code == 422
    assert await Application.all().count() == 0


async def test_create_without_csrf_token_is_refused(client, signed_in):
    form = fields(signed_in)
    del form["csrf_token"]

    response = await client.post("/app/applications/new", form=form)

    assert response.status_code == 400
    assert await Application.all().count() == 0


# --- settings and edit -----------------------------------------------------------------------------


async def test_settings_show_keys_intake_address_and_copy_buttons(client, application, signed_in):
    response = await client.get(f"/app/applications/{application.id}")

    assert response.status_code == 200
    body = await body_text(response)
    for platform in ("javascript", "ios", "android", "api"):
        key = getattr(application, f"key_{platform}")
        assert f'id="key-{platform}-value" type="text" class="mono" readonly value="{key}"' in body
        assert f'data-copy="#key-{platform}-value"' in body
        assert f'/app/applications/{application.id}/keys/{platform}/rotate"' in body
    intake = f"feedback-{application.id}-{application.intake_token}@{INTAKE_DOMAIN}"
    assert f'value="{intake}"' in body
    assert 'data-copy="#intake-address"' in body


async def test_settings_show_the_widget_snippet_with_the_javascript_key(client, application, signed_in):
    body = await body_text(await client.get(f"/app/applications/{application.id}"))

    snippet = (
        f"&lt;script src=&#34;{BASE_URL}/widget.js&#34; data-app=&#34;{application.id}&#34; "
        f"data-key=&#34;{application.key_javascript}&#34; data-uploads=&#34;true&#34; "
        "async&gt;&lt;/script&gt;"
    )
    assert f'<pre><code id="widget-snippet-code">{snippet}</code></pre>' in body
    assert 'data-copy="#widget-snippet-code"' in body


async def test_widget_snippet_leaves_uploads_off_when_the_application_refuses_them(client, agent, signed_in):
    application = await make_application(agent, uploads_enabled="false")

    body = await body_text(await client.get(f"/app/applications/{application.id}"))

    assert "data-uploads" not in body


async def test_settings_form_is_filled_with_the_application(client, agent, signed_in):
    application = await make_application(
        agent,
        name="Acme Web",
        url="https://acme.example",
        target_average_first_reply_time=5400,
        uploads_enabled="false",
    )

    body = await body_text(await client.get(f"/app/applications/{application.id}"))

    assert 'value="Acme Web"' in body
    assert 'value="https://acme.example"' in body
    assert 'value="90"' in input_tag(body, "target_value")
    assert '<option selected value="minutes">' in body
    assert "checked" not in input_tag(body, "uploads_enabled")


async def test_edit_saves_and_redirects_to_the_settings(client, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}", form=fields(signed_in, name="Renamed", target_value="3")
    )

    assert response.status_code == 303
    assert response.headers["Location"] == f"/app/applications/{application.id}"
    application = await application_row(application.id)
    assert application.name == "Renamed"
    assert application.target_average_first_reply_time == 3 * 3600
    assert "Changes saved." in await body_text(await client.get(response.headers["Location"]))


async def test_settings_offer_only_owned_organizations_to_move_the_application_to(client, agent, signed_in):
    owned = await make_organization(agent, name="Owned Team")
    await make_organization(await make_user(), agent, name="Worked Team")
    application = await make_application(agent, organization_id=owned.id)

    body = await body_text(await client.get(f"/app/applications/{application.id}"))

    select = re.search(r'<select[^>]* name="organization"[^>]*>.*?</select>', body, re.S).group(0)
    assert f'<option selected value="{owned.id}">Owned Team</option>' in select
    assert '<option value="">None (only you)</option>' in select
    assert "Worked Team" not in select
    assert "disabled" not in select


async def test_settings_lock_the_organization_of_an_agent(client, agent, signed_in):
    owner = await make_user()
    organization = await make_organization(owner, agent, name="Worked Team")
    await make_organization(agent, name="Owned Team")
    application = await make_application(owner, organization_id=organization.id)

    body = await body_text(await client.get(f"/app/applications/{application.id}"))

    select = re.search(r'<select[^>]* name="organization"[^>]*>.*?</select>', body, re.S).group(0)
    assert "disabled" in select
    assert re.findall(r"<option[^>]*>([^<]*)</option>", select) == ["Worked Team"]
    assert "Only an owner of the organization can move this application out of it." in body


async def test_an_agent_saves_the_settings_of_the_organizations_application(client, agent, signed_in):
    owner = await make_user()
    organization = await make_organization(owner, agent)
    application = await make_application(owner, organization_id=organization.id)
    form = fields(signed_in, name="Renamed")
    del form["organization"]  # the locked select is disabled, so the browser does not send it

    response = await client.post(f"/app/applications/{application.id}", form=form)

    assert response.status_code == 303
    application = await application_row(application.id)
    assert (application.name, application.organization_id) == ("Renamed", organization.id)


async def test_an_agent_cannot_move_the_organizations_application_out_with_the_form(client, agent, signed_in):
    owner = await make_user()
    organization = await make_organization(owner, agent)
    own = await make_organization(agent, name="Own Team")
    application = await make_application(owner, organization_id=organization.id, name="Shared")

    for target in ("", str(own.id)):
        response = await client.post(
            f"/app/applications/{application.id}", form=fields(signed_in, name="Taken", organization=target)
        )

        assert response.status_code == 422
        application = await application_row(application.id)
        assert (application.name, application.organization_id) == ("Shared", organization.id)


async def test_edit_with_htmx_answers_the_form_and_the_header(client, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}",
        form=fields(signed_in, name="Renamed"),
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 200
    body = await body_text(response)
    assert "<html" not in body
    assert 'id="application-form"' in body
    assert "Changes saved." in body
    assert 'hx-swap-oob="true" id="app-header-slot"' in body
    assert "<h1>Renamed</h1>" in body


async def test_edit_with_htmx_and_errors_answers_the_form_with_422(client, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}",
        form=fields(signed_in, name="", url="https://kept.example"),
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 422
    body = await body_text(response)
    assert "<html" not in body
    assert "Enter a name." in body
    assert 'value="https://kept.example"' in body
    application = await application_row(application.id)
    assert application.url is None


async def test_edit_replaces_the_logo(client, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}", form=fields(signed_in), files=logo_file()
    )

    assert response.status_code == 303
    application = await application_row(application.id)
    assert application.logo_name and application.logo_name.endswith(".png")


# --- keys ------------------------------------------------------------------------------------------


async def test_rotating_a_key_changes_it_and_the_old_key_stops_working(client, application, signed_in):
    old = application.key_ios
    assert (await client.post(f"/applications/{application.id}/open?key={old}")).status_code == 201

    response = await client.post(
        f"/app/applications/{application.id}/keys/ios/rotate", form={"csrf_token": signed_in}
    )

    assert response.status_code == 303
    assert response.headers["Location"] == f"/app/applications/{application.id}#keys"
    application = await application_row(application.id)
    assert application.key_ios != old
    assert (await client.post(f"/applications/{application.id}/open?key={old}")).status_code == 403
    new = await client.post(f"/applications/{application.id}/open?key={application.key_ios}")
    assert new.status_code == 201
    page = await body_text(await client.get(f"/app/applications/{application.id}"))
    assert "New iOS key. The old one no longer works." in page
    assert application.key_ios in page


async def test_rotating_with_htmx_answers_the_key_row(client, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}/keys/android/rotate",
        form={"csrf_token": signed_in},
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 200
    body = await body_text(response)
    application = await application_row(application.id)
    assert '<div class="key-row" id="key-android">' in body
    assert f'value="{application.key_android}"' in body
    assert "widget-snippet" not in body


async def test_rotating_the_javascript_key_with_htmx_updates_the_snippet(client, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}/keys/javascript/rotate",
        form={"csrf_token": signed_in},
        headers={"HX-Request": "true"},
    )

    body = await body_text(response)
    application = await application_row(application.id)
    assert 'hx-swap-oob="true" id="widget-snippet-slot"' in body
    assert f"data-key=&#34;{application.key_javascript}&#34;" in body


async def test_rotating_an_unknown_platform_is_404(client, application, signed_in):
    response = await client.post(
        f"/app/applications/{application.id}/keys/email/rotate", form={"csrf_token": signed_in}
    )

    assert response.status_code == 404


# --- tenancy ---------------------------------------------------------------------------------------


async def test_another_agent_gets_404_on_the_settings(application, intruder):
    other_client, _ = intruder

    response = await other_client.get(f"/app/applications/{application.id}")

    assert response.status_code == 404
    assert application.key_javascript not in await body_text(response)


async def test_another_agent_gets_404_on_edit_and_nothing_changes(application, intruder):
    other_client, csrf = intruder

    response = await other_client.post(f"/app/applications/{application.id}", form=fields(csrf, name="Pwned"))

    assert response.status_code == 404
    application = await application_row(application.id)
    assert application.name != "Pwned"


async def test_another_agent_gets_404_on_rotate_and_the_key_stays(application, intruder):
    other_client, csrf = intruder
    key = application.key_api

    response = await other_client.post(
        f"/app/applications/{application.id}/keys/api/rotate", form={"csrf_token": csrf}
    )

    assert response.status_code == 404
    application = await application_row(application.id)
    assert application.key_api == key


async def test_another_agent_gets_404_on_the_statistics(application, intruder):
    other_client, _ = intruder

    response = await other_client.get(f"/app/applications/{application.id}/stats")

    assert response.status_code == 404


async def test_another_agent_does_not_see_the_application_in_the_list(application, intruder):
    other_client, _ = intruder

    body = await body_text(await other_client.get("/app/applications"))

    assert application.name not in body
    assert "No applications yet" in body


async def test_every_page_of_an_application_has_the_same_header(client, signed_in, application):
    thread = await make_thread(application)
    base = f"/app/applications/{application.id}"
    pages = {
        f"{base}/feedback": "Inbox",
        f"{base}/feedback/{thread.id}": "Inbox",
        f"{base}/stats": "Statistics",
        base: "Settings",
        f"{base}/demo": "Widget demo",
    }

    for path, tab in pages.items():
        response = await client.get(path)
        body = await response.get_data(as_text=True)
        header = re.search(r'<div class="app-header".*?</nav>\s*</div>', body, re.S)

        assert response.status_code == 200, path
        assert header is not None, path
        assert 'class="crumbs"' in header.group(0) and "app-logo" in header.group(0), path
        assert re.search(rf'aria-current="page">{tab}</a>', header.group(0)), path
